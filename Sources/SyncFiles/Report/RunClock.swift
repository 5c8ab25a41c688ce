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
  public static let steps = ["load", "plan", "start", "transfers", "finish"]

  public let start: Double
  private var marks: [(name: String, at: Double)] = []

  /// Starts now; `start`: a moment taken earlier.
  public init(start: Double? = nil) { self.start = start ?? monotonicSeconds() }

  /// Ends step `name` now, once: a second mark of a step is ignored.
  public mutating func end(_ name: String, at now: Double? = nil) {
    guard !ended(name) else { return }
    marks.append((name, now ?? monotonicSeconds()))
  }

  /// Ends `transfers` now; when no transfer began, `start` lasted until now
  /// and `transfers` took no time.
  public mutating func endTransfers() {
    let now = monotonicSeconds()
    end("start", at: now)
    end("transfers", at: now)
  }

  public func ended(_ name: String) -> Bool { marks.contains { $0.name == name } }

  /// Each step ended so far, with its length.
  public var phases: [RunPhase] {
    var from = start
    return marks.map { m in
      defer { from = m.at }
      return RunPhase(name: m.name, seconds: max(0, m.at - from))
    }
  }

  /// From the start to the last step ended.
  public var elapsed: Double { max(0, (marks.last?.at ?? start) - start) }
}
