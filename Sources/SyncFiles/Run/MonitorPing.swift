import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// `notify: URL` (SPEC §10.4): the healthchecks convention that cron
/// monitors (healthchecks.io, Cronitor, Uptime Kuma) follow. `URL/start`
/// when a run begins; `URL/N` when it ends with exit code N, the run's JSON
/// report as the body. A ping takes at most 10 s in all, retries within
/// them, and never changes the run's outcome: a failed ping is a warning.
public struct MonitorPing: Sendable {
  /// The URL as given, and as shown (secrets masked).
  public let url: String
  public let display: String
  let secrets: Secrets
  let environment: NetworkEnvironment
  let verbose: (@Sendable (String) -> Void)?

  /// All the time one ping may take, its retries included.
  static let budget = 10.0

  public init(
    url: String, display: String, secrets: Secrets, environment: NetworkEnvironment,
    verbose: (@Sendable (String) -> Void)? = nil
  ) {
    self.url = url
    self.display = display
    self.secrets = secrets
    self.environment = environment
    self.verbose = verbose
  }

  /// The ping of a run that begins; nil when it was heard, else why not.
  public func start() -> String? { send("start", body: nil) }

  /// The ping of a run that ended with `exitCode`, carrying `report`.
  public func finish(exitCode: Int32, report: [UInt8]) -> String? { send("\(exitCode)", body: report) }

  /// `URL/suffix`, the query (if any) kept after it.
  static func url(_ base: String, _ suffix: String) -> String {
    var head = Substring(base)
    var query = Substring("")
    if let q = base.firstIndex(where: { $0 == "?" || $0 == "#" }) {
      head = base[..<q]
      query = base[q...]
    }
    while head.hasSuffix("/") { head = head.dropLast() }
    return head + "/" + suffix + query
  }

  func send(_ suffix: String, body: [UInt8]?) -> String? {
    let end = monotonicSeconds() + Self.budget
    var options = SmallGet.Options(network: NetworkOptions(), environment: environment, connectTimeout: .seconds(10))
    options.body = body
    options.verbose = verbose
    options.id = "notify"
    if body != nil { options.conditions = ["Content-Type: application/json"] }
    let target = SignedTarget(url: Self.url(url, suffix), signing: .unsigned, headers: [], secrets: secrets)
    var why = "no time left"
    var wait = 0.25
    while true {
      let left = end - monotonicSeconds()
      if left < 0.05 { break }
      options.timeoutMilliseconds = Int(left * 1000)
      switch SmallGet.fetch(target, options: options) {
      case .success(let a) where (200..<300).contains(a.status): return nil
      case .success(let a):
        why = "HTTP \(a.status)"
        if !TransferOutcome.isTransient(status: a.status) { return failed(suffix, why) }
      case .failure(let e):
        why = e.message
        if !e.isRetryable { return failed(suffix, why) }
      }
      let pause = min(wait, end - monotonicSeconds())
      if pause <= 0 { break }
      usleep(UInt32(pause * 1_000_000))
      wait *= 2
    }
    return failed(suffix, why + " (gave up after \(Int(Self.budget)) s)")
  }

  private func failed(_ suffix: String, _ why: String) -> String {
    secrets.masking("notify ping \(Self.url(display, suffix)) failed: \(why); the run's outcome stands", with: "***")
  }
}
