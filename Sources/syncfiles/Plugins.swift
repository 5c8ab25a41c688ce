import ArgumentParser

struct Plugins: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "List the plugins found (built-in and external), with the kind and path of each.")

  @Option(help: "Output format on stdout: text or json.") var format: OutputFormat = .text

  func run() throws { throw notImplemented("plugins") }
}
