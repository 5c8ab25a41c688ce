import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// `syncfiles-verify-NAME`: an executable that checks a complete partial file
/// (SPEC §7). JSON request on stdin (`protocol`, `path`, `with`); exit 0
/// accepts, anything else rejects and its stderr becomes the task's error.
public struct ExternalVerifier: VerifierPlugin {
  public static let protocolVersion = 1
  public let info: PluginInfo
  let executable: String

  public init(name: String, executable: String) {
    self.executable = executable
    info = PluginInfo(
      kind: .verifier, name: name, path: executable, protocolVersion: Self.protocolVersion,
      summary: "verify: [{plugin: \(name)}] (\(PluginLocator.verifierExecutable(name: name)))")
  }

  public func applies(to entry: FileEntry) -> Bool { entry.verify.contains { $0.plugin == info.name } }

  public func verify(_ input: VerifyInput) -> VerifyVerdict {
    let request: JSONValue = .object([
      ("protocol", .int(Int64(Self.protocolVersion))), ("path", .string(input.path)), ("with", input.with),
    ])
    let r = Subprocess.run(
      [executable],
      environment: [
        "SYNCFILES_TASK_ID": input.entry.qualifiedID, "SYNCFILES_PLUGIN_PROTOCOL": "\(Self.protocolVersion)",
      ],
      stdin: Array((request.serialized() + "\n").utf8), timeout: input.timeout)
    if r.succeeded { return .accept(warnings: []) }
    return .reject(
      "verify plugin \(info.name) rejected the file (\(r.failure(timeout: input.timeout)))\(r.stderrSuffix)")
  }
}
