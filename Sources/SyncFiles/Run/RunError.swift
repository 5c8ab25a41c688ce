import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// Why the runner could not start a task's try (the Run module's one error). Code decides on the case; `message` is for people.
public enum RunError: Error, Sendable, Hashable, CustomStringConvertible {
  /// No plugin serves the URL's scheme.
  case noSourcePlugin(scheme: String, executable: String)
  /// The source plugin could not make a transport.
  case sourceCouldNotStart(scheme: String)
  /// Something other than a regular file (or symlink) stands at the destination.
  case destinationNotAFile(path: String)
  /// The partial held since an earlier run could not be reopened.
  case install(InstallError)
  /// `rollback` of a task with no kept version, or fewer than asked for.
  case noKeptVersion(id: String, kept: Int, asked: Int, keepVersions: Int)
  /// `rollback --release` of a task that is not rolled back.
  case notRolledBack(id: String)

  public var message: String {
    switch self {
    case .noSourcePlugin(let scheme, let executable):
      return
        "no plugin serves '\(scheme):' URLs: looked for an executable '\(executable)' in SYNCFILES_PLUGIN_PATH and PATH"
    case .sourceCouldNotStart(let scheme): return "the \(scheme): source could not start"
    case .destinationNotAFile(let path): return "\(path) exists and is not a regular file; refusing to replace it"
    case .install(let e): return e.message
    case .noKeptVersion(let id, 0, _, let keep):
      return "no version of \(id) is kept (keep_versions: \(keep)); set keep_versions to keep the versions it replaces"
    case .noKeptVersion(let id, let kept, let asked, _):
      return "\(id) has \(kept) kept version\(kept == 1 ? "" : "s"); --to \(asked) asks for more"
    case .notRolledBack(let id): return "\(id) is not rolled back; nothing to release"
    }
  }

  public var description: String { message }
}
