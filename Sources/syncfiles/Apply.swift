import ArgumentParser
import SyncFiles

struct Apply: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Run every task that is due: download, resume, revalidate, verify, install atomically.",
    discussion: "The transfer engine has not landed yet: only --dry-run (the same as `syncfiles plan`) works.")

  @OptionGroup var session: SessionOptions
  @Flag(help: "Plan only, exactly as `syncfiles plan`: nothing is transferred or written.") var dryRun = false
  @Option(help: "Only tasks matching ID (name/id or a glob); repeatable.") var only: [String] = []
  @Flag(help: "Ignore schedules, not_before and backoff (requests stay conditional).") var force = false
  @Option(help: "Concurrent transfers.") var parallel: Int?
  @Option(help: "Aggregate bandwidth cap, e.g. 500000, 20MB or 20MB/s.") var rate: String?
  @Option(help: "Stop cleanly after this long (exit 75), e.g. 30m.") var deadline: String?
  @Option(help: "Progress: auto, always or never.") var progress: String = "auto"
  @Flag(help: "Print only problems.") var quiet = false
  @Argument(help: "Manifest files or folders of manifests.") var paths: [String]

  func run() throws {
    guard dryRun else { throw notImplemented("apply") }
    try PlanOutput.run(paths: paths, session: session, options: PlanOptions(force: force, only: only))
  }
}
