import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// `syncfiles status --check` (SPEC §8.4): is every task healthy? Pure: the
/// journal, the plan and a clock in, the tasks at fault out.
public enum HealthCheck {
  public struct Fault: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
      /// The last run failed (the task may be in backoff).
      case failing
      /// The last run stopped before it ended (deadline or signal).
      case interrupted
      /// Due, but no apply has run it yet.
      case neverRun = "never_run"
      /// The next due time passed by more than the allowed lateness.
      case overdue
      /// A hook failed and is owed.
      case hookOwed = "hook_owed"
      /// The destination was installed and is gone since (deleted by hand).
      case destinationMissing = "destination_missing"
    }
    public var id: String
    public var kind: Kind
    public var message: String
    public var line: String { "\(id): \(kind.rawValue.replacingAll("_", with: " ")): \(message)" }
  }

  /// One task to check: its journal state and, with manifests, what the plan
  /// says of it (schedule, whether it is held).
  public struct Subject: Sendable {
    public var id: String
    public var state: TaskState?
    public var planned: PlannedTask?
    public init(id: String, state: TaskState?, planned: PlannedTask?) {
      self.id = id
      self.state = state
      self.planned = planned
    }
  }

  /// The subjects of a check: the plan's tasks, or without manifests every task the journal knows.
  public static func subjects(journal: [String: TaskState], plan: SessionPlan?) -> [Subject] {
    guard let plan else { return journal.keys.sorted().map { Subject(id: $0, state: journal[$0], planned: nil) } }
    return plan.tasks.map { Subject(id: $0.id, state: journal[$0.id], planned: $0) }
  }

  /// The faults of each subject, in order. `maxLate` replaces the schedule
  /// interval as the lateness allowed past the due time.
  public static func faults(_ subjects: [Subject], now: Timestamp, maxLate: TimeSpan?) -> [Fault] {
    subjects.flatMap { faults(of: $0, now: now, maxLate: maxLate) }
  }

  static func faults(of subject: Subject, now: Timestamp, maxLate: TimeSpan?) -> [Fault] {
    let id = subject.id
    guard let s = subject.state, s.lastOutcome != nil else {
      guard let t = subject.planned, t.runs else { return [] }
      return [Fault(id: id, kind: .neverRun, message: "due now, and no apply has run it yet")]
    }
    var out: [Fault] = []
    if s.lastOutcome == .failed || s.failures > 0 {
      out.append(Fault(id: id, kind: .failing, message: failingText(s)))
    } else if s.lastOutcome == .interrupted {
      let held = s.partial.map { ", \(ByteSize.format($0.offset)) held for a resume" } ?? ""
      out.append(
        Fault(id: id, kind: .interrupted, message: "the last run (\(when(s.lastCheck))) stopped before it ended\(held)")
      )
    }
    if s.changeHookPending || s.completeHookPending {
      let hook = s.changeHookPending ? "on_change" : "hooks.on_complete"
      out.append(Fault(id: id, kind: .hookOwed, message: "\(hook) failed and runs again on the next apply"))
    }
    if let t = subject.planned, t.destinationMissing, s.installed != nil {
      out.append(
        Fault(
          id: id, kind: .destinationMissing,
          message: "\(t.entry.destinationPath) was installed and is gone since; the next apply downloads it again"))
    }
    if let t = subject.planned, let late = overdue(t, s, now: now, maxLate: maxLate) {
      out.append(Fault(id: id, kind: .overdue, message: late))
    }
    return out
  }

  static func failingText(_ s: TaskState) -> String {
    let runs = max(s.failures, 1)
    var text = "\(runs) failed run\(runs == 1 ? "" : "s") in a row, the last at \(when(s.lastCheck))"
    if let e = s.lastError { text += ": \(e)" }
    if let b = s.backoffUntil { text += "; in backoff until \(b.rfc3339)" }
    if let ok = s.lastSuccess { text += "; last success \(ok.rfc3339)" }
    return text
  }

  /// Overdue: the next due time (counted from the last success) passed by
  /// more than one schedule interval, or by more than `maxLate`.
  static func overdue(_ t: PlannedTask, _ s: TaskState, now: Timestamp, maxLate: TimeSpan?) -> String? {
    guard let last = s.lastSuccess else { return nil }
    if let nb = t.entry.notBefore, nb > now { return nil }
    guard let (due, interval) = dueTime(t.entry.schedule, after: last, now: now), due <= now,
      let allowed = maxLate ?? interval
    else { return nil }
    let late = TimeSpan(seconds: now.seconds - due.seconds)
    guard late > allowed else { return nil }
    let what = maxLate == nil ? "one schedule interval, \(allowed)" : "--max-late \(allowed)"
    return
      "due \(due.rfc3339) (\(t.entry.schedule), last success \(last.rfc3339)), \(late) late, more than \(what)"
  }

  /// When a task succeeded at `last` is next due, and its schedule interval
  /// (nil for "every apply", which has none; no due time for `once`).
  static func dueTime(_ schedule: Schedule, after last: Timestamp, now: Timestamp) -> (Timestamp, TimeSpan?)? {
    switch schedule {
    case .once: return nil
    case .always: return (last, nil)
    case .every(let d): return (last + d, d)
    case .cron(let c):
      guard let due = c.next(after: last) else { return nil }
      return (due, c.latestInterval(atOrBefore: now) ?? c.shortestInterval())
    }
  }

  static func when(_ t: Timestamp?) -> String { t?.rfc3339 ?? "an unknown time" }

  public static func json(_ faults: [Fault], checked: Int, now: Timestamp, journalPath: String) -> JSONValue {
    .object([
      ("ok", .bool(faults.isEmpty)), ("now", .string(now.rfc3339)), ("journal", .string(journalPath)),
      ("checked", .int(Int64(checked))),
      (
        "faults",
        .array(
          faults.map {
            .object([("id", .string($0.id)), ("fault", .string($0.kind.rawValue)), ("message", .string($0.message))])
          })
      ),
    ])
  }
}
