internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// What a server says about a task's URL without sending its body.
public struct RemoteFact: Sendable, Hashable {
  /// HTTP status of the final response (0 for file: URLs or when none arrived).
  public var status: Int
  public var contentLength: Int64?
  public var validators = Validators(etag: nil, lastModified: nil, dateIsStrong: false)
  /// Why the check failed, when it did.
  public var error: String?
}

/// `plan --remote`: one HEAD (conditional where a validator is known) per
/// task through one libcurl multi handle, at most `parallel` at a time.
/// Redirects (at most 10, http/https only) are followed here rather than by
/// libcurl, so that manifest headers are sent only to the origin of the URL
/// being fetched.
public enum RemoteProbe {
  public struct Request: Sendable {
    public var id: String
    public var url: SourceURL
    public var headers: [Header]
    /// The task's request policy: its conditions are sent (never its Range).
    public var policy: RequestPolicy
    public var connectTimeout: TimeSpan
    public var network: NetworkOptions
    public var secrets: Secrets
    /// A source that maps its URLs onto HTTP: where the HEAD goes instead, signed.
    public var target: SignedTarget? = nil
  }

  /// Why a URL could not be mapped onto HTTP, in words.
  public struct MappingFailure: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
  }

  /// How the probe reaches servers, as `apply` does.
  public struct Options: Sendable {
    public var parallel: Int
    public var timeout: TimeSpan = .seconds(30)
    public var environment = NetworkEnvironment()
    public var verbose: (@Sendable (String) -> Void)? = nil
    /// For a URL of a scheme libcurl does not serve: where to send its HEAD
    /// (nil: not probed; a failure: the reason, shown in the plan).
    public var mapped: (@Sendable (SourceURL, NetworkOptions) -> Result<SignedTarget, MappingFailure>?)? = nil
    public init(parallel: Int) { self.parallel = parallel }
  }

  /// One HEAD per request (at most `parallel` at a time); the answers by task id.
  public static func probe(_ requests: [Request], options: Options) -> [String: RemoteFact] {
    guard let multi = CurlMulti() else {
      return Dictionary(
        requests.map { ($0.id, RemoteFact(status: 0, error: "libcurl could not start")) },
        uniquingKeysWith: { a, _ in a })
    }
    defer { multi.close() }
    let run = ProbeRun(requests, options: options, multi: multi)
    run.refill()
    while !run.active.isEmpty {
      multi.perform { handle, code in run.finished(handle, code: code) }
      run.refill()
      if !run.active.isEmpty { multi.wait(milliseconds: 1000) }
    }
    return run.results
  }

  /// `url` is on the origin of `entryURL` (the task's own URL): where
  /// manifest headers and netrc credentials may go. The same URL needs no parsing.
  static func sameOrigin(_ url: String, _ entryURL: String) -> Bool {
    url == entryURL || origin(of: url) == origin(of: entryURL)
  }

  /// `scheme://host:port` of an absolute http(s) URL, lower-cased.
  static func origin(of url: String) -> String {
    let u = Array(url.utf8)
    let slash = UInt8(ascii: "/")
    guard let c = u.firstIndex(of: UInt8(ascii: ":")), c + 2 < u.count, u[c + 1] == slash, u[c + 2] == slash else {
      return ""
    }
    let scheme = String(decoding: u[..<c], as: UTF8.self).lowercased()
    let from = c + 3
    let end =
      u[from...].firstIndex(where: { $0 == slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? u.count
    var auth = u[from..<end]
    if let at = auth.lastIndex(of: UInt8(ascii: "@")) { auth = auth[(at + 1)...] }
    var host = auth
    var port = scheme == "https" ? 443 : 80
    if let colon = auth.lastIndex(of: UInt8(ascii: ":")), auth.last != UInt8(ascii: "]"),
      let p = Int(String(decoding: auth[(colon + 1)...], as: UTF8.self))
    {
      host = auth[..<colon]
      port = p
    }
    return "\(scheme)://\(String(decoding: host, as: UTF8.self).lowercased()):\(port)"
  }

}

/// One `plan --remote` probe in flight: its requests, its handles, its answers.
private final class ProbeRun {
  struct Active {
    var request: RemoteProbe.Request
    var hops: Int
    var easy: EasyRequest
  }
  let options: RemoteProbe.Options
  let multi: CurlMulti
  var pending: ArraySlice<RemoteProbe.Request>
  var active: [UnsafeMutableRawPointer: Active] = [:]
  var results: [String: RemoteFact] = [:]

  init(_ requests: [RemoteProbe.Request], options: RemoteProbe.Options, multi: CurlMulti) {
    pending = requests[...]
    self.options = options
    self.multi = multi
  }

  func refill() {
    while active.count < max(1, options.parallel), let r = pending.popFirst() {
      start(r, url: r.target?.url ?? r.url.text.revealed, hops: 0)
    }
  }

  func start(_ r: RemoteProbe.Request, url: String, hops: Int) {
    guard let easy = EasyRequest() else {
      results[r.id] = RemoteFact(status: 0, error: "libcurl could not create a handle")
      return
    }
    easy.shareSessions(of: r.url.host, in: multi)
    let isFile = r.url.scheme == "file"
    let entryURL = r.target?.url ?? r.url.text.revealed
    easy.configure(
      url: url, entryURL: entryURL, isFile: isFile, network: r.network,
      environment: options.environment, connectTimeout: r.connectTimeout)
    let secrets = r.target.map { Secrets(all: [r.secrets, $0.secrets]) } ?? r.secrets
    if let log = options.verbose { easy.trace(VerboseSink(id: r.id, secrets: secrets, log: log)) }
    easy.set(CURLOPT_NOBODY, 1)
    easy.set(CURLOPT_TIMEOUT, Int(options.timeout.seconds))
    if !isFile {
      // The conditions of the task's request; a resume's Range is not asked for by a HEAD.
      var policy = r.policy
      if case .resume = policy.condition { policy.condition = .none }
      easy.setRequestHeaders(
        url: url, entryURL: entryURL,
        manifest: r.headers.map { "\($0.name): \($0.value.revealed)" } + (r.target?.headers ?? []),
        conditions: policy.headerLines(partialSize: 0))
      if let sig = r.target?.signing { easy.sign(sig) }
    }
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_HEADERFUNCTION, headerCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(easy).toOpaque())
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_WRITEFUNCTION, discardCallback)
    active[easy.handle] = Active(request: r, hops: hops, easy: easy)
    multi.add(easy)
  }

  /// A HEAD ended: its answer, or the next hop of a redirect.
  func finished(_ handle: UnsafeMutableRawPointer, code: CURLcode) {
    guard let a = active.removeValue(forKey: handle) else { return }
    multi.remove(a.easy)
    let r = a.request
    if code != CURLE_OK {
      if case .failed(let failure) = CurlFailure.outcome(code: code, easy: a.easy) {
        results[r.id] = RemoteFact(status: 0, error: failure.message)
      }
      return
    }
    let status = a.easy.info(CURLINFO_RESPONSE_CODE)
    let location = a.easy.infoString(CURLINFO_REDIRECT_URL)
    switch Redirect.decide(status: status, location: location, hops: a.hops) {
    case .follow(let next)?: return start(r, url: next, hops: a.hops + 1)
    case .refuse(let why)?: return results[r.id] = RemoteFact(status: status, error: why)
    case nil: break
    }
    let length = a.easy.infoOff(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
    var fact = RemoteFact(
      status: status, contentLength: length >= 0 ? length : nil,
      validators: Validators(
        etag: a.easy.header("ETag"), lastModified: a.easy.header("Last-Modified"), date: a.easy.header("Date")))
    if status >= 400 { fact.error = "HTTP \(status)" }
    results[r.id] = fact
  }
}
