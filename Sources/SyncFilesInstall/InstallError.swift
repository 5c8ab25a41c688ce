import SyncFilesCore
import SyncFilesVerify

/// Why a partial file could not be made, written or installed (the Install
/// module's one error). Each case carries what a user acts on: the path,
/// and errno where a system call failed. `message` is for people only;
/// code decides on the case.
public enum InstallError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A system call failed: "`doing` `path``detail`: errno's text`consequence`".
  case system(doing: String, path: String, errno: Errno, detail: String = "", consequence: String = "")
  /// The destination is not a normalized path inside root.
  case notNormalized(relative: String)
  /// Something other than a regular file stands where one is needed.
  case notRegularFile(path: String, consequence: String)
  /// A folder on the way to the destination is a symlink or not a folder.
  case unsafeFolder(component: String, destination: String)
  /// The file being copied (same sha256) shrank while it was read.
  case sourceShrank(source: String)
  /// The partial file was removed, renamed or replaced by another process.
  case partialLost(destination: String, how: PartialLoss)

  public enum PartialLoss: String, Sendable, Hashable {
    case gone = "is gone"
    case moved = "was removed or renamed"
    case replaced = "was replaced (by a symlink or another file)"
  }

  public var message: String {
    switch self {
    case .system(let doing, let path, let e, let detail, let consequence):
      return "\(doing) \(path)\(detail): \(e.text)\(consequence)"
    case .notNormalized(let relative):
      return "destination '\(relative)' is not a normalized path inside root"
    case .notRegularFile(let path, let consequence):
      return "\(path) \(consequence)"
    case .unsafeFolder(let component, let destination):
      return "'\(component)' on the way to \(destination) is a symlink or not a folder; refusing to follow it"
    case .sourceShrank(let source):
      return "cannot read \(source) to copy it: it shrank"
    case .partialLost(let destination, let how):
      return "the partial file of \(destination) \(how.rawValue)"
    }
  }

  public var description: String { message }
}
