import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
#if canImport(Glibc)
  import Glibc
#endif

/// Every plugin a session can use: the built-ins, registered at start, and the
/// external executables found on the search path when first asked for. The
/// manifest decoder, the runner and `syncfiles plugins` all ask here.
public final class PluginRegistry: PluginCatalog, Sendable {
  public let locator: PluginLocator
  private struct Plugins {
    var sources: [String: any SourcePlugin] = [:]
    var sourceOrder: [String] = []
    var checks: [any VerifierPlugin] = []
    /// Those of `checks` that read the file: the built-ins do not, so a try
    /// asks nothing of them (`anyVerifierReadsFile`, at every try).
    var fileReadingChecks: [any VerifierPlugin] = []
    var namedVerifiers: [String: any VerifierPlugin] = [:]
    var hooks: [any HookPlugin] = []
  }
  private let plugins = Locked(Plugins())

  public var hooks: [any HookPlugin] { plugins.withLock { $0.hooks } }

  /// An empty registry on `locator`'s search path; see `standard`.
  public init(locator: PluginLocator) {
    self.locator = locator
  }

  /// The built-ins (http/https/file through libcurl; s3; size and sha256 checks;
  /// `on_change` and `on_complete` commands) and external plugins on `locator`.
  public static func standard(locator: PluginLocator) -> PluginRegistry {
    let r = PluginRegistry(locator: locator)
    r.register(LibcurlSource(), schemes: LibcurlSource.schemes)
    r.register(S3Source(), schemes: ["s3"])
    r.register(check: SizeVerifier())
    r.register(check: SHA256Verifier())
    r.register(check: ObjectChecksumVerifier())
    r.register(hook: CommandHook.onChange)
    r.register(hook: CommandHook.onComplete)
    return r
  }

  public func register(_ source: any SourcePlugin, schemes: [String]) {
    plugins.withLock { p in
      for s in schemes where p.sources[s] == nil {
        p.sources[s] = source
        p.sourceOrder.append(s)
      }
    }
  }

  /// A check every file gets (it decides from the entry whether it applies).
  public func register(check: any VerifierPlugin) {
    plugins.withLock { p in
      p.checks.append(check)
      if check.readsFile { p.fileReadingChecks.append(check) }
    }
  }

  /// A verifier entries name in `verify: [{plugin: NAME}]` (the first registered for a name stays).
  public func register(verifier: any VerifierPlugin) {
    plugins.withLock { p in
      if p.namedVerifiers[verifier.info.name] == nil { p.namedVerifiers[verifier.info.name] = verifier }
    }
  }

  public func register(hook: any HookPlugin) { plugins.withLock { $0.hooks.append(hook) } }

  /// Schemes served without an external plugin.
  public var builtInSchemes: [String] {
    plugins.withLock { p in p.sourceOrder.filter { p.sources[$0]!.info.isBuiltIn } }
  }

  public func servesScheme(_ scheme: String) -> Bool { source(scheme: scheme) != nil }

  public func verifierLocation(named name: String) -> String? {
    verifier(named: name).map { $0.info.path ?? "built in" }
  }

  /// The plugin serving `scheme:` URLs: registered, else `syncfiles-source-SCHEME` on the search path.
  public func source(scheme: String) -> (any SourcePlugin)? {
    if let s = plugins.withLock({ $0.sources[scheme] }) { return s }
    guard let path = locator.find(PluginLocator.sourceExecutable(scheme: scheme)) else { return nil }
    let plugin = ExternalSource(scheme: scheme, executable: path)
    register(plugin, schemes: [scheme])
    return plugins.withLock { $0.sources[scheme] }
  }

  /// The verifier named `name`: registered, else `syncfiles-verify-NAME` on the search path.
  public func verifier(named name: String) -> (any VerifierPlugin)? {
    if let v = plugins.withLock({ $0.namedVerifiers[name] }) { return v }
    guard let path = locator.find(PluginLocator.verifierExecutable(name: name)) else { return nil }
    register(verifier: ExternalVerifier(name: name, executable: path))
    return plugins.withLock { $0.namedVerifiers[name] }
  }

  /// What a complete file of `entry` must pass, in order: the checks that
  /// apply to it, then its `verify:` entries (with their options).
  public func verifiers(for entry: FileEntry) -> [(verifier: any VerifierPlugin, with: JSONValue)] {
    var out: [(verifier: any VerifierPlugin, with: JSONValue)] = plugins.withLock { $0.checks }
      .filter { $0.applies(to: entry) }.map { ($0, JSONValue.object([])) }
    for v in entry.verify {
      if let plugin = verifier(named: v.plugin) { out.append((plugin, v.with)) }
    }
    return out
  }

  /// Whether any check or `verify:` entry of `entry` reads the file
  /// (`VerifierPlugin.readsFile`), as `verifiers(for:)` would list them:
  /// such a body is never held in memory. Asked at every try, so no list
  /// is made (a list was made at every try).
  public func anyVerifierReadsFile(for entry: FileEntry) -> Bool {
    let checks = plugins.withLock { $0.fileReadingChecks }
    for c in checks where c.applies(to: entry) { return true }
    for v in entry.verify where verifier(named: v.plugin)?.readsFile == true { return true }
    return false
  }

  /// Everything there is: the built-ins, then every external plugin on the
  /// search path (those hidden by one of the same name earlier are marked).
  public func list() -> [PluginInfo] {
    var out: [PluginInfo] = plugins.withLock { p in
      var rows: [PluginInfo] = []
      for s in p.sourceOrder where p.sources[s]!.info.isBuiltIn {
        var info = p.sources[s]!.info
        info.name = s
        rows.append(info)
      }
      rows += p.checks.map(\.info).filter(\.isBuiltIn)
      rows += p.hooks.map(\.info).filter(\.isBuiltIn)
      return rows
    }
    let builtIn = Set(out.map { "\($0.kind.rawValue)/\($0.name)" })
    var firstFound: [String: String] = [:]
    for dir in locator.searchPath {
      for name in PluginLocator.executables(in: dir) {
        let path = dir.hasSuffix("/") ? dir + name : dir + "/" + name
        let kind: PluginKind
        let plugin: String
        if name.hasPrefix("syncfiles-source-") {
          kind = .source
          plugin = String(name.dropFirst("syncfiles-source-".count))
        } else if name.hasPrefix("syncfiles-verify-") {
          kind = .verifier
          plugin = String(name.dropFirst("syncfiles-verify-".count))
        } else {
          continue
        }
        guard !plugin.isEmpty else { continue }
        let key = "\(kind.rawValue)/\(plugin)"
        var info =
          kind == .source
          ? ExternalSource(scheme: plugin, executable: path).info
          : ExternalVerifier(name: plugin, executable: path).info
        if builtIn.contains(key) {
          info.shadowedBy = "built in"
        } else if let first = firstFound[key] {
          info.shadowedBy = first
        } else {
          firstFound[key] = path
        }
        out.append(info)
      }
    }
    return out
  }
}
