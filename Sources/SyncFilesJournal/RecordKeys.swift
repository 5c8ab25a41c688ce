import SyncFilesCore
import SyncFilesManifest

/// The keys of a task record, each spelled once. The tree's writer and
/// reader (`TaskState.json`, `TaskState(json:)`), the byte writer
/// (`RecordBytes.swift`) and the byte reader (`RecordReading.swift`) name
/// them from here, and the writers write them in the order of the cases.
package enum RecordKey {
  /// The keys of the record itself, after `t` and `id`.
  package enum Task: Int, CaseIterable {
    case fingerprint, lastCheck, lastSuccess, outcome, error, bytes, httpStatus, installed, partial, failures
    case backoffUntil, onChangePending, onCompletePending, rolledBack

    package var name: StaticString {
      switch self {
      case .fingerprint: "fp"
      case .lastCheck: "last_check"
      case .lastSuccess: "last_success"
      case .outcome: "outcome"
      case .error: "error"
      case .bytes: "bytes"
      case .httpStatus: "http_status"
      case .installed: "installed"
      case .partial: "partial"
      case .failures: "failures"
      case .backoffUntil: "backoff_until"
      case .onChangePending: "on_change_pending"
      case .onCompletePending: "on_complete_pending"
      case .rolledBack: "rolled_back"
      }
    }
  }

  /// The keys of `installed`: `size` and `mtime_ns` always, first.
  package enum Installed: Int, CaseIterable {
    case size, mtimeNs, etag, lastModified, sha256, dateIsStrong

    package var name: StaticString {
      switch self {
      case .size: "size"
      case .mtimeNs: "mtime_ns"
      case .etag: "etag"
      case .lastModified: "last_modified"
      case .sha256: "sha256"
      case .dateIsStrong: "lm_strong"
      }
    }
  }

  /// The keys of `partial`: `path` and `offset` always, first. The byte
  /// writer writes none of the last three: a partial with ranges goes
  /// through the tree.
  package enum Partial: Int, CaseIterable {
    case path, offset, total, etag, lastModified, dateIsStrong, ranges, boot, durable

    package var name: StaticString {
      switch self {
      case .path: "path"
      case .offset: "offset"
      case .total: "total"
      case .etag: "etag"
      case .lastModified: "last_modified"
      case .dateIsStrong: "lm_strong"
      case .ranges: "ranges"
      case .boot: "boot"
      case .durable: "durable"
      }
    }
  }
}

extension RecordKey.Task {
  package var text: String { name.description }
}

extension RecordKey.Installed {
  package var text: String { name.description }
}

extension RecordKey.Partial {
  package var text: String { name.description }
}
