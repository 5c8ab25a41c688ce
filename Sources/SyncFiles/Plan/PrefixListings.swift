import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// The listings a session's prefix entries (SPEC §9.4) are expanded from:
/// made now through each prefix's source (`apply`, `plan --remote`), or
/// read back from the journal (an offline `plan`, which says so).
public enum PrefixListings {
  /// How a listing reaches the store, as the run's transfers do.
  public struct Options: Sendable {
    public var environment = NetworkEnvironment()
    public var verbose: (@Sendable (String) -> Void)? = nil
    public var now: Timestamp
    public init(now: Timestamp) { self.now = now }
  }

  /// Every prefix entry of the manifests that `--only` may select.
  public static func entries(_ manifests: [Manifest], only: [String] = []) -> [FileEntry] {
    manifests.flatMap {
      $0.files.filter { $0.prefix != nil && Planner.mayMatchBelow($0.qualifiedID, patterns: only) }
    }
  }

  /// The journal's last listing of each prefix, or none.
  public static func recorded(_ manifests: [Manifest], journal: [String: PrefixListing], only: [String] = [])
    -> [String: PrefixSource]
  {
    var out: [String: PrefixSource] = [:]
    for e in entries(manifests, only: only) {
      out[e.qualifiedID] = journal[e.qualifiedID].map(PrefixSource.recorded) ?? .unlisted
    }
    return out
  }

  /// One prefix listed now through the plugin serving its scheme.
  public static func list(_ e: FileEntry, plugins: PluginRegistry, options: Options) -> PrefixSource {
    guard let lister = plugins.source(scheme: e.url.scheme) as? any PrefixLister else {
      return .failed(
        "\(e.url) is a prefix (its url ends in /), and the source of \(e.url.scheme): urls does not list objects")
    }
    var r = ListingRequest(entry: e, now: options.now)
    r.environment = options.environment
    r.verbose = options.verbose
    switch lister.list(r) {
    case .success(let l): return .listed(l)
    case .failure(let f): return .failed(f.message)
    }
  }

  /// Every prefix listed now.
  public static func listed(
    _ manifests: [Manifest], plugins: PluginRegistry, options: Options, only: [String] = []
  ) -> [String: PrefixSource] {
    var out: [String: PrefixSource] = [:]
    for e in entries(manifests, only: only) { out[e.qualifiedID] = list(e, plugins: plugins, options: options) }
    return out
  }
}
