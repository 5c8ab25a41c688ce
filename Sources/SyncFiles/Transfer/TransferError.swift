import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// Why a try failed (the Transfer module's one error). The runner decides on
/// the case and on `isRetryable`, never on `message`, which is for people.
public enum TransferError: Error, Sendable, Hashable, CustomStringConvertible {
  /// libcurl's failure (connection, name lookup, TLS, timeouts): its
  /// CURLcode, our words for it, and whether another try may help.
  case network(code: Int, message: String, retryable: Bool)
  /// The server's answer cannot be used as it stands (a redirect refused, an
  /// unexpected status, an encoded body, a range transfer cut short).
  case unusableAnswer(String, retryable: Bool)
  /// More than `max_bytes`: announced by the server, or arrived.
  case tooLarge(limit: Int64, announced: Int64?)
  /// The partial file could not be made, written or read back (path and errno within).
  case partialFile(InstallError)
  /// The partial could not be read back to hash it.
  case readBack(path: String, errno: Errno)
  /// libcurl could not start the transfer.
  case engine(String)
  /// A source plugin failed (see `PluginError`).
  case plugin(PluginError)

  public var isRetryable: Bool {
    switch self {
    case .network(_, _, let r), .unusableAnswer(_, let r): return r
    case .plugin(let p): return p.isRetryable
    case .tooLarge, .partialFile, .readBack, .engine: return false
    }
  }

  public var message: String {
    switch self {
    case .network(_, let m, _), .unusableAnswer(let m, _), .engine(let m): return m
    case .tooLarge(let limit, let announced?):
      return
        "the server announces \(ByteSize.format(announced)), more than max_bytes \(ByteSize.format(limit)); nothing installed"
    case .tooLarge(let limit, nil):
      return "more than max_bytes \(ByteSize.format(limit)) arrived; aborted, nothing installed"
    case .partialFile(let e): return e.message
    case .readBack(let path, let e): return "the partial file of \(path) could not be read back to hash it: \(e.text)"
    case .plugin(let p): return p.message
    }
  }

  public var description: String { message }
}
