import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// Why a source plugin's fetch failed (the Plugins module's one error).
/// Code decides on the case and `isRetryable`; `message` is for people and
/// always starts with the plugin's executable name.
public enum PluginError: Error, Sendable, Hashable, CustomStringConvertible {
  /// It could not be run (`detail`: ": what it printed", or nothing).
  case couldNotStart(plugin: String, detail: String)
  /// It overstayed its time or made no progress, and was stopped.
  case stopped(plugin: String, how: String, detail: String)
  /// It ended without a result line: crashed, or exited non-zero.
  case ended(plugin: String, how: String, detail: String, retryable: Bool)
  /// It broke the protocol (`what`: how, in a user's words).
  case brokeProtocol(plugin: String, what: String, retryable: Bool)
  /// It reported `failed` itself, with its own words.
  case reported(plugin: String, why: String, retryable: Bool)
  /// The partial it wrote could not be read back to hash it.
  case unreadablePartial(path: String)

  public var isRetryable: Bool {
    switch self {
    case .couldNotStart: return false
    case .stopped, .unreadablePartial: return true
    case .ended(_, _, _, let r), .brokeProtocol(_, _, let r), .reported(_, _, let r): return r
    }
  }

  public var message: String {
    switch self {
    case .couldNotStart(let p, let detail): return "\(p) could not start\(detail)"
    case .stopped(let p, let how, let detail): return "\(p) \(how); stopped it\(detail)"
    case .ended(let p, let how, let detail, _): return "\(p) \(how) without a result\(detail)"
    case .brokeProtocol(let p, let what, _): return "\(p) \(what)"
    case .reported(let p, let why, _): return "\(p): \(why)"
    case .unreadablePartial(let path): return "cannot read back the partial file of \(path)"
    }
  }

  public var description: String { message }
}
