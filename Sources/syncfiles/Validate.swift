import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

struct Validate: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "validate",
    abstract: "Check manifests; print every problem as FILE:LINE:COL: error|warning: message.",
    discussion: """
      Reads each manifest (or each *.yaml / *.yml in a folder), checks every \
      key and rule of the format, and checks the manifests together as one \
      session (unique names, no two files with one destination, one journal). \
      No network, no journal.

      Problems go to stderr (with the line and a caret on a terminal); the \
      verdict goes to stdout. Exit 0 when there is no error (warnings are fine), \
      2 otherwise. ${VAR} references must be set in the environment.

      Examples:
        syncfiles validate manifest.yaml
        syncfiles validate /etc/syncfiles.d --format json
      """
  )

  @Option(help: "Output format on stdout: text or json.")
  var format: OutputFormat = .text

  @Argument(help: "Manifest files or folders of manifests.", completion: .file())
  var paths: [String]

  func run() throws {
    let loader = ManifestLoader(
      environment: Runtime.environment,
      workingDirectory: Runtime.workingDirectory)
    let report = ValidationReport(set: loader.load(paths: paths))
    switch format {
    case .json:
      Output.result(report.json.serialized())
    case .text:
      let showSource = Output.stderrIsTTY
      var sources = SourceCache(workingDirectory: Runtime.workingDirectory)
      for d in report.sortedDiagnostics {
        let line = showSource ? d.mark.flatMap { sources.line($0.line, of: d.file) } : nil
        Output.error(ValidationReport.text(d, sourceLine: line))
      }
      Output.result(report.summary)
    }
    if report.set.hasErrors { throw ExitCode(ExitStatus.usage.rawValue) }
  }
}

/// Lines of manifest files, read once, for showing a problem in its context.
struct SourceCache {
  let workingDirectory: String
  var lines: [String: [Substring]] = [:]

  mutating func line(_ n: Int, of file: String) -> String? {
    if lines[file] == nil {
      let path = file.hasPrefix("/") ? file : workingDirectory + "/" + file
      guard case .success(let bytes) = FileIO.readAll(path, limit: YAMLLimits().maxBytes),
        let text = String(validating: bytes, as: UTF8.self)
      else { return nil }
      lines[file] = text.split(separator: "\n", omittingEmptySubsequences: false)
    }
    guard let all = lines[file], n >= 1, n <= all.count else { return nil }
    return String(all[n - 1])
  }
}
