import SyncFiles
import SyncFilesCore
import SyncFilesManifest

/// The monitors a run pings (SPEC §10.4): `--notify`, else each manifest's
/// `notify` (once per URL). A ping that fails is a warning on stderr, and
/// the run's exit code stands.
struct Monitors {
  let pings: [MonitorPing]

  init(flag: String?, manifests: [Manifest], verbose: Bool) {
    let environment = NetworkEnvironment(environment: Runtime.environment)
    let log: (@Sendable (String) -> Void)? = verbose ? { @Sendable in Output.error($0) } : nil
    if let flag {
      let (display, secrets) = Self.masked(flag)
      pings = [MonitorPing(url: flag, display: display, secrets: secrets, environment: environment, verbose: log)]
      return
    }
    var seen = Set<String>()
    pings = manifests.compactMap { m in
      guard let u = m.notify, seen.insert(u.text.revealed).inserted else { return nil }
      return MonitorPing(
        url: u.text.revealed, display: u.display, secrets: m.secrets, environment: environment, verbose: log)
    }
  }

  /// A URL given on the command line, shown with the password of its userinfo masked.
  static func masked(_ url: String) -> (String, Secrets) {
    guard let schemeEnd = url.firstRange(of: "://") else { return (url, Secrets()) }
    let rest = url[schemeEnd.upperBound...]
    let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
      return (PresignedQuery.masking(url), Secrets())
    }
    let password = String(authority[authority.index(after: colon)..<at])
    let secrets = Secrets([password])
    return (secrets.masking(PresignedQuery.masking(url), with: "***"), secrets)
  }

  func start() {
    for p in pings { if let w = p.start() { Output.error("syncfiles: warning: \(w)") } }
  }

  func finish(exitCode: Int32, report: [UInt8]) {
    for p in pings {
      if let w = p.finish(exitCode: exitCode, report: report) { Output.error("syncfiles: warning: \(w)") }
    }
  }
}
