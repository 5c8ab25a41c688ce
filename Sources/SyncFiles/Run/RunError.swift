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

  public var message: String {
    switch self {
    case .noSourcePlugin(let scheme, let executable):
      return
        "no plugin serves '\(scheme):' URLs: looked for an executable '\(executable)' in SYNCFILES_PLUGIN_PATH and PATH"
    case .sourceCouldNotStart(let scheme): return "the \(scheme): source could not start"
    case .destinationNotAFile(let path): return "\(path) exists and is not a regular file; refusing to replace it"
    case .install(let e): return e.message
    }
  }

  public var description: String { message }
}
