import ArgumentParser
import CStart
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

struct Apply: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "apply",
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
  @Option(help: "Only tasks matching ID (name/id or a glob); repeatable.", completion: TaskCompletion.kind)
  var only: [String] = []
  @Flag(help: "Ignore schedules, not_before and backoff (requests stay conditional).") var force = false
  @Option(help: "Concurrent transfers (default: limits.parallel, else 8).") var parallel: Int?
  @Option(
    help:
      "Aggregate bandwidth cap in bytes per second, e.g. 500000, 20MB, 20MB/s, or 10M and 300K as curl reads them (1024-based); or a timetable in local time, as rclone's --bwlimit: \"08:00,512K 18:00,10M 23:30,off\"."
  ) var rate: String?
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
      valueName: "FILE"), completion: .file())
  var metrics: String?
  @Option(
    help: ArgumentHelp(
      "Ping a cron monitor (healthchecks.io, Cronitor, Uptime Kuma): URL/start as the run begins, URL/EXIT_CODE with the JSON report when it ends; overrides the manifests' notify key.",
      valueName: "URL"))
  var notify: String?
  @Argument(help: "Manifest files or folders of manifests.", completion: .file()) var paths: [String]

}

extension Apply {
  func validate() throws {
    if let p = parallel, p < 1 { throw ValidationError("--parallel must be at least 1") }
    if let r = rate, case .failure(let e) = RateCap.parse(r) { throw ValidationError("--rate: \(e.message)") }
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
    if let n = notify, !(n.hasPrefix("http://") || n.hasPrefix("https://")) {
      throw ValidationError("--notify needs an http or https URL, such as https://hc-ping.com/UUID")
    }
    if session.now != nil && !dryRun {
      throw ValidationError("--now is for plans only (plan, status, apply --dry-run); apply runs at the real time")
    }
  }

  func run() throws {
    if dryRun {
      return try PlanOutput.run(
        paths: paths, session: session.settings, options: PlanOptions(force: force, only: only))
    }
    // The run's duration (and --deadline) count from here.
    var clock = RunClock()
    // Sources/CStart blocked SIGINT and SIGTERM before the runtime started;
    // should a libc not run it, they are blocked here, before any thread
    // starts, so that only the watcher thread receives them.
    if sf_stop_signals_blocked_at_start() == 0 { SignalWatcher.block() }
    // One registry: the plugins the manifests are checked against are the ones the run uses.
    let plugins = PluginRegistry.standard(locator: PluginLocator(environment: Runtime.environment))
    // The journal is read beside the manifests; the writer uses that reading only if the file is unchanged.
    let prefetch = JournalPrefetch()
    let set: ManifestSet
    let journalPath: String
    do {
      (set, journalPath) = try LoadedSession.manifests(
        paths: paths, options: session.settings, plugins: plugins, prefetch: prefetch)
    } catch let e as ExitCode {
      // Invalid manifests: a monitor named by the flag still hears the exit code.
      Monitors(flag: notify, manifests: [], verbose: verbose).finish(exitCode: e.rawValue, report: [])
      throw e
    }
    clock.end(.load)
    let monitors = Monitors(flag: notify, manifests: set.manifests, verbose: verbose)
    monitors.start()
    let applying = try open(set, journalPath: journalPath, plugins: plugins, prefetch: prefetch, monitors: monitors)
    clock.end(.plan)
    for notice in applying.notices { Output.error("syncfiles: \(notice)") }
    do { try requireSelection(applying.plan, only: only) } catch let e as ExitCode {
      monitors.finish(exitCode: e.rawValue, report: [])
      throw e
    }
    let line = ProgressLine(live: !quiet && (progress == .always || (progress == .auto && Output.stderrIsTTY)))
    let report = applying.run(
      plugins: plugins, options: runOptions(applying, line: line, clock: clock),
      metrics: metrics.map { Paths.normalize($0, relativeTo: Runtime.workingDirectory) },
      say: { Output.error("syncfiles: \($0)") }, ended: { line.clear() })
    print(report)
    monitors.finish(exitCode: report.exitCode, report: Array(report.json.serialized().utf8))
    if report.exitStatus != .success { throw ExitCode(report.exitCode) }
  }
}

