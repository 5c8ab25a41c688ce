import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

struct Plan: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "plan",
    abstract: "Show what apply would do for each task, and why; nothing is transferred or written.",
    discussion: """
      For each file: its action (download, resume, revalidate, skip, wait), \
      the bytes it would move, and the reason; then totals, the disk preflight \
      per file system, and the session's limits. Offline: it reads the \
      manifests, the journal (without locking it) and the file system.

      Examples:
        syncfiles plan /etc/syncfiles.d
        syncfiles plan --now 2026-12-01T03:00:00Z --format json manifest.yaml
      """)

  @OptionGroup var session: SessionOptions
  @Flag(help: "Ask the servers (HEAD / conditional requests, never a body) to refine sizes and changed/unchanged.")
  var remote = false
  @Option(help: "Only tasks matching ID (name/id or a glob); repeatable.", completion: TaskCompletion.kind)
  var only: [String] = []
  @Flag(help: "Plan as apply --force would: ignore schedules, not_before and backoff.") var force = false
  @Flag(
    name: [.short, .long],
    help: "With --remote: every request and response header on stderr; credentials and ${VAR} values as ***.")
  var verbose = false
  @Option(
    help: ArgumentHelp(
      "Also forecast every run due from now on for this long (e.g. 7d): bytes per run, per day, the busiest hour, and warnings.",
      valueName: "DURATION"))
  var horizon: String?
  @Argument(help: "Manifest files or folders of manifests.", completion: .file()) var paths: [String]

  func validate() throws {
    if verbose && !remote { throw ValidationError("--verbose shows the requests of --remote; plan alone sends none") }
    if let horizon {
      switch TimeSpan.parse(horizon) {
      case .failure(let e): throw ValidationError("--horizon: \(e.message)")
      case .success(let span) where span.seconds <= 0:
        throw ValidationError("--horizon \(horizon) covers no time; give a positive duration such as 7d")
      case .success: break
      }
    }
  }

  func run() throws {
    try PlanOutput.run(
      paths: paths, session: session.settings, options: PlanOptions(force: force, only: only), remote: remote,
      verbose: verbose, horizon: horizon.flatMap { try? TimeSpan.parse($0).get() })
  }
}

enum PlanOutput {
  static func run(
    paths: [String], session: SessionSettings, options: PlanOptions, remote: Bool = false, verbose: Bool = false,
    horizon: TimeSpan? = nil
  ) throws {
    let now = try session.clock()
    // The destinations are checked beside the planning; their errors come before any output.
    let loaded = try LoadedSession.load(paths: paths, options: session, deferDestinations: true)
    let (plan, facts) = try loaded.planAndFacts(now: now, options: options, remote: remote, verbose: verbose)
    try requireSelection(plan, only: options.only)
    let forecast = horizon.map { loaded.forecast(plan, facts: facts, horizon: $0) }
    switch session.format {
    case .json:
      var report = PlanReport.json(plan)
      if let forecast, case .object(var fields) = report {
        fields.append(("forecast", forecast.json))
        report = .object(fields)
      }
      Output.result(report.serialized())
    case .text:
      // Written as it is made: a large plan's text is never held whole,
      // unless values from the environment must be masked in it (`Output`).
      let masks = !loaded.set.secrets.isEmpty
      var out = TextOut(fd: masks ? nil : 1)
      PlanReport.write(plan, to: &out)
      out.write(forecast.map { "\n\n" + $0.text } ?? "")
      if masks { Output.result(out.text) } else { out.write("\n") }
      out.flush()
    }
    Output.keepUntilExit(loaded, plan)
  }
}

/// `--only` that selects no task is a usage error (exit 2), not a quiet
/// success: the patterns are named, with some of the ids they could match.
func requireSelection(_ plan: SessionPlan, only: [String]) throws {
  guard !only.isEmpty, !plan.tasks.contains(where: \.selected) else { return }
  let some = plan.tasks.prefix(5).map(\.id).joined(separator: ", ")
  let more = plan.tasks.count > 5 ? ", …" : ""
  let patterns = only.map { "'\($0)'" }.joined(separator: ", ")
  Output.error("syncfiles: --only \(patterns) selects no task (the tasks are \(some)\(more))")
  throw ExitCode(ExitStatus.usage.rawValue)
}
