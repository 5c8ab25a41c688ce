import ArgumentParser
import SyncFiles

#if canImport(Glibc)
  import Glibc
#endif

@main
struct Main {
  static func main() async {
    do {
      var command = try SyncFilesCommand.parseAsRoot()
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
      exit(code == .validationFailure ? 2 : code.rawValue)
    }
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
    subcommands: [Apply.self, Plan.self, Validate.self, Status.self, Plugins.self]
  )
}
