import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// `s3://BUCKET/KEY` (SPEC §9.4): a built-in source behind the same
/// `SourcePlugin` seam as the others. Each request goes through the libcurl
/// engine, signed with SigV4 by libcurl itself, so every guarantee of HTTP
/// holds: revalidation by ETag (304), resume with `Range` and `If-Match`
/// (a changed object answers 412 and the file starts over), ranges for
/// large objects, `max_bytes`, sha256 and the atomic install.
public final class S3Source: SourcePlugin {
  public let info = PluginInfo(
    kind: .source, name: "s3", path: nil, protocolVersion: 1,
    summary: "S3 and the stores that speak its API: SigV4 through libcurl, ETag revalidation, If-Match resume")

  /// The environment settings and credentials are found in (the AWS CLI's
  /// variables); nil: this process's, read when a run first needs S3.
  let environment: [String: String]?
  let readFile: @Sendable (String) -> String?

  public init(
    environment: [String: String]? = nil, readFile: @escaping @Sendable (String) -> String? = S3Source.readText
  ) {
    self.environment = environment
    self.readFile = readFile
  }

  public func makeTransport(_ options: TransportOptions) -> (any Transport)? {
    guard
      let engine = TransferEngine(
        perHost: options.perHost, rate: options.rate, environment: options.environment, verbose: options.verbose,
        segments: options.segments, parallel: options.parallel)
    else { return nil }
    return S3Transport(engine: engine, environment: environment ?? Runtime.environment, readFile: readFile)
  }

  /// Where `plan --remote` sends its HEAD for an `s3://` URL, signed as a
  /// transfer is; a message when it cannot (no credentials, not a key).
  public static func probeTarget(
    url: String, options: S3Options, environment: [String: String],
    readFile: @escaping @Sendable (String) -> String? = S3Source.readText
  ) -> Result<SignedTarget, S3Settings.Problem>? {
    guard let (bucket, key) = S3Object.parse(url) else { return nil }
    return S3Settings.resolve(environment: environment, readFile: readFile, options: options).map {
      $0.target(bucket: bucket, key: key)
    }
  }