extension Apply {
  /// The session: the journal opened and locked, the prefixes listed, the
  /// plan made. A journal another apply holds is exit 3, which the monitors hear.
  func open(
    _ set: ManifestSet, journalPath: String, plugins: PluginRegistry, prefetch: JournalPrefetch, monitors: Monitors
  ) throws -> ApplySession {
    do {
      var listing = PrefixListings.Options(now: Timestamp.current())
      listing.environment = NetworkEnvironment(environment: Runtime.environment)
      if verbose { listing.verbose = { Output.error($0) } }
      return try ApplySession(
        manifests: set.manifests, journalPath: journalPath, plan: PlanOptions(force: force, only: only),
        prefetched: prefetch, list: { [listing] in PrefixListings.list($0, plugins: plugins, options: listing) })
    } catch {
      Output.error("syncfiles: \(error.message)")
      var code = ExitStatus.usage
      if case .locked = error { code = .locked }
      let body = JSONValue.object([("error", .string(error.message)), ("exit_code", .int(Int64(code.rawValue)))])
      monitors.finish(exitCode: code.rawValue, report: Array(body.serialized().utf8))
      throw ExitCode(code.rawValue)
    }
  }

  /// The flags (and SYNCFILES_GROUP_COMMIT) over the manifests' limits, and where logs go.
  func runOptions(_ applying: ApplySession, line: ProgressLine, clock: RunClock) -> RunOptions {
    var flags = ApplySession.Flags()
    flags.parallel = parallel
    flags.rate = rate.flatMap { try? RateCap.parse($0).get() }
    flags.deadline = deadline.flatMap { try? TimeSpan.parse($0).get() }
    flags.groupCommit = Runtime.environment["SYNCFILES_GROUP_COMMIT"] != "0"
    var options = applying.runOptions(flags)
    options.clock = clock
    if !quiet { options.log = { line.log($0) } }
    if line.live { options.tick = { line.show($0) } }
    options.environment = NetworkEnvironment(environment: Runtime.environment)
    if verbose { options.verbose = { line.log($0) } }
    return options
  }

  /// The summary on stdout (one JSON object with --format json); with
  /// --quiet, only the failures, on stderr.
  func print(_ report: RunReport) {
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
  }
}

enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
  case auto, always, never
}

/// The live progress line on a terminal (redrawn in place), and log lines
/// printed above it; without a terminal, only the log lines.
final class ProgressLine: Sendable {
  let live: Bool
  /// The terminal can erase a line (`\e[K`); a dumb one gets spaces instead.
  let erases: Bool
  /// The width of the line shown now (0: none).
  private let shown = Locked(0)

  init(live: Bool, term: String? = Runtime.environment["TERM"]) {
    self.live = live
    erases = !(term ?? "").isEmpty && term != "dumb"
  }

  /// Back to the start of the line, erasing what the last line (`shown` wide) showed.
  private func erase(_ shown: Int) -> String {
    erases ? "\r\u{1b}[K" : "\r" + String(repeating: " ", count: shown) + "\r"
  }

  func log(_ text: String) {
    shown.withLock { shown in
      if shown > 0 { Output.error(erase(shown), newline: false) }
      shown = 0
      Output.error(text)
    }
  }

  func show(_ p: RunProgress) {
    shown.withLock { shown in
      let text = Self.text(p)
      Output.error(erase(shown) + text, newline: false)
      shown = text.count
    }
  }

  /// `[3/10 files] 12.0 MiB of 100 MiB (12%)  4.0 MiB/s  ETA 0:22  m/big, m/small +2`
  static func text(_ p: RunProgress) -> String {
    let rate = p.elapsed > 0.5 ? Double(p.bytes) / p.elapsed : 0
    var text = "[\(p.done)/\(p.total) files] \(ByteSize.format(p.bytes))"
    if p.expectedBytes > 0 {
      let percent = min(100, Int(Double(p.bytes) * 100 / Double(p.expectedBytes)))
      text += " of \(ByteSize.format(p.expectedBytes)) (\(percent)%)"
    }
    if rate > 0 { text += "  \(ByteSize.format(Int64(rate)))/s" }
    if rate > 0 && p.expectedBytes > p.bytes {
      let eta = Int(Double(p.expectedBytes - p.bytes) / rate)
      text += "  ETA \(eta / 60):\(eta % 60 < 10 ? "0" : "")\(eta % 60)"
    }
    if !p.current.isEmpty {
      text += "  " + p.current.joined(separator: ", ")
      if p.active > p.current.count { text += " +\(p.active - p.current.count)" }
    } else {
      text += "  \(p.active) active"
    }
    return text
  }

  func clear() {
    shown.withLock { shown in
      if shown > 0 { Output.error(erase(shown), newline: false) }
      shown = 0
    }
  }
}
