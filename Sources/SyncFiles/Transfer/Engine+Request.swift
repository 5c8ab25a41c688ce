internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

// Setting up a request on a handle: URL, options, conditions and callbacks.
extension TransferEngine {
  func begin(_ t: Transfer, url: String, hops: Int) {
    let shape = requestShape(t.spec, url: url)
    guard let easy = takeHandle(for: shape) else {
      return t.done(t.result(.failed(.engine("libcurl could not create a handle"))))
    }
    configure(t, easy: easy, url: url, hops: hops, shape: shape)
    add(t, easy)
  }

  func add(_ t: Transfer, _ easy: EasyRequest) {
    active[easy.handle] = t
    multi.add(easy)
  }

  /// Gives `easy` the options of `t`'s request to `url`. Reads only what
  /// does not change after `init` and `t` itself: callers on any thread may
  /// set up a transfer the engine thread does not hold yet.
  func configure(_ t: Transfer, easy: EasyRequest, url: String, hops: Int, shape: RequestShape?) {
    t.reset(easy: easy, hops: hops)
    t.url = url
    let s = t.spec
    easy.shareSessions(of: s.host, in: multi)
    if shape != nil && easy.shape == shape {
      easy.set(CURLOPT_URL, url)  // the rest as the request before, of the same shape, left it
      easy.waitForMultiplexing(url: url)
    } else {
      easy.configure(
        url: url, entryURL: s.url, isFile: s.isFile, network: s.network,
        environment: environment, connectTimeout: s.connectTimeout)
      if let verbose { easy.trace(VerboseSink(id: s.id, secrets: s.secrets, log: verbose)) }
      easy.set(CURLOPT_LOW_SPEED_LIMIT, 1024)
      easy.set(CURLOPT_LOW_SPEED_TIME, Int(s.stall.seconds))
      // The entry's own cap is libcurl's, per handle: the ranges of a
      // segmented file share it, so that together they keep under it.
      let own = s.rate.map { max($0 / Int64(max(t.group?.wanted ?? 1, 1)), 1) }
      _ = sf_easy_setopt_off(easy.handle, CURLOPT_MAX_RECV_SPEED_LARGE, curl_off_t(own ?? 0))
      easy.set(CURLOPT_BUFFERSIZE, Self.readSize(sessionRate: bucket?.rate, ownRate: own))
      easy.shape = shape
    }
    if s.isFile {
      easy.set(CURLOPT_FILETIME, 1)
      if case .ifModifiedSince(let d) = s.request.condition, let since = HTTPDate.parse(d) {
        easy.set(CURLOPT_TIMECONDITION, Int(CURL_TIMECOND_IFMODSINCE.rawValue))
        _ = sf_easy_setopt_off(easy.handle, CURLOPT_TIMEVALUE_LARGE, curl_off_t(since.seconds))
      }
    } else {
      var conditions: [String] = []
      if let range = t.rangeHeaders {
        conditions = range
      } else if let end = t.firstPiece {
        conditions = s.request.headerLines(partialSize: 0) + ["Range: bytes=0-\(end - 1)"]
      } else {
        // A resume needs data to continue; without it the whole file is asked for.
        let size = t.partial?.size ?? 0
        if s.request.ifRange == nil || size > 0 { conditions = s.request.headerLines(partialSize: size) }
      }
      if let sig = s.signing {
        conditions = conditions.map { $0.hasPrefix("If-Range: ") ? sig.resumeHeader + $0.dropFirst(8) : $0 }
      }
      easy.setRequestHeaders(url: url, entryURL: s.url, manifest: s.headers, conditions: conditions)
      if let sig = s.signing { easy.sign(sig) }
    }
    let me = Unmanaged.passUnretained(t).toOpaque()
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_HEADERFUNCTION, transferHeaderCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_HEADERDATA, me)
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_WRITEFUNCTION, transferWriteCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_WRITEDATA, me)
  }

  /// The largest read of a handle. Under a rate cap, smaller reads keep the
  /// pacing smooth. libcurl checks its own cap between turns of the event
  /// loop, and one turn reads up to a hundred times while the socket has
  /// data: a five-hundredth of a second's worth keeps a turn to a fifth.
  static func readSize(sessionRate: Int64?, ownRate: Int64?) -> Int {
    var size: Int64 = 256 * 1024
    if let r = sessionRate { size = min(size, max(r / 16, 16 * 1024)) }
    if let r = ownRate { size = min(size, max(r / 500, 1024)) }
    return Int(size)
  }

  /// The shape of `s`'s request to `url`, or nil when its options are set
  /// afresh on a reset handle: `file:` (its time condition is the
  /// request's), `--verbose`, a rate cap (paused transfers, or the entry's own), and
  /// credentials libcurl keeps for a transfer (netrc, a user in the URL, a
  /// signing key).
  func requestShape(_ s: TransferSpec, url: String) -> RequestShape? {
    guard !s.isFile, verbose == nil, rateCap == nil, s.rate == nil, s.network.netrc == nil || s.network.netrc == .off,
      s.signing == nil, !Self.namesUser(url)
    else { return nil }
    return s.shape
  }

  /// Whether `url`'s authority holds a user (`scheme://user@host`).
  static func namesUser(_ url: String) -> Bool {
    var url = url
    return url.withUTF8 { u in
      guard let colon = u.firstIndex(of: UInt8(ascii: ":")), colon + 3 <= u.count else { return false }
      return AuthorityParts(UnsafeBufferPointer(rebasing: u[(colon + 3)...])).userinfo != nil
    }
  }
}