  /// A small text file's contents, or nil.
  public static let readText: @Sendable (String) -> String? = { path in
    guard case .success(let bytes) = FileIO.readAll(path, limit: 1 << 20) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// One run's S3 requests: each task's `s3://` URL made an HTTPS request to
/// the endpoint, signed, and its S3 error codes put in words.
final class S3Transport: Transport, @unchecked Sendable {
  let engine: TransferEngine
  let environment: [String: String]
  let readFile: @Sendable (String) -> String?
  private let lock = Lock()
  /// Settings per `s3:` options of the entries met (most runs meet one).
  private var found: [S3Options: Result<S3Settings, S3Settings.Problem>] = [:]

  init(engine: TransferEngine, environment: [String: String], readFile: @escaping @Sendable (String) -> String?) {
    self.engine = engine
    self.environment = environment
    self.readFile = readFile
  }

  func settings(_ options: S3Options) -> Result<S3Settings, S3Settings.Problem> {
    lock.locked {
      if let known = found[options] { return known }
      let made = S3Settings.resolve(environment: environment, readFile: readFile, options: options)
      found[options] = made
      return made
    }
  }

  var keepsLimits: Bool { true }
  var bytesReceived: Int64 { engine.bytesReceived }
  func stopAll() { engine.stopAll() }
  func shutdown() { engine.shutdown() }

  func start(_ spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void) {
    let s: S3Settings
    switch settings(spec.network.s3) {
    case .success(let found): s = found
    case .failure(let problem): return done(failed(spec, problem.message, retryable: false))
    }
    guard let (bucket, key) = S3Object.parse(spec.url) else {
      return done(failed(spec, "\(spec.url) is not s3://BUCKET/KEY", retryable: false))
    }
    let t = s.target(bucket: bucket, key: key)
    let sent = spec.sent(to: t.url, signing: t.signing, headers: t.headers, secrets: t.secrets)
    engine.start(sent) { r in done(S3Object.named(r, bucket: bucket, key: key)) }
  }

  private func failed(_ spec: TransferSpec, _ why: String, retryable: Bool) -> TransferResult {
    TransferResult(
      id: spec.id, outcome: .failed(.plugin(.reported(plugin: "s3", why: why, retryable: retryable))),
      hasher: spec.hasher)
  }
}

/// An object's address, and what S3's answers about it mean.
enum S3Object {
  /// SHA-256 of the empty body of a GET, which S3 wants named in `x-amz-content-sha256`.
  static let emptyBodySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

  /// `s3://BUCKET/PREFIX/` (or `s3://BUCKET/`) as its bucket and prefix.
  static func parsePrefix(_ url: String) -> (bucket: String, prefix: String)? {
    guard url.hasPrefix("s3://"), url.hasSuffix("/") else { return nil }
    let rest = url.dropFirst(5)
    guard let slash = rest.firstIndex(of: "/") else { return nil }
    let bucket = String(rest[..<slash])
    guard !bucket.isEmpty else { return nil }
    return (bucket, String(rest[rest.index(after: slash)...]))
  }

  /// `s3://BUCKET/KEY` as its bucket and key (the key may hold `/`).
  static func parse(_ url: String) -> (bucket: String, key: String)? {
    guard url.hasPrefix("s3://") else { return nil }
    let rest = url.dropFirst(5)
    guard let slash = rest.firstIndex(of: "/") else { return nil }
    let bucket = String(rest[..<slash])
    let key = String(rest[rest.index(after: slash)...])
    guard !bucket.isEmpty, !key.isEmpty else { return nil }
    return (bucket, key)
  }

  /// `r` with an error status put in S3's own words: its code, the key, and
  /// what to do. `SlowDown` and 5xx stay HTTP failures, retried with backoff.
  static func named(_ r: TransferResult, bucket: String, key: String) -> TransferResult {
    guard case .http(let status, _) = r.outcome, status != 503, status < 500 else { return r }
    let body = String(decoding: r.errorBody, as: UTF8.self)
    let code = element("Code", in: body) ?? "HTTP \(status)"
    var out = r
    let why =
      "\(code) for s3://\(bucket)/\(key): \(advice(code, status: status, message: element("Message", in: body)))"
    out.outcome = .failed(.plugin(.reported(plugin: "s3", why: why, retryable: retryable(code))))
    return out
  }

  static func advice(_ code: String, status: Int, message: String?) -> String {
    switch code {
    case "NoSuchKey": return "no object has this key (check the key, and its case)"
    case "NoSuchBucket": return "the bucket does not exist (check its name, the region and the endpoint)"
    case "AccessDenied": return "the credentials may not read this object (check the key's policy and the bucket's)"
    case "InvalidAccessKeyId":
      return "the access key id is not known to the store (check AWS_ACCESS_KEY_ID or the profile)"
    case "SignatureDoesNotMatch":
      return "the store computed another signature (check the secret access key, and the region)"
    case "ExpiredToken", "TokenRefreshRequired": return "the session token has expired (get new credentials)"
    case "InvalidToken": return "the session token is not valid (check AWS_SESSION_TOKEN)"
    case "RequestTimeTooSkewed": return "this machine's clock is too far from the store's (set the time, e.g. with NTP)"
    case "PermanentRedirect", "AuthorizationHeaderMalformed":
      return "the bucket is in another region (set AWS_REGION to the bucket's region)"
    default: return message ?? "HTTP \(status)"
    }
  }

  /// Codes worth a retry: throttling and the store's own trouble.
  static func retryable(_ code: String) -> Bool {
    ["SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout"].contains(code)
  }

  /// The text of the first `<name>` element of an S3 XML answer.
  static func element(_ name: String, in xml: String) -> String? {
    guard let open = xml.firstRange(of: "<\(name)>"),
      let close = xml[open.upperBound...].firstRange(of: "</\(name)>")
    else { return nil }
    return String(xml[open.upperBound..<close.lowerBound])
  }
}
