internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// The one libcurl multi driver: `apply`'s transfer engine and
/// `plan --remote`'s probe both run their easy handles through it. One
/// `step` is perform, hand each finished handle to its owner, then wait
/// (`curl_multi_poll`) until a socket is ready, `wake` is called or the
/// timeout passes. Confined to the thread that calls `step`, except `wake`.
final class CurlMulti: @unchecked Sendable {
  let handle: UnsafeMutableRawPointer
  /// The TLS sessions of the handles this driver runs, one share per host
  /// (`share(for:)`).
  private var shares: [String: CurlShare] = [:]
  private let sharesLock = Lock()

  /// Nil when libcurl cannot start. `maxPerHost` caps connections per host;
  /// HTTP/2 streams are multiplexed on one connection where offered.
  init?(maxPerHost: Int? = nil) {
    guard CurlGlobal.ready, let m = curl_multi_init() else { return nil }
    handle = m
    if let maxPerHost { _ = sf_multi_setopt_long(m, CURLMOPT_MAX_HOST_CONNECTIONS, maxPerHost) }
    _ = sf_multi_setopt_long(m, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
    // Idle connections kept for reuse. libcurl's default is four per handle
    // added *now*: whenever few transfers were in flight it closed the
    // connections over that, and opened them again a moment later.
    _ = sf_multi_setopt_long(m, CURLMOPT_MAXCONNECTS, max(32, 4 * (maxPerHost ?? 8)))
  }

  /// The share of `host`'s TLS sessions; nil when libcurl cannot share them.
  /// One per host: libcurl keeps 8 sessions in a share and drops the least
  /// recently used, so with one share for all, a run across twelve hosts
  /// found each host's session gone by its next connection (21 of 36
  /// connections full handshakes, against 12). Callable from any thread.
  func share(for host: String) -> CurlShare? {
    sharesLock.locked {
      if let s = shares[host] { return s }
      let s = CurlShare()
      shares[host] = s
      return s
    }
  }

  /// Call once, after the last `step`.
  func close() { curl_multi_cleanup(handle) }

  func add(_ easy: EasyRequest) { curl_multi_add_handle(handle, easy.handle) }
  func remove(_ easy: EasyRequest) { curl_multi_remove_handle(handle, easy.handle) }

  /// Ends a `wait` early; callable from any thread.
  func wake() { curl_multi_wakeup(handle) }

  /// Moves every transfer on and calls `finished` with each easy handle
  /// libcurl is done with and its result code (the handle is still added:
  /// the owner removes it).
  func perform(_ finished: (UnsafeMutableRawPointer, CURLcode) -> Void) {
    var running: Int32 = 0
    curl_multi_perform(handle, &running)
    var left: Int32 = 0
    while let msg = curl_multi_info_read(handle, &left) {
      guard sf_msg_is_done(msg) != 0, let easy = sf_msg_easy(msg) else { continue }
      finished(easy, sf_msg_result(msg))
    }
  }

  /// Waits for socket activity, `wake`, or `milliseconds`.
  func wait(milliseconds: Int32) { curl_multi_poll(handle, nil, 0, milliseconds, nil) }
}
