import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

@main
struct Main {
  static func main() async {
    // Which commands block SIGINT and SIGTERM from the start is decided in
    // one place, before the Swift runtime starts: Sources/CStart/start.c.
    if let typo = SyncFilesCommand.misspeltCommand(Array(CommandLine.arguments.dropFirst())) {
      Output.error(typo)
      exit(ExitStatus.usage.rawValue)
    }
    do {
      var command = try SyncFilesCommand.parseCommand()
      if var asyncCommand = command as? AsyncParsableCommand {
        try await asyncCommand.run()
      } else {
        try command.run()
      }
    } catch {
      let code = SyncFilesCommand.exitCode(for: error)
      if code == .success {
        SyncFilesCommand.exit(withError: error)  // --help, --version
      }
      let message = SyncFilesCommand.fullMessage(for: error)
      if !message.isEmpty { Output.error(message) }
      // SPEC §3: a usage error is exit 2 (argument-parser's own code is 64).
      exit(code == .validationFailure ? ExitStatus.usage.rawValue : code.rawValue)
    }
  }
}

extension SyncFilesCommand {
  /// A first argument that is no command and no option, but close to a
  /// command: what to say, with the command meant (`aply`: `apply`).
  static func misspeltCommand(_ args: [String]) -> String? {
    guard let first = args.first, !first.hasPrefix("-") else { return nil }
    let names = configuration.subcommands.map { $0.configuration.commandName ?? "" } + ["help"]
    guard !names.contains(first), let meant = Suggest.closest(to: first, in: names) else { return nil }
    return
      "syncfiles: unknown command '\(first)'; did you mean '\(meant)'? (commands: \(names.joined(separator: ", ")))"
  }
}

struct SyncFilesCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "syncfiles",
    abstract: "Keep local files in step with remote ones, declared in YAML manifests.",
    discussion: """
      A manifest lists files: where each comes from (url), where it goes \
      (destination), and how to check it (sha256, max_bytes). `apply` fetches \
      what is due, resumes what was interrupted, and installs each file \
      atomically: a destination is always the old complete file or the new one.

      PATH is a manifest file or a folder of *.yaml / *.yml drop-ins read in \
      name order; all manifests of one call form one session.

      Exit codes: 0 ok, 1 a task failed, 2 usage error or invalid manifest, \
      3 another apply holds the journal's lock, 75 stopped early (re-run to continue).

      Start with:  syncfiles validate Examples/quickstart
      """,
    version: "syncfiles \(Runtime.version) (\(Runtime.libraries))",
    subcommands: [Apply.self, Plan.self, Validate.self, Status.self, Plugins.self, RollbackCommand.self, Index.self]
  )

  /// The command line, parsed. When the first argument names a subcommand,
  /// that command alone parses the rest first: swift-argument-parser builds
  /// the argument set of every command it passes through several times over
  /// (by reflection), and from the root `apply`'s cost milliseconds before
  /// the first request of every run. Whatever the command alone does not
  /// parse to itself (`--help`, `--version`, a usage error) is parsed again
  /// from the root, so every message, usage line and exit code is the
  /// root's; what it does, the root parses to the same command.
  static func parseCommand(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) throws
    -> ParsableCommand
  {
    if let name = arguments.first,
      let sub = configuration.subcommands.first(where: { $0._commandName == name }),
      let command = try? sub.parseAsRoot(Array(arguments.dropFirst())),
      ObjectIdentifier(type(of: command)) == ObjectIdentifier(sub)  // not argument-parser's own help
    {
      return command
    }
    return try parseAsRoot(arguments)
  }
}
