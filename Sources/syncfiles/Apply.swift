import ArgumentParser

struct Apply: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Run every task that is due: download, resume, revalidate, verify, install atomically.")

  @Option(help: "The journal file.") var journal: String?
  @Option(help: "Output format on stdout: text or json.") var format: OutputFormat = .text
  @Flag(help: "Plan only, as `syncfiles plan`.") var dryRun = false
  @Option(help: "Only these tasks (name/id or a glob); repeatable.") var only: [String] = []
  @Flag(help: "Ignore schedules, not_before and backoff (still conditional).") var force = false
  @Option(help: "Concurrent transfers.") var parallel: Int?
  @Option(help: "Aggregate bandwidth cap, e.g. 500000, 20MB or 20MB/s.") var rate: String?
  @Option(help: "Stop cleanly after this long (exit 75), e.g. 30m.") var deadline: String?
  @Option(help: "Progress: auto, always or never.") var progress: String = "auto"
  @Flag(help: "Print only problems.") var quiet = false
  @Argument(help: "Manifest files or folders of manifests.") var paths: [String]

  func run() throws { throw notImplemented("apply") }
}
