import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// How a command ends (SPEC §3): the one list of exit codes.
public enum ExitStatus: Int32, Sendable, CaseIterable {
  /// Done: every task is up to date, waiting or skipped.
  case success = 0
  /// A task, a hook, a prefix or the journal failed (`status --check`: a fault).
  case failed = 1
  /// A manifest or a command line is wrong; nothing was done.
  case usage = 2
  /// Another apply holds the journal's lock.
  case locked = 3
  /// Stopped early (deadline, SIGINT, SIGTERM) with work left: run again to continue.
  case stoppedEarly = 75
}
