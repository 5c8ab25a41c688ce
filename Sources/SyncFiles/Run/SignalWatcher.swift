import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// SIGINT and SIGTERM, turned into a call on a thread of their own. Call
/// `block()` first thing in `main`, before any thread starts, so every
/// thread inherits the mask and only the watcher receives them.
public enum SignalWatcher {
  public static func block() {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    pthread_sigmask(SIG_BLOCK, &set, nil)
  }

  /// Calls `handler` with the signal's name for each SIGINT/SIGTERM.
  public static func watch(_ handler: @escaping @Sendable (String) -> Void) {
    startThread {
      var set = sigset_t()
      sigemptyset(&set)
      sigaddset(&set, SIGINT)
      sigaddset(&set, SIGTERM)
      while true {
        var sig: Int32 = 0
        guard sigwait(&set, &sig) == 0 else { continue }
        handler(sig == SIGINT ? "SIGINT" : "SIGTERM")
      }
    }
  }
}
