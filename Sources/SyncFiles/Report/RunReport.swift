import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
public enum TaskOutcome: String, Sendable, CaseIterable {
  case installed, unchanged, failed, waiting, interrupted, skipped
}

public struct TaskReport: Sendable {
  public var id: String
  public var url: String
  public var destination: String
  public var action: Action
  public var outcome: TaskOutcome
  public var bytesTransferred: Int64 = 0
  /// Of `bytesTransferred`: bytes that arrived and were thrown away (SPEC §9.1).
  public var bytesDiscarded: Int64 = 0
  public var resumedFrom: Int64 = 0
  public var httpStatus: Int? = nil
  public var error: String? = nil
  public var warnings: [String] = []
  /// Installed with content different from before (on_change ran).
  public var changed = false
  public var attempts = 0
  public var sha256: String? = nil
  public var hookError: String? = nil
  /// Installed from another task's verified bytes (the same sha256), with no transfer.
  public var copiedFrom: String? = nil
  /// How: `reflink` or `copy`.
  public var copyMethod: String? = nil
  /// Fetched as this many byte ranges at once (SPEC §8.3); nil: one stream.
  public var segments: Int? = nil
  /// Comparisons the bytes passed beyond size and `sha256` (an object
  /// store's checksum or MD5 ETag, SPEC §9.4).
  public var checks: [String] = []
  public var reason: String
}

public struct RunReport: Sendable {
  public var session: String
  public var started: Timestamp
  public var journal: String
  public var tasks: [TaskReport]
  /// Why the run stopped early ("deadline", "SIGTERM"), if it did.
  public var stopped: String?
  /// Seconds from the start of the apply (or of the run, without a clock from its caller).
  public var elapsed: Double
  /// How long each step took (`RunClock.steps`); they add up to `elapsed`.
  public var phases: [RunPhase] = []
  public var hookErrors: [String] = []
  public var journalError: String?
  /// Each prefix entry's listing and prunes (SPEC §9.4).
  public var prefixes: [PrefixOutcome] = []

  // By index: reading one field of a task's report does not copy the report
  // (through `filter` and `reduce` each pass retained and released its dozen
  // strings, in each of the text's seven passes, at the end of every run).
  public func count(_ o: TaskOutcome) -> Int {
    var n = 0
    for i in tasks.indices where tasks[i].outcome == o { n += 1 }
    return n
  }

  public var bytesTransferred: Int64 {
    var sum: Int64 = 0
    for i in tasks.indices { sum += tasks[i].bytesTransferred }
    return sum
  }

  public var bytesDiscarded: Int64 {
    var sum: Int64 = 0
    for i in tasks.indices { sum += tasks[i].bytesDiscarded }
    return sum
  }

  /// SPEC §3: stopped early with work left, else failed when a task, hook,
  /// prefix or the journal did, else success.
  public var exitStatus: ExitStatus {
    if stopped != nil && count(.interrupted) > 0 { return .stoppedEarly }
    if count(.failed) > 0 || !hookErrors.isEmpty || journalError != nil || prefixes.contains(where: { $0.error != nil })
    {
      return .failed
    }
    if stopped != nil { return .stoppedEarly }
    return .success
  }

  public var exitCode: Int32 { exitStatus.rawValue }
}
