import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// http, https and file URLs through libcurl: one multi handle per run for all three.
public final class LibcurlSource: SourcePlugin {
  public static let schemes = PluginLocator.libcurlSchemes
  public let info = PluginInfo(
    kind: .source, name: "http", path: nil, protocolVersion: 1,
    summary: "libcurl \(Runtime.curlVersion): resume, revalidation, redirects, rate cap")

  public init() {}

  public func makeTransport(_ options: TransportOptions) -> (any Transport)? {
    TransferEngine(
      perHost: options.perHost, rate: options.rate, environment: options.environment, verbose: options.verbose,
      segments: options.segments, parallel: options.parallel)
  }
}

extension TransferEngine: Transport {
  public var keepsLimits: Bool { true }
}

/// The whole file arrived: as many bytes as the source announced, and a
/// warning past `expected_bytes`.
public struct SizeVerifier: VerifierPlugin {
  public let info = PluginInfo(
    kind: .verifier, name: "size", path: nil, protocolVersion: 1,
    summary: "the size the source announced (and a warning past expected_bytes)")

  public init() {}

  /// It reads the size and digest taken as the bytes arrived, not the file.
  public var readsFile: Bool { false }

  public func applies(to entry: FileEntry) -> Bool { true }

  public func verify(_ input: VerifyInput) -> VerifyVerdict {
    if let total = input.announcedSize, input.size != total {
      return .refetch("received \(input.size) bytes, the source announced \(total)")
    }
    if let exp = input.entry.expectedBytes, input.size > exp {
      let (size, limit) = ByteSize.format(input.size, beside: exp)
      return .accept(warnings: ["larger than expected_bytes: \(size) > \(limit)"])
    }
    return .accept(warnings: [])
  }
}

/// `sha256:` of the entry against the digest computed while the bytes arrived.
public struct SHA256Verifier: VerifierPlugin {
  public let info = PluginInfo(
    kind: .verifier, name: "sha256", path: nil, protocolVersion: 1,
    summary: "the entry's sha256, hashed while the bytes arrive")

  public init() {}

  /// It reads the size and digest taken as the bytes arrived, not the file.
  public var readsFile: Bool { false }

  public func applies(to entry: FileEntry) -> Bool { entry.sha256 != nil }

  public func verify(_ input: VerifyInput) -> VerifyVerdict {
    guard let want = input.entry.sha256, want != input.sha256 else { return .accept(warnings: []) }
    return .reject("sha256 mismatch: expected \(want), got \(input.sha256)")
  }
}

/// The `on_change` and `on_complete` commands of a manifest: argv, never a
/// shell, with what changed in the environment.
public struct CommandHook: HookPlugin {
  public static let onChange = CommandHook(
    name: "on_change", summary: "a file's command, when its content changed")
  public static let onComplete = CommandHook(
    name: "on_complete", summary: "a manifest's command, once, when any of its files changed")

  public let info: PluginInfo

  init(name: String, summary: String) {
    info = PluginInfo(kind: .hook, name: name, path: nil, protocolVersion: 1, summary: summary)
  }

  public func run(_ event: HookEvent, timeout: Double) -> HookRun? {
    let argv: [String]
    let env: [String: String]
    let what: String
    switch event {
    case .fileChanged(let e, let m) where info.name == "on_change":
      guard let a = e.onChange else { return nil }
      (argv, what) = (a, "on_change of \(e.qualifiedID):")
      env = [
        "SYNCFILES_TASK_ID": e.qualifiedID, "SYNCFILES_DESTINATION": e.destinationPath,
        "SYNCFILES_OUTCOME": "installed", "SYNCFILES_URL": e.url.display, "SYNCFILES_MANIFEST": m.absolutePath,
      ]
    case .manifestChanged(let m, let ids) where info.name == "on_complete":
      guard let a = m.onComplete else { return nil }
      (argv, what) = (a, "on_complete of \(m.name):")
      env = [
        "SYNCFILES_MANIFEST": m.absolutePath, "SYNCFILES_MANIFEST_NAME": m.name,
        "SYNCFILES_CHANGED": ids.joined(separator: "\n"), "SYNCFILES_OUTCOME": "changed",
      ]
    default:
      return nil
    }
    let r = Subprocess.run(argv, environment: env, timeout: timeout)
    let described = "\(what) \(argv.joined(separator: " "))"
    guard !r.succeeded else { return HookRun(what: described, error: nil) }
    return HookRun(what: described, error: "\(described) failed (\(r.failure(timeout: timeout)))\(r.stderrSuffix)")
  }
}
