internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// How requests reach servers, the same for `apply` and `plan --remote`:
/// TLS trust (manifest `tls:`, else the environment as curl reads it),
/// proxies (manifest `proxy:`, else the environment), `netrc:`, HTTP/2
/// multiplexing, and `--verbose`.
public struct NetworkEnvironment: Sendable {
  /// `CURL_CA_BUNDLE`, else `SSL_CERT_FILE`.
  public var caBundle: String?
  /// `SSL_CERT_DIR`.
  public var caDirectory: String?
  /// `$NETRC`, else `$HOME/.netrc`.
  public var netrcFile: String?
  /// No proxy variable is set at all (`http_proxy`, `https_proxy`,
  /// `all_proxy`, in either case): libcurl would find no proxy, so it is
  /// told so, and does not read five variables again for every request.
  /// False when the environment is not known (`init()`).
  public var proxyVariablesAbsent = false

  static let proxyVariables = ["http_proxy", "https_proxy", "all_proxy"].flatMap { [$0, $0.uppercased()] }

  public init(environment: [String: String]) {
    func value(_ k: String) -> String? { environment[k].flatMap { $0.isEmpty ? nil : $0 } }
    caBundle = value("CURL_CA_BUNDLE") ?? value("SSL_CERT_FILE")
    caDirectory = value("SSL_CERT_DIR")
    netrcFile = value("NETRC") ?? value("HOME").map { $0 + "/.netrc" }
    proxyVariablesAbsent = Self.proxyVariables.allSatisfy { environment[$0] == nil }
  }

  public init() {
    self.init(environment: [:])
    proxyVariablesAbsent = false
  }
}

/// Writes every request and response header of a transfer to a log, with
/// credentials and `${VAR}` values shown as `***` (`--verbose`).
final class VerboseSink {
  let id: String
  let secrets: Secrets
  let log: @Sendable (String) -> Void
  static let hidden = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-amz-security-token"]

  init(id: String, secrets: Secrets, log: @escaping @Sendable (String) -> Void) {
    self.id = id
    self.secrets = secrets
    self.log = log
  }

  func write(_ kind: Int32, _ text: String) {
    let mark: String
    switch kind {
    case sf_info_header_out: mark = ">"
    case sf_info_header_in: mark = "<"
    case sf_info_text: mark = "*"
    default: return
    }
    for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\r\n" || $0 == "\n" }) {
      log("\(id): \(mark) \(masked(String(raw)))")
    }
  }

  /// A header line with its value hidden when it is a credential, and any secret value hidden everywhere.
  func masked(_ line: String) -> String {
    if let colon = line.firstIndex(of: ":"), Self.hidden.contains(line[..<colon].lowercased()) {
      return line[...colon] + " ***"
    }
    return PresignedQuery.masking(secrets.masking(line, with: "***"), with: "***")
  }
}

let verboseCallback: sf_curl_debug_cb = { _, type, data, size, userdata in
  guard let data, let userdata else { return 0 }
  let sink = Unmanaged<VerboseSink>.fromOpaque(userdata).takeUnretainedValue()
  sink.write(Int32(type.rawValue), String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self))
  return 0
}

/// What the options of an engine's request depend on besides its URL,
/// header lines and transfer: two requests of one shape set the same
/// options to the same values, so a handle keeps them from one to the next
/// (`EasyRequest.recycle(for:)`: resetting and setting them again was a
/// cost paid at every request). Only plain requests have
/// one (`TransferEngine.requestShape`): not `file:`, not under `--verbose` or a rate
/// cap, and with no credentials from netrc or the URL.
///
/// A class of constants, made once per `TransferSpec`: a handle holds it
/// and each request is compared with it by reference first. As a struct,
/// each comparison and hand-over copied its `NetworkOptions` (copies and
/// releases at every request).
final class RequestShape: Equatable, Sendable {
  let network: NetworkOptions
  let connectTimeout: TimeSpan
  let stall: TimeSpan

  init(network: NetworkOptions, connectTimeout: TimeSpan, stall: TimeSpan) {
    self.network = network
    self.connectTimeout = connectTimeout
    self.stall = stall
  }

  static func == (a: RequestShape, b: RequestShape) -> Bool {
    a === b || (a.connectTimeout == b.connectTimeout && a.stall == b.stall && a.network == b.network)
  }
}

extension EasyRequest {
  static let userAgent = "syncfiles/\(Runtime.version)"

