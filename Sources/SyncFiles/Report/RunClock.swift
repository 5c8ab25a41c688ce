import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// How long one step of an apply took: `phases` in `apply --format json`,
/// `syncfiles_last_run_phase_seconds` in the metrics.
public struct RunPhase: Sendable, Hashable {
  public var name: String
  public var seconds: Double
}

/// The moments an apply passed from one step to the next, on the monotonic
/// clock. The report's phases are the gaps between them and its elapsed
/// time their sum, counted from the start of the apply: SPEC §8.4's run
/// duration includes reading the manifests and planning, which a manifest
/// of 100,000 entries or a slow file system makes long.
///
/// The steps, in order: `load` (the manifests, the journal read beside
/// them), `plan` (the journal's lock, a `stat` per destination, the plan),
/// `start` (until the first transfer begins), `transfers` (until the last
/// ends and its file is installed and recorded), `finish` (hooks, the
/// journal's sync and compaction).
public struct RunClock: Sendable {
  public enum Step: String, CaseIterable, Sendable {
    case load, plan, start, transfers, finish
  }

  /// The steps' names, in order.
  public static var steps: [String] { Step.allCases.map(\.rawValue) }

  public let start: Double
  private var marks: [(step: Step, at: Double)] = []

  /// Starts now; `start`: a moment taken earlier.
  public init(start: Double? = nil) { self.start = start ?? monotonicSeconds() }

  /// Ends `step` now, once: a second end of a step is ignored.
  public mutating func end(_ step: Step, at now: Double? = nil) {
    guard !ended(step) else { return }
    marks.append((step, now ?? monotonicSeconds()))
  }

  /// Ends `transfers` now; when no transfer began, `start` lasted until now
  /// and `transfers` took no time.
  public mutating func endTransfers() {
    let now = monotonicSeconds()
    end(.start, at: now)
    end(.transfers, at: now)
  }

  public func ended(_ step: Step) -> Bool { marks.contains { $0.step == step } }

  /// Each step ended so far, with its length.
  public var phases: [RunPhase] {
    var from = start
    return marks.map { m in
      defer { from = m.at }
      return RunPhase(name: m.step.rawValue, seconds: max(0, m.at - from))
    }
  }

  /// From the start to the last step ended.
  public var elapsed: Double { max(0, (marks.last?.at ?? start) - start) }
}
