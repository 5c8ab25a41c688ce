import ArgumentParser

struct Plan: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show what apply would do for each task, and why; nothing is transferred or written.")

  @Option(help: "The journal file.") var journal: String?
  @Option(help: "Output format on stdout: text or json.") var format: OutputFormat = .text
  @Option(help: "Evaluate schedules as if it were TIME (RFC 3339).") var now: String?
  @Flag(help: "Ask the servers (HEAD / conditional requests) to refine the plan.") var remote = false
  @Argument(help: "Manifest files or folders of manifests.") var paths: [String]

  func run() throws { throw notImplemented("plan") }
}