  /// Options every request shares: protocols, TLS verification and trust,
  /// proxy, netrc (only for the entry's own origin), HTTP/2 waiting, timeouts.
  func configure(
    url: String, entryURL: String, isFile: Bool, network: NetworkOptions, environment env: NetworkEnvironment,
    connectTimeout: TimeSpan
  ) {
    set(CURLOPT_URL, url)
    set(CURLOPT_PROTOCOLS_STR, isFile ? "file" : "http,https")
    // Redirects are followed by syncfiles, not libcurl: headers and netrc must not reach another origin.
    set(CURLOPT_FOLLOWLOCATION, 0)
    set(CURLOPT_NOSIGNAL, 1)
    set(CURLOPT_CONNECTTIMEOUT_MS, Int(connectTimeout.seconds * 1000))
    set(CURLOPT_USERAGENT, Self.userAgent)
    set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
    guard !isFile else { return }
    set(CURLOPT_SSL_VERIFYPEER, 1)
    set(CURLOPT_SSL_VERIFYHOST, 2)
    waitForMultiplexing(url: url)
    configureTrust(network.tls, environment: env)
    switch network.proxy {
    case .url(let u)?: set(CURLOPT_PROXY, u.revealed)
    case nil where !env.proxyVariablesAbsent:
      break  // libcurl reads http_proxy, https_proxy, all_proxy and no_proxy itself
    case .none?, nil:
      // No proxy, and so no `no_proxy` to read either.
      set(CURLOPT_PROXY, "")
      set(CURLOPT_NOPROXY, "")
    }
    // A CONNECT tunnel's own "200 Connection established" is never the file's response.
    set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
    if let netrc = network.netrc, RemoteProbe.sameOrigin(url, entryURL) {
      switch netrc {
      case .standard:
        set(CURLOPT_NETRC, Int(sf_netrc_optional))
        if let f = env.netrcFile { set(CURLOPT_NETRC_FILE, f) }
      case .file(let f):
        set(CURLOPT_NETRC, Int(sf_netrc_optional))
        set(CURLOPT_NETRC_FILE, f)
      case .off: break
      }
    }
  }

  /// HTTP/2: wait for a connection that may multiplex rather than open
  /// another, only where one can: ALPN offers h2 on https alone (through a
  /// proxy too, inside its CONNECT tunnel). An http:// connection never
  /// multiplexes, and waiting on it held every transfer to the host behind
  /// the one in flight. Set for every request: a recycled handle may have
  /// served the other scheme.
  /// libcurl signs the request (AWS SigV4) with these keys.
  func sign(_ s: RequestSigning) {
    set(CURLOPT_AWS_SIGV4, s.provider)
    set(CURLOPT_USERPWD, s.credentials)
  }

  func waitForMultiplexing(url: String) {
    set(CURLOPT_PIPEWAIT, url.hasPrefix("https:") ? 1 : 0)
  }

  /// The request's header lines: `Accept-Encoding: identity` (checksums are
  /// of the bytes as stored), the manifest's headers only when `url` is on
  /// the origin of the task's own URL, then `conditions` (validators, Range).
  func setRequestHeaders(url: String, entryURL: String, manifest: [String], conditions: [String]) {
    // Each line straight into libcurl's list: no array of them made per request.
    appendHeader("Accept-Encoding: identity")
    if !manifest.isEmpty && RemoteProbe.sameOrigin(url, entryURL) {
      for l in manifest { appendHeader(l) }
    }
    for l in conditions { appendHeader(l) }
    commitHeaders()
  }

  /// The manifest's `tls:` keys replace the system store; without them the
  /// environment does, as the curl tool reads it.
  private func configureTrust(_ tls: TLSOptions, environment env: NetworkEnvironment) {
    if tls.caFile != nil || tls.caPath != nil {
      set(CURLOPT_CAINFO, tls.caFile)
      set(CURLOPT_CAPATH, tls.caPath)
      set(CURLOPT_PROXY_CAINFO, tls.caFile)
      set(CURLOPT_PROXY_CAPATH, tls.caPath)
    } else {
      if let f = env.caBundle {
        set(CURLOPT_CAINFO, f)
        set(CURLOPT_PROXY_CAINFO, f)
      }
      if let d = env.caDirectory {
        set(CURLOPT_CAPATH, d)
        set(CURLOPT_PROXY_CAPATH, d)
      }
    }
    if let c = tls.clientCert { set(CURLOPT_SSLCERT, c) }
    if let k = tls.clientKey { set(CURLOPT_SSLKEY, k) }
  }

  /// `--verbose`: headers both ways, masked, to `sink` (kept alive by this handle).
  func trace(_ sink: VerboseSink) {
    verbose = sink
    set(CURLOPT_VERBOSE, 1)
    _ = sf_easy_setopt_debug_cb(handle, verboseCallback)
    _ = sf_easy_setopt_pointer(handle, CURLOPT_DEBUGDATA, Unmanaged.passUnretained(sink).toOpaque())
  }

  /// What libcurl's error buffer says about the last failure.
  var errorDetail: String {
    let s = String(cString: errorBuffer).trimmingWhitespace()
    return s
  }
}
