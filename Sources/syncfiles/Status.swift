import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

struct Status: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Show what the journal knows: last outcome, bytes, partial data, next due, backoff.",
    discussion: """
      With manifests, every task of them (with when each is next due); without, \
      every task the journal knows. Reads the journal without locking it, so it \
      works while an apply runs.

      --check turns it into a health check for monitoring (Nagios plugins, \
      Kubernetes probes, a systemd health-check service of its own or an \
      OnFailure= unit; never ExecCondition= on the apply unit, which would skip \
      apply exactly while a task fails): exit 0 when every task's last \
      run succeeded and none is overdue, else exit 1 with one line per task at \
      fault on stdout (failing, interrupted, never run although due, a hook \
      owed, overdue). Overdue: the task's next due time, counted from its last \
      success, passed by more than one schedule interval (for cron, the gap \
      between its two latest fire times); --max-late sets that allowance \
      instead, and is the only way to call a task without a schedule overdue.

      Examples:
        syncfiles status /etc/syncfiles.d
        syncfiles status --check /etc/syncfiles.d || echo "sync needs attention"
        syncfiles status --check --max-late 2h --now 2026-11-24T09:00:00Z m.yaml
      """)

  @OptionGroup var session: SessionOptions
  @Flag(help: "Health check: exit 1 with one line per task that failed, is overdue or owes a hook; else exit 0.")
  var check = false
  @Option(
    help: ArgumentHelp(
      "With --check: lateness allowed past a task's due time (default: one schedule interval).",
      valueName: "DURATION"))
  var maxLate: String?
  @Argument(help: "Manifest files or folders of manifests (optional).", completion: .file()) var paths: [String] = []

  func validate() throws {
    guard let maxLate else { return }
    guard check else { throw ValidationError("--max-late is for health checks: add --check") }
    if case .failure(let e) = TimeSpan.parse(maxLate) { throw ValidationError("--max-late: \(e.message)") }
  }

  func run() throws {
    let session = session.settings
    let now = try session.clock()
    let loaded = try LoadedSession.load(paths: paths, options: session)
    // Status reads no file's bytes: an adoptable destination shows as due, as it is until an apply.
    let plan = paths.isEmpty ? nil : try loaded.plan(now: now, options: PlanOptions(), digests: false)
    if check { return try runCheck(loaded, plan: plan, now: now) }
    let rows = StatusReport.rows(journal: loaded.journal.tasks, plan: plan)
    switch session.format {
    case .json:
      Output.result(
        StatusReport.json(rows, journalPath: loaded.journalPath, now: now, dropped: loaded.journal.dropped).serialized()
      )
    case .text:
      Output.result(StatusReport.text(rows, journalPath: loaded.journalPath))
    }
  }

  func runCheck(_ loaded: LoadedSession, plan: SessionPlan?, now: Timestamp) throws {
    let subjects = HealthCheck.subjects(journal: loaded.journal.tasks, plan: plan)
    let late = maxLate.flatMap { try? TimeSpan.parse($0).get() }
    let faults = HealthCheck.faults(subjects, now: now, maxLate: late)
    switch session.format {
    case .json:
      Output.result(
        HealthCheck.json(faults, checked: subjects.count, now: now, journalPath: loaded.journalPath).serialized())
    case .text:
      for f in faults { Output.result(f.line) }
      let atFault = Set(faults.map(\.id)).count
      Output.error(
        atFault == 0
          ? "ok: \(subjects.count) task(s) checked, none failing or overdue"
          : "syncfiles: \(atFault) of \(subjects.count) task(s) at fault")
    }
    if !faults.isEmpty { throw ExitCode(ExitStatus.failed.rawValue) }
  }
}
