import ArgumentParser

struct Status: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show what the journal knows: last outcome, bytes, partial data, next due, backoff.")

  @Option(help: "The journal file.") var journal: String?
  @Option(help: "Output format on stdout: text or json.") var format: OutputFormat = .text
  @Option(help: "Evaluate schedules as if it were TIME (RFC 3339).") var now: String?
  @Argument(help: "Manifest files or folders of manifests.") var paths: [String] = []

  func run() throws { throw notImplemented("status") }
}
