import ArgumentParser
import SyncFiles

#if canImport(Glibc)
  import Glibc
#endif

struct Apply: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Run every task that is due: download, resume, revalidate, verify, install atomically.",
    discussion: """
      Plans exactly as `syncfiles plan`, then runs what is due through one \
      session: transfers share connections under the limits; bytes go to a \
      hidden partial file beside each destination and are installed only \
      after the size and sha256 checks (fsync, rename, folder fsync). \
      Interrupted transfers keep their partial file and resume next time with \
      Range + If-Range. Every outcome is recorded in the journal as it happens.

      Progress and logs go to stderr (a live line on a terminal, plain lines \
      otherwise); the summary, or with --format json one object, to stdout.

      Exit codes: 0 every task that ran succeeded or was up to date; 1 a task \
      (or hook) failed; 2 usage error or invalid manifest; 3 another apply \
      holds the journal; 75 stopped early (deadline, SIGINT/SIGTERM): re-run \
      to continue.

      Examples:
        syncfiles apply /etc/syncfiles.d
        syncfiles apply --only 'datasets/*' --rate 20MB/s --deadline 30m manifest.yaml
      """)

  @OptionGroup var session: SessionOptions
  @Flag(help: "Plan only, exactly as `syncfiles plan`: nothing is transferred or written.") var dryRun = false
  @Option(help: "Only tasks matching ID (name/id or a glob); repeatable.") var only: [String] = []
  @Flag(help: "Ignore schedules, not_before and backoff (requests stay conditional).") var force = false
  @Option(help: "Concurrent transfers (default: limits.parallel, else 8).") var parallel: Int?
  @Option(help: "Aggregate bandwidth cap, e.g. 500000, 20MB or 20MB/s.") var rate: String?
  @Option(help: "Stop cleanly after this long (exit 75), e.g. 30m.") var deadline: String?
  @Option(help: "Progress on stderr: auto (a live line on a terminal), always or never.") var progress: ProgressMode =
    .auto
  @Flag(help: "Print only problems (and the JSON object with --format json).") var quiet = false
  @Flag(
    name: [.short, .long],
    help:
      "Every request line and header and every response status and header on stderr; credentials and ${VAR} values as ***."
  )
  var verbose = false
  @Option(
    help: ArgumentHelp(
      "After the run, write Prometheus metrics to FILE (atomically); overrides the manifests' metrics key.",
      valueName: "FILE"))
  var metrics: String?
  @Argument(help: "Manifest files or folders of manifests.") var paths: [String]

  func validate() throws {
    if let p = parallel, p < 1 { throw ValidationError("--parallel must be at least 1") }
    if let r = rate, case .failure(let e) = ByteSize.parseRate(r) { throw ValidationError("--rate: \(e.message)") }
    if let d = deadline {
      switch TimeSpan.parse(d) {
      case .failure(let e): throw ValidationError("--deadline: \(e.message)")
      case .success(let span) where span.seconds <= 0:
        throw ValidationError("--deadline \(d) leaves no time to run; give a positive duration such as 30m")
      case .success: break
      }
    }
    if metrics?.isEmpty == true {
      throw ValidationError("--metrics needs a file name, such as /var/lib/node_exporter/syncfiles.prom")
    }
    if session.now != nil && !dryRun {
      throw ValidationError("--now is for plans only (plan, status, apply --dry-run); apply runs at the real time")
    }
  }

  func run() throws {
    if dryRun {
      return try PlanOutput.run(paths: paths, session: session, options: PlanOptions(force: force, only: only))
    }
    // Before any thread starts: only the watcher thread receives SIGINT/SIGTERM.
    SignalWatcher.block()
    // One registry: the plugins the manifests are checked against are the ones the run uses.
    let plugins = PluginRegistry.standard(locator: PluginLocator(environment: Runtime.environment))
    let (set, journalPath) = try LoadedSession.manifests(paths: paths, options: session, plugins: plugins)
    let writer: JournalWriter
    do {
      writer = try JournalWriter(path: journalPath)
    } catch {
      Output.error("syncfiles: \(error.message)")
      if case .locked = error { throw ExitCode(3) }
      throw ExitCode(2)
    }
    if let note = writer.recovered { Output.error("syncfiles: \(note)") }
    let journal = SessionJournal(writer)
    let now = Timestamp.current()
    let facts = FactGatherer.gather(for: set.manifests, journal: journal.tasks, now: now)
    let plan = Planner.plan(
      manifests: set.manifests, journal: journal.tasks, facts: facts, options: PlanOptions(force: force, only: only),
      journalPath: journalPath)
    try requireSelection(plan, only: only)
    for d in plan.disk where !d.ok {
      Output.error(
        "syncfiles: warning: \(d.path) has \(ByteSize.format(d.freeBytes)) free, the run expects to need \(ByteSize.format(d.neededBytes)); transfers that run out of space fail and keep the old files"
      )
    }

    let limits = plan.limits
    var options = RunOptions(
      parallel: parallel ?? limits.parallel ?? Limits.defaultParallel,
      perHost: limits.perHost ?? Limits.defaultPerHost)
    options.rate = [rate.flatMap { try? ByteSize.parseRate($0).get() }, limits.rate].compactMap { $0 }.min()
    options.segments = limits.segments ?? Limits.defaultSegments
    let flagDeadline = deadline.flatMap { try? TimeSpan.parse($0).get() }
    options.deadline = [flagDeadline, limits.deadline].compactMap { $0 }.min().map { Double($0.seconds) }
    if let env = getenv("SYNCFILES_GROUP_COMMIT"), String(cString: env) == "0" {
      options.groupCommit = false
    }
    let live = !quiet && (progress == .always || (progress == .auto && Output.stderrIsTTY))
    let line = ProgressLine(live: live)
    if !quiet { options.log = { line.log($0) } }
    if live { options.tick = { line.show($0) } }
    options.environment = NetworkEnvironment(environment: Runtime.environment)
    if verbose { options.verbose = { line.log($0) } }

    let runner = Runner(
      plan: plan, manifests: set.manifests, journal: journal, plugins: plugins, options: options)
    SignalWatcher.watch { signal in
      if runner.stopRequested {
        // A second signal: the journal is consistent at every instant; leave now.
        Output.error("syncfiles: \(signal) again: exiting at once")
        _exit(75)
      }
      runner.stop(signal)
    }
    let report = runner.run()
    line.clear()
    writeMetrics(report, manifests: set.manifests, journal: journal.tasks)
    switch session.format {
    case .json:
      Output.result(report.json.serialized())
    case .text:
      if quiet {
        for t in report.tasks where t.outcome == .failed { Output.error("syncfiles: failed \(t.id): \(t.error ?? "")") }
      } else {
        Output.result(report.text)
      }
    }
    let code = report.exitCode
    if code != 0 { throw ExitCode(code) }
  }
}

