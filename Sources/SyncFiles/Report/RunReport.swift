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

  public func count(_ o: TaskOutcome) -> Int { tasks.lazy.filter { $0.outcome == o }.count }
  public var bytesTransferred: Int64 { tasks.reduce(0) { $0 + $1.bytesTransferred } }

  /// SPEC §3: 75 stopped early with work left, 1 a task (or hook) failed, 0 otherwise.
  public var exitCode: Int32 {
    if stopped != nil && count(.interrupted) > 0 { return 75 }
    if count(.failed) > 0 || !hookErrors.isEmpty || journalError != nil { return 1 }
    if stopped != nil { return 75 }
    return 0
  }
}
