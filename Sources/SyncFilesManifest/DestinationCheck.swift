internal import CLinux
import SyncFilesCore

/// The session's destination check (`ManifestLoader.destinationConflicts`)
/// on a thread of its own, for a command that gathers facts and plans
/// before it shows anything (`plan`): the two only read the manifests, and
/// the check's errors are still reported before any output, and the
/// planning does not wait for the check.
public final class DestinationCheck: Sendable {
  private let check: Background<[Diagnostic]>

  /// Starts checking `set` at once.
  public init(_ set: ManifestSet) {
    check = Background {
      let found = ManifestLoader.destinationConflicts(set)
      // The check's tables are freed: their pages go back now, on this
      // thread, while the plan beside it grows, and stay out of the peak.
      sf_release_free_memory()
      return found
    }
  }

  /// Waits for the check and returns its errors (none: the session is sound).
  public func wait() -> [Diagnostic] { check.wait() }
}
