import ArgumentParser
import SyncFiles

struct Status: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show what the journal knows: last outcome, bytes, partial data, next due, backoff.",
    discussion: """
      With manifests, every task of them (with when each is next due); without, \
      every task the journal knows. Reads the journal without locking it, so it \
      works while an apply runs.
      """)

  @OptionGroup var session: SessionOptions
  @Argument(help: "Manifest files or folders of manifests (optional).") var paths: [String] = []

  func run() throws {
    let now = try session.clock()
    let loaded = try LoadedSession.load(paths: paths, options: session)
    let plan = paths.isEmpty ? nil : loaded.plan(now: now, options: PlanOptions())
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
}