extension Apply {
  /// SPEC §8.4: after every apply that ran (exit 0, 1 or 75). A file that
  /// cannot be written is a warning: the run's own outcome stands.
  func writeMetrics(_ report: RunReport, manifests: [Manifest], journal: [String: TaskState]) {
    let flag = metrics.map { Paths.normalize($0, relativeTo: Runtime.workingDirectory) }
    let finished = Timestamp.current()
    for target in RunMetrics.targets(flag: flag, manifests: manifests) {
      let m = RunMetrics(report: report, journal: journal, ids: target.ids, finished: finished)
      do throws(MetricsWriteError) {
        try m.write(to: target.path)
      } catch {
        Output.error("syncfiles: warning: \(error)")
      }
    }
  }
}

enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
  case auto, always, never
}

/// The live progress line on a terminal (redrawn in place), and log lines
/// printed above it; without a terminal, only the log lines.
final class ProgressLine: @unchecked Sendable {
  private let live: Bool
  private let lock = Lock()
  private var shown = false

  init(live: Bool) { self.live = live }

  func log(_ text: String) {
    lock.locked {
      if shown { Output.error("\r\u{1b}[K", newline: false) }
      shown = false
      Output.error(text)
    }
  }

  func show(_ p: RunProgress) {
    lock.locked {
      let rate = p.elapsed > 0.5 ? Double(p.bytes) / p.elapsed : 0
      var text = "[\(p.done)/\(p.total) files] \(ByteSize.format(p.bytes))"
      if rate > 0 { text += "  \(ByteSize.format(Int64(rate)))/s" }
      if rate > 0 && p.expectedBytes > p.bytes {
        let eta = Int(Double(p.expectedBytes - p.bytes) / rate)
        text += "  ETA \(eta / 60):\(eta % 60 < 10 ? "0" : "")\(eta % 60)"
      }
      text += "  \(p.active) active"
      Output.error("\r\u{1b}[K" + text, newline: false)
      shown = true
    }
  }

  func clear() {
    lock.locked {
      if shown { Output.error("\r\u{1b}[K", newline: false) }
      shown = false
    }
  }
}
