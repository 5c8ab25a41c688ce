import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

struct Plugins: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "plugins",
    abstract: "List the plugins found (built-in and external), with the kind and path of each.",
    discussion: """
      Sources serve URL schemes (syncfiles-source-SCHEME), verifiers check a \
      downloaded file before it is installed (syncfiles-verify-NAME, named in \
      `verify: [{plugin: NAME, with: {...}}]`), hooks run after a run. \
      External plugins are executables found first in SYNCFILES_PLUGIN_PATH \
      (colon-separated folders), then on PATH; the first one of a name wins \
      and later ones are listed as hidden. See the README for the protocol.
      """)

  @Option(help: "Output format on stdout: text or json.") var format: OutputFormat = .text

  func run() throws {
    let locator = PluginLocator(environment: Runtime.environment)
    let plugins = PluginRegistry.standard(locator: locator).list()
    switch format {
    case .json: Output.result(PluginReport.json(plugins, searchPath: locator.searchPath).serialized())
    case .text: Output.result(PluginReport.text(plugins, searchPath: locator.searchPath))
    }
  }
}
