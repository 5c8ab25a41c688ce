import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// Whether a request goes through a proxy (SPEC §8.1), as libcurl decides:
/// the manifest's `proxy:` key, else `http_proxy` (lowercase only, for
/// http), `https_proxy` or `HTTPS_PROXY` (https), `all_proxy` or
/// `ALL_PROXY`, less the hosts `no_proxy` or `NO_PROXY` names. Through a
/// proxy a cache may stand between a fleet and its origin (SPEC §9.3).
public struct ProxyRoute: Sendable {
  private var http = false
  private var https = false
  /// `no_proxy` entries, lowercased, without a leading dot; `*` is every host.
  private var bypass: [String] = []

  public init(environment: [String: String]) {
    func set(_ k: String) -> Bool { !(environment[k] ?? "").isEmpty }
    let all = set("all_proxy") || set("ALL_PROXY")
    http = set("http_proxy") || all
    https = set("https_proxy") || set("HTTPS_PROXY") || all
    let list = environment["no_proxy"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["NO_PROXY"] ?? ""
    bypass = list.split(separator: ",").map { entry in
      var e = entry.trimmingWhitespace().lowercased()
      while e.hasPrefix(".") { e.removeFirst() }
      return e
    }.filter { !$0.isEmpty }
  }

  /// `host` without its port; `scheme` http or https.
  public func used(scheme: String, host: String, setting: ProxySetting?) -> Bool {
    switch setting {
    case .url?: return true
    case .none?: return false
    case nil: break
    }
    guard scheme == "http" ? http : scheme == "https" ? https : false else { return false }
    let h = host.lowercased()
    return !bypass.contains { $0 == "*" || h == $0 || h.hasSuffix("." + $0) }
  }
}
