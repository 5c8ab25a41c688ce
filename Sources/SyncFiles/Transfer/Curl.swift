internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// libcurl's global state: initialised once, before any thread uses it.
enum CurlGlobal {
  static let ready: Bool = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK }()
}

/// TLS sessions shared by a driver's easy handles (a `CURLSH`), one share
/// per host (`CurlMulti.share(for:)`). Without it
/// each handle kept its own, so every handle's first connection to a server
/// was a full handshake, and so was every `plan --remote` probe's: against
/// an HTTP/1.1 server over TLS that closed connections after two requests,
/// a run 4 at a time made 8 full handshakes in 22 connections (and
/// `curl --parallel`, whose handles share their sessions, 1 in 43 for 200
/// files 8 at a time; TLS session reuse). libcurl matches a session to the host, port and TLS
/// options it was made under, so a request under other trust never resumes
/// one. The driver keeps each host's share, and each handle the one it
/// uses: a share is freed after both let go of it.
final class CurlShare: @unchecked Sendable {
  let raw: UnsafeMutablePointer<sf_share>

  /// Nil when libcurl cannot share TLS sessions (the handles then keep their own).
  init?() {
    guard CurlGlobal.ready, let s = sf_share_new() else { return nil }
    raw = s
  }

  deinit { sf_share_free(raw) }
}

/// One easy handle and what it needs to stay alive while libcurl uses it.
/// Confined to the thread that drives the multi handle.
final class EasyRequest {
  let handle: UnsafeMutableRawPointer
  private var headerList: UnsafeMutablePointer<curl_slist>?
  /// Response header lines of the last response (after redirects, only the final one is kept).
  var headers: [String] = []
  /// `CURLOPT_ERRORBUFFER`: libcurl's own words on a failure (why a handshake failed).
  let errorBuffer: UnsafeMutablePointer<CChar>
  /// `--verbose`: where the debug callback writes; alive as long as the handle.
  var verbose: VerboseSink?
  /// The options every request of this shape shares, when the handle holds
  /// them (set by the last request, kept since); nil when it holds any other.
  var shape: RequestShape?
  /// `curl_easy_reset` calls so far (tests: a request of the shape before skips it).
  private(set) var resets = 0

  /// The TLS sessions this handle shares, and the host they are of;
  /// released after the handle is cleaned up.
  private var share: CurlShare?
  private var shareHost: String?

  init?() {
    guard CurlGlobal.ready, let h = curl_easy_init() else { return nil }
    handle = h
    errorBuffer = .allocate(capacity: Int(sf_error_size))
    errorBuffer.initialize(repeating: 0, count: Int(sf_error_size))
  }

  /// Shares the TLS sessions of `host` from `multi` (kept by
  /// `curl_easy_reset`: set again only when the host changes). Call only
  /// while the handle is out of the multi handle.
  func shareSessions(of host: String, in multi: CurlMulti) {
    guard host != shareHost, let s = multi.share(for: host) else { return }
    _ = sf_easy_set_share(handle, s.raw)
    share = s  // the one it replaces is no longer used by the handle
    shareHost = host
  }

  deinit {
    curl_easy_cleanup(handle)
    if let headerList { curl_slist_free_all(headerList) }
    errorBuffer.deallocate()
  }

  /// Makes the handle ready for another request. For a request whose shape
  /// the handle holds (`next`), its options stay: that request sets the same
  /// ones again, and its own (URL, header lines, callbacks' data) over them,
  /// so only its header list goes. For any other, `curl_easy_reset`: every
  /// option back to its default, callbacks included (libcurl keeps its
  /// caches). Either way libcurl begins each transfer with fresh
  /// per-transfer state. Call only once the handle is out of the multi handle.
  func recycle(for next: RequestShape?) {
    if let next, next == shape {
      _ = sf_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, nil)
    } else {
      curl_easy_reset(handle)
      shape = nil
      resets += 1
    }
    if let headerList { curl_slist_free_all(headerList) }
    headerList = nil
    headers.removeAll()
    verbose = nil
    errorBuffer[0] = 0
  }

  /// A string option, or nil to unset it (libcurl's default is dropped).
  func set(_ option: CURLoption, _ value: String?) {
    guard let value else {
      _ = sf_easy_setopt_string(handle, option, nil)
      return
    }
    set(option, value)
  }

  func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer) {
    _ = sf_easy_setopt_pointer(handle, option, pointer)
  }

  func set(_ option: CURLoption, _ value: Int) {
    _ = sf_easy_setopt_long(handle, option, value)
  }

  /// libcurl copies string options (since 7.17.0; CURLOPT_POSTFIELDS, the
  /// exception, is not used: a ping's body goes by CURLOPT_COPYPOSTFIELDS),
  /// so the C string lives only for the call.
  func set(_ option: CURLoption, _ value: String) {
    _ = value.withCString { sf_easy_setopt_string(handle, option, $0) }
  }

  /// One more request header line (libcurl copies it); `commitHeaders` hands
  /// the list over. Through `withCString`, which hands over a long native
  /// string's own bytes: passed as a String argument, each line was first
  /// copied into a new array.
  func appendHeader(_ line: String) { headerList = line.withCString { curl_slist_append(headerList, $0) } }

  func commitHeaders() { _ = sf_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList) }

  func info(_ i: CURLINFO) -> Int {
    var v = 0
    _ = sf_easy_getinfo_long(handle, i, &v)
    return v
  }

  func infoOff(_ i: CURLINFO) -> Int64 {
    var v: curl_off_t = -1
    _ = sf_easy_getinfo_off(handle, i, &v)
    return Int64(v)
  }

  func infoString(_ i: CURLINFO) -> String? {
    var p: UnsafePointer<CChar>? = nil
    _ = sf_easy_getinfo_string(handle, i, &p)
    return p.map { String(cString: $0) }
  }

  /// The value of a response header (case-insensitive), from the last response.
  func header(_ name: String) -> String? {
    headerValue(name, in: headers)
  }
}

/// Collects response header lines; a status line starts a new response.
let headerCallback: sf_curl_data_cb = { ptr, size, count, userdata in
  let n = size * count
  guard let ptr, let userdata else { return n }
  let request = Unmanaged<EasyRequest>.fromOpaque(userdata).takeUnretainedValue()
  let line = String(decoding: UnsafeRawBufferPointer(start: ptr, count: n), as: UTF8.self)
  if line.hasPrefix("HTTP/") { request.headers.removeAll() }
  request.headers.append(line)
  return n
}

/// Discards any body (a HEAD has none; a misbehaving server's is not kept).
let discardCallback: sf_curl_data_cb = { _, size, count, _ in size * count }
