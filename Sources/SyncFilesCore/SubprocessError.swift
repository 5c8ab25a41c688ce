/// Why a child process could not be started (hooks, plugins): the core's
/// one error. Code decides on the case; `message` is for people.
public enum SubprocessError: Error, Sendable, Hashable, CustomStringConvertible {
  /// `posix_spawnp` failed.
  case spawn(command: String, errno: Errno)
  /// Its pipes could not be made.
  case pipe(Errno)
  case emptyCommand

  public var message: String {
    switch self {
    case .spawn(let command, let e): return "cannot run \(command): \(e.text)"
    case .pipe(let e): return "cannot create a pipe: \(e.text)"
    case .emptyCommand: return "empty command"
    }
  }

  public var description: String { message }
}
