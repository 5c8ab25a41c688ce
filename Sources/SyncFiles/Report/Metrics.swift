import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// The Prometheus text file written after every apply (SPEC §8.4), for
/// node_exporter's textfile collector or any scraper of that format.
public struct RunMetrics: Sendable, Hashable {
  /// One task of the session as the journal knows it after the run.
  public struct Task: Sendable, Hashable {
    public var id: String
    /// The last run that succeeded (installed or unchanged); nil: never.
    public var lastSuccess: Timestamp?
    public var consecutiveFailures: Int
    /// Size of the installed file as the journal recorded it (0: none yet).
    public var bytes: Int64
    /// Bytes this run moved for the task.
    public var bytesTransferred: Int64
    /// A hook of this file is owed (failed, runs again next apply).
    public var hookPending: Bool
  }

  public var finished: Timestamp
  public var exitCode: Int32
  public var durationSeconds: Double
  public var bytesTransferred: Int64
  /// Tasks of this run per outcome (installed, unchanged, failed, ...).
  public var outcomes: [String: Int] = [:]
  /// How long each step of the apply took (`RunClock.steps`).
  public var phases: [RunPhase] = []
  public var tasks: [Task] = []

  public init(finished: Timestamp, exitCode: Int32, durationSeconds: Double, bytesTransferred: Int64) {
    self.finished = finished
    self.exitCode = exitCode
    self.durationSeconds = durationSeconds
    self.bytesTransferred = bytesTransferred
  }

  /// The metrics of one apply: run figures from the report, task figures
  /// from the journal as the run left it, for the tasks of `ids`.
  public init(report: RunReport, journal: [String: TaskState], ids: [String], finished: Timestamp) {
    self.init(
      finished: finished, exitCode: report.exitCode, durationSeconds: report.elapsed,
      bytesTransferred: report.bytesTransferred)
    for o in TaskOutcome.allCases { outcomes[o.rawValue] = report.count(o) }
    phases = report.phases
    var moved: [String: Int64] = [:]
    for t in report.tasks { moved[t.id, default: 0] += t.bytesTransferred }
    tasks = ids.map { id in
      let s = journal[id]
      return Task(
        id: id, lastSuccess: s?.lastSuccess, consecutiveFailures: s?.failures ?? 0, bytes: s?.installed?.size ?? 0,
        bytesTransferred: moved[id] ?? 0,
        hookPending: (s?.changeHookPending ?? false) || (s?.completeHookPending ?? false))
    }
  }

  /// The text exposition format, version 0.0.4, with HELP and TYPE lines.
  public var text: String {
    var out = ""
    func family(_ name: String, _ help: String, _ samples: [(labels: String, value: String)]) {
      out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
      for s in samples { out += name + s.labels + " " + s.value + "\n" }
    }
    family(
      "syncfiles_last_run_timestamp_seconds", "When the last apply ended, in seconds since the epoch.",
      [("", String(finished.seconds))])
    family(
      "syncfiles_last_run_exit_code", "Exit code of the last apply (0 ok, 1 failed, 75 stopped early).",
      [("", String(exitCode))])
    family(
      "syncfiles_last_run_duration_seconds", "How long the last apply ran.", [("", Self.decimal(durationSeconds))])
    family(
      "syncfiles_last_run_phase_seconds",
      "How long each step of the last apply took (load, plan, start, transfers, finish); they add up to its duration.",
      phases.map { (Self.labels(["phase": $0.name]), Self.decimal($0.seconds)) })
    family(
      "syncfiles_last_run_bytes_transferred", "Bytes the last apply received over the network.",
      [("", String(bytesTransferred))])
    family(
      "syncfiles_last_run_tasks", "Tasks of the last apply by outcome.",
      outcomes.keys.sorted().map { (Self.labels(["outcome": $0]), String(outcomes[$0]!)) })
    func perTask(_ name: String, _ help: String, _ value: (Task) -> String) {
      family(name, help, tasks.map { (Self.labels(["task": $0.id]), value($0)) })
    }
    perTask(
      "syncfiles_task_last_success_timestamp_seconds",
      "When the task last succeeded (installed or up to date), seconds since the epoch; 0 if never."
    ) { String($0.lastSuccess?.seconds ?? 0) }
    perTask("syncfiles_task_consecutive_failures", "Failed runs of the task since it last succeeded.") {
      String($0.consecutiveFailures)
    }
    perTask("syncfiles_task_bytes", "Size of the installed file in bytes (0 if none yet).") { String($0.bytes) }
    perTask("syncfiles_task_last_run_bytes_transferred", "Bytes the last apply received for the task.") {
      String($0.bytesTransferred)
    }
    perTask("syncfiles_task_hook_pending", "1 while a failed on_change/on_complete hook is owed.") {
      $0.hookPending ? "1" : "0"
    }
    return out
  }

  static func decimal(_ v: Double) -> String {
    let millis = Int64((v * 1000).rounded())
    let frac = String(millis % 1000)
    return "\(millis / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac)"
  }

  /// `{k="v",...}` with `\`, `"` and newlines escaped as the format requires.
  static func labels(_ pairs: [String: String]) -> String {
    let body = pairs.keys.sorted().map { key in
      var v = ""
      for c in pairs[key]! {
        switch c {
        case "\\": v += "\\\\"
        case "\"": v += "\\\""
        case "\n": v += "\\n"
        default: v.append(c)
        }
      }
      return "\(key)=\"\(v)\""
    }
    return "{" + body.joined(separator: ",") + "}"
  }
}

public struct MetricsWriteError: Error, Sendable, CustomStringConvertible {
  public var path: String
  public var errno: Int32
  public var step: String
  public var description: String { "cannot \(step) metrics file \(path): \(String(cString: strerror(errno)))" }
}

extension RunMetrics {
  /// Where one apply writes metrics, and for which tasks: `--metrics` takes
  /// every task of the session; otherwise each `metrics:` path gets the
  /// tasks of the manifests that name it.
  public static func targets(flag: String?, manifests: [Manifest]) -> [(path: String, ids: [String])] {
    if let flag { return [(flag, manifests.flatMap { $0.files.map(\.qualifiedID) })] }
    var order: [String] = []
    var ids: [String: [String]] = [:]
    for m in manifests {
      guard let path = m.metrics else { continue }
      if ids[path] == nil { order.append(path) }
      ids[path, default: []] += m.files.map(\.qualifiedID)
    }
    return order.map { ($0, ids[$0]!) }
  }

  /// Replaces `path` atomically: a temporary file in the same folder, then
  /// rename, so a scraper never reads half a file. Mode 0644: metrics hold
  /// no secrets, and the collector often runs as another user.
  public func write(to path: String) throws(MetricsWriteError) {
    let folder = Paths.folder(of: path)
    guard FileIO.makeFolders(folder) else {
      throw MetricsWriteError(path: path, errno: errno, step: "create folder for")
    }
    if let failed = FileIO.replaceWhole(path, with: Array(text.utf8), mode: 0o644, durable: false) {
      throw MetricsWriteError(path: path, errno: failed.errno.code, step: failed.step)
    }
  }
}
