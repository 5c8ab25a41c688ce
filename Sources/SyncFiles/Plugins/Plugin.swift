import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// The three kinds of plugin (SPEC §7). Built-in and external plugins of a
/// kind implement the same protocol and are found through one registry.
public enum PluginKind: String, Sendable, CaseIterable {
  case source, verifier, hook
}

/// What `syncfiles plugins` shows of a plugin.
public struct PluginInfo: Sendable, Hashable {
  public var kind: PluginKind
  /// A source's URL scheme, a verifier's name (`verify: [{plugin: NAME}]`), a hook's manifest key.
  public var name: String
  /// The executable; nil for a plugin built into syncfiles.
  public var path: String?
  /// Version of the JSON protocol syncfiles speaks with it.
  public var protocolVersion: Int
  /// One line on what it does.
  public var summary: String
  /// The executable found first for the same name, when this one is hidden by it.
  public var shadowedBy: String? = nil

  public var isBuiltIn: Bool { path == nil }
}

// MARK: - Sources

/// Moves the bytes of URLs of one or more schemes into partial files.
public protocol SourcePlugin: AnyObject, Sendable {
  var info: PluginInfo { get }
  /// Opens what one run needs (built-ins: one libcurl multi handle for all
  /// their schemes). Nil when it cannot start; the tasks using it fail.
  func makeTransport(_ options: TransportOptions) -> (any Transport)?
}

public struct TransportOptions: Sendable {
  public var perHost: Int
  /// Transfers at once in the session (`limits.parallel`), for a transport that keeps the limits itself.
  public var parallel = Int.max
  /// The aggregate cap: a rate, or a timetable the transport follows.
  public var rate: RateCap?
  /// CA bundle, CA folder and netrc file named by the environment.
  public var environment = NetworkEnvironment()
  /// `--verbose`: request and response headers, masked, to this log.
  public var verbose: (@Sendable (String) -> Void)? = nil
  /// `limits.segments`: byte ranges in flight in the session (SPEC §8.3).
  public var segments = Limits.defaultSegments
  public init(perHost: Int, rate: RateCap?) {
    self.perHost = perHost
    self.rate = rate
  }
}

/// One run's channel to a source: transfers in, results out.
public protocol Transport: AnyObject, Sendable {
  /// Starts a transfer; `done` is called exactly once, on a thread of the transport's own.
  func start(_ spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void)
  /// Stops every transfer in flight; each ends with `.stopped`, partial data kept.
  func stopAll()
  /// Ends the transport after what is in flight has ended.
  func shutdown()
  /// Body bytes received so far.
  var bytesReceived: Int64 { get }
  /// True when the transport itself keeps `parallel` and `per_host` (from
  /// `TransportOptions`), holding what it is handed beyond them until a
  /// slot frees. The runner then hands over more than the limits, so a
  /// freed slot is filled on the transport's own thread at once.
  var keepsLimits: Bool { get }
}

extension Transport {
  /// A plugin's transport runs what it is handed: the runner keeps the limits.
  public var keepsLimits: Bool { false }
}

// MARK: - Verifiers

/// A complete partial file, before it may be installed.
public struct VerifyInput: Sendable {
  public var entry: FileEntry
  /// The partial file holding the complete new content.
  public var path: String
  public var size: Int64
  /// SHA-256 of every byte, computed while they arrived.
  public var sha256: String
  /// The size the source announced for the whole file, if it did.
  public var announcedSize: Int64?
  /// The entry's `with:` options for this verifier.
  public var with: JSONValue
  public var timeout: Double
  /// What the source said of the version: its ETag, and an object store's
  /// own SHA-256 of the object (base64), when it sent one.
  public var etag: String? = nil
  public var storeSHA256: String? = nil
}

public enum VerifyVerdict: Sendable, Equatable {
  case accept(warnings: [String])
  /// Accepted by a comparison the report names (`checks`).
  case passed(check: String)
  /// Not to be installed: the task fails, the old destination stays.
  case reject(String)
  /// The bytes are not the whole file (a transfer cut short): fetch again.
  case refetch(String)
}

/// Checks a complete partial file before it replaces the destination.
public protocol VerifierPlugin: Sendable {
  var info: PluginInfo { get }
  /// Built-ins apply by the entry's own keys (`sha256:`); named verifiers when listed in `verify:`.
  func applies(to entry: FileEntry) -> Bool
  func verify(_ input: VerifyInput) -> VerifyVerdict
  /// Whether `verify` reads the file at `input.path`. True unless the
  /// verifier says otherwise: only then may a small body stay in memory
  /// until its install (`TransferSpec.mayHoldBody`).
  var readsFile: Bool { get }
}

extension VerifierPlugin {
  public var readsFile: Bool { true }
}

// MARK: - Hooks

public enum HookEvent: Sendable {
  /// A file was installed with content different from before.
  case fileChanged(FileEntry, manifest: Manifest)
  /// Once per manifest in which at least one file changed.
  case manifestChanged(Manifest, changed: [String])
}

public struct HookRun: Sendable {
  /// `on_change of NAME/ID: COMMAND`, for messages.
  public var what: String
  /// Nil when it succeeded.
  public var error: String?
}

/// Runs after the transfers of a run, on what changed.
public protocol HookPlugin: Sendable {
  var info: PluginInfo { get }
  /// Nil when the event is none of this hook's business.
  func run(_ event: HookEvent, timeout: Double) -> HookRun?
}
