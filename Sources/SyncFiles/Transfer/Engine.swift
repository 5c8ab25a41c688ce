internal import CCurl

#if canImport(Glibc)
  import Glibc
#endif

/// One transfer for the engine: where to fetch from, what to send, where the
/// bytes go. Built by the runner; handed to the engine thread and back.
public struct TransferSpec: @unchecked Sendable {
  public var id: String
  /// The URL to fetch (expanded: never print it).
  public var url: String
  /// Manifest headers, `Name: value` (expanded: never print them).
  public var headers: [String]
  /// Lower-case URL scheme.
  public var scheme: String
  public var isFile: Bool { scheme == "file" }
  /// Where a partial file is created when a body arrives.
  public var root: String
  public var relative: String
  /// An open partial being resumed: its size is the offset asked for.
  public var partial: PartialFile?
  /// Hashes every byte of the partial, those held before included.
  public var hasher: SHA256Hasher
  /// What to ask for: a resume, a conditional request or the whole file.
  public var request: RequestPolicy = .whole
  /// TLS trust, proxy and netrc of the entry.
  public var network = NetworkOptions()
  /// Values to mask in `--verbose` output.
  public var secrets = Secrets()
  public var maxBytes: Int64?
  public var connectTimeout: TimeSpan
  public var stall: TimeSpan
  /// Called on the engine thread when a body is about to be written (after
  /// the partial was created or cut back, before its first byte), so that
  /// the journal knows the partial's validators before it holds any byte.
  public var onBody: @Sendable (ResponseHead) -> Void
  /// Ranges at once (SPEC §8.3): nil is `auto` (4 from 64 MiB), 1 one stream.
  public var segments: Int? = 1
  /// Mirrors that may serve ranges of a segmented transfer: the URL to ask
  /// (expanded: never print it) and the URL to name in messages.
  public var mirrors: [(url: String, name: String)] = []
  /// Ranges held since an earlier run: the transfer asks only for the rest.
  public var held: HeldRanges?
  /// Called on the engine thread with the bytes a segmented partial holds
  /// (and the whole size), before the first range lands and as they grow.
  /// Nil ranges: the partial is one stream again (its held prefix).
  public var onRanges: (@Sendable (ByteRanges?, Int64) -> Void)?

  public init(
    id: String, url: String, headers: [String], scheme: String, root: String, relative: String,
    partial: PartialFile?, hasher: SHA256Hasher, connectTimeout: TimeSpan, stall: TimeSpan,
    onBody: @escaping @Sendable (ResponseHead) -> Void
  ) {
    self.id = id
    self.url = url
    self.headers = headers
    self.scheme = scheme
    self.root = root
    self.relative = relative
    self.partial = partial
    self.hasher = hasher
    self.connectTimeout = connectTimeout
    self.stall = stall
    self.onBody = onBody
  }
}

/// A segmented partial held for a resume: its bytes, size and version.
public struct HeldRanges: Sendable {
  public var ranges: ByteRanges
  public var total: Int64
  public var validators: Validators
  /// Bytes from 0 the task's hasher has already taken in.
  public var hashed: Int64
  public init(ranges: ByteRanges, total: Int64, validators: Validators, hashed: Int64) {
    self.ranges = ranges
    self.total = total
    self.validators = validators
    self.hashed = hashed
  }
}

/// The response a body belongs to.
public struct ResponseHead: Sendable {
  public var status: Int
  /// The version the body is of (with the strength of its date).
  public var validators: Validators
  /// Size of the whole file, when the server says.
  public var totalBytes: Int64?
  /// Where this body starts in the file.
  public var offset: Int64
  /// True when partial data held before was dropped (the server sent the whole file).
  public var restarted: Bool
  /// HTTP/1 without Content-Length or chunking: only the closing connection
  /// marked the end, so a cut connection looks like a complete body.
  public var lengthUnknown = false
}

public enum TransferOutcome: Sendable, Equatable {
  /// The whole file is in the partial.
  case complete
  /// 304, or a file: URL not modified.
  case notModified
  /// 416 to a resume: the partial may already be complete.
  case rangeNotSatisfiable(total: Int64?)
  /// An HTTP error status.
  case http(status: Int, retryAfter: Int64?)
  case failed(TransferError)
  /// The partial's bytes cannot be continued: discard them and start over.
  case restart(String)
  /// Stopped by `stopAll` (deadline, signal): the partial is kept for a resume.
  case stopped
}

extension TransferOutcome {
  /// An HTTP status worth another try: timeout, too many requests, server errors.
  public static func isTransient(status: Int) -> Bool { status == 408 || status == 429 || status >= 500 }

  /// Trying again may help: a retryable failure or a transient status.
  public var isTransient: Bool {
    switch self {
    case .failed(let e): return e.isRetryable
    case .http(let status, _): return Self.isTransient(status: status)
    default: return false
    }
  }
}

public struct TransferResult: @unchecked Sendable {
  public var id: String
  public var outcome: TransferOutcome
  public var status: Int = 0
  /// Body bytes written by this transfer.
  public var received: Int64 = 0
  /// Offset the body started at (0 unless resumed).
  public var resumedFrom: Int64 = 0
  public var head: ResponseHead?
  /// Validators of the final response, also for 304s.
  public var validators: Validators?
  /// The partial (open) if one was created or resumed.
  public var partial: PartialFile?
  public var hasher: SHA256Hasher
  /// A segmented transfer: the bytes its partial holds (all of them when complete).
  public var ranges: ByteRanges? = nil
  /// Of a segmented transfer: bytes from 0 the hasher has taken in.
  public var hashed: Int64 = 0
  /// How many ranges ran at once (1: one stream).
  public var segments = 1
  /// Why a transfer asked for in ranges ran as one stream, said once.
  public var notes: [String] = []
}

/// The transfer engine: one libcurl multi handle for the whole session,
/// driven by one dedicated thread (`curl_multi_poll`, woken by
/// `curl_multi_wakeup`). Connections are reused across transfers and HTTP/2
/// is multiplexed where the server offers it. Completion handlers run on the
/// engine thread and must only hand the result on.
public final class TransferEngine: @unchecked Sendable {
  private let lock = Lock()
  private var inbox: [(TransferSpec, @Sendable (TransferResult) -> Void)] = []
  private var stopRequested = false
  private var quitRequested = false
  private var finished = false
  private var received: Int64 = 0
  private var rateLimit: Int64?
  // Engine thread only:
  private let multi: CurlMulti
  private var active: [UnsafeMutableRawPointer: Transfer] = [:]
  /// Segmented transfers with ranges to start.
  private var groups: [SegmentGroup] = []
  /// `limits.segments`: ranges in flight in the session, and how many are.
  let rangeCap: Int
  var rangesInFlight = 0

  let environment: NetworkEnvironment
  let verbose: (@Sendable (String) -> Void)?

  /// `perHost` caps connections per host (HTTP/2 streams are capped by the
  /// runner's scheduler); `rate` (bytes/s) is shared by all transfers.
  public init?(
    perHost: Int, rate: Int64?, environment: NetworkEnvironment = NetworkEnvironment(),
    verbose: (@Sendable (String) -> Void)? = nil, segments: Int = Limits.defaultSegments
  ) {
    guard let m = CurlMulti(maxPerHost: perHost) else { return nil }
    multi = m
    rangeCap = max(1, segments)
    rateLimit = rate
    self.environment = environment
    self.verbose = verbose
    startThread { [self] in loop() }
  }

  /// Queues a transfer; `done` is called once, on the engine thread.
  public func start(_ spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void) {
    lock.locked { inbox.append((spec, done)) }
    multi.wake()
  }

  /// Stops every transfer in flight; each ends with `.stopped`, its partial kept.
  public func stopAll() {
    lock.locked { stopRequested = true }
    multi.wake()
  }

  /// Body bytes received so far by all transfers.
  public var bytesReceived: Int64 { lock.locked { received } }

  /// Ends the engine thread (after stopping what is in flight) and waits for it.
  public func shutdown() {
    lock.locked {
      stopRequested = true
      quitRequested = true
    }
    multi.wake()
    lock.locked {
      while !finished { lock.wait(until: nil) }
    }
    multi.close()
  }

  func count(_ n: Int) {
    lock.locked { received += Int64(n) }
  }

  // MARK: - The engine thread

  private func loop() {
    while true {
      let (incoming, stop, quit) = lock.locked {
        let batch = inbox
        inbox.removeAll()
        let s = stopRequested
        stopRequested = false
        return (batch, s, quitRequested)
      }
      for (spec, done) in incoming { start(spec, done) }
      if stop {
        for t in Array(active.values) { finish(t, .stopped) }
      }
      if quit && active.isEmpty && incoming.isEmpty { break }
      multi.perform { h, code in
        if let t = active[h] { completed(t, code: code) }
      }
      for g in groups { g.pump() }
      groups.removeAll { $0.finished }
      unpause()
      multi.wait(milliseconds: paused.isEmpty ? 1000 : 10)
    }
    lock.locked {
      finished = true
      lock.signal()
    }
  }

  /// A new transfer: ranges held since an earlier run resume as ranges; anything else starts as one stream.
  private func start(_ spec: TransferSpec, _ done: @escaping @Sendable (TransferResult) -> Void) {
    let t = Transfer(spec: spec, done: done, engine: self)
    guard let held = spec.held, let p = spec.partial, let ifRange = held.validators.ifRange else {
      return begin(t, url: spec.url, hops: 0)
    }
    let wanted = min(max(2, spec.segments ?? 4), rangeCap)
    let g = SegmentGroup(
      engine: self, spec: spec, done: done, partial: p, total: held.total, validators: held.validators,
      ifRange: ifRange, url: spec.url, held: held.ranges, hashed: held.hashed, wanted: wanted, confirmed: true)
    let gaps = ByteRanges.split(
      held.ranges.missing(total: held.total), into: wanted, minimum: SegmentGroup.minimumSplit)
    if let failure = g.prepare(missing: gaps) { return done(t.result(failure)) }
    groups.append(g)
  }

  /// The lead's whole body has begun (in a callback): fetch it in ranges
  /// when the file is large enough, the version strong and ranges offered.
  func considerSegments(_ t: Transfer, total: Int64?) {
    let s = t.spec
    guard s.segments != 1, !s.isFile, s.held == nil, t.status == 200, let p = t.partial, let total else { return }
    let n = min(s.segments ?? (total >= 64 << 20 ? 4 : 1), rangeCap)
    guard n > 1 else { return }
    let asked = s.segments.map { "segments: \($0) asked; fetched as one stream: " }
    let offersRanges = t.header("Accept-Ranges")?.lowercased().contains("bytes") ?? false
    guard let v = t.validators, let ifRange = v.ifRange, offersRanges, total >= 2 * SegmentGroup.minimumSplit else {
      if let asked {
        let why =
          !offersRanges
          ? "the server does not offer byte ranges (no Accept-Ranges: bytes)"
          : t.validators?.ifRange == nil
            ? "no strong validator (ETag, or a strong Last-Modified) to keep the ranges of one version"
            : "the file is smaller than two ranges of \(ByteSize.format(SegmentGroup.minimumSplit))"
        t.notes.append(asked + why)
      }
      return
    }
    let parts = ByteRanges.split([0..<total], into: n, minimum: SegmentGroup.minimumSplit)
    let g = SegmentGroup(
      engine: self, spec: s, done: t.done, partial: p, total: total, validators: v, ifRange: ifRange,
      url: t.url, held: ByteRanges(), hashed: 0, wanted: parts.count, confirmed: false)
    if let failure = g.prepare(missing: Array(parts.dropFirst())) {
      t.failure = failure
      return
    }
    g.adopt(lead: t, end: parts[0].upperBound)
    groups.append(g)
  }

  func begin(_ t: Transfer, url: String, hops: Int) {
    guard let easy = EasyRequest() else {
      return t.done(t.result(.failed(.engine("libcurl could not create a handle"))))
    }
    t.reset(easy: easy, hops: hops)
    t.url = url
    let s = t.spec
    easy.configure(
      url: url, entryOrigin: RemoteProbe.origin(of: s.url), isFile: s.isFile, network: s.network,
      environment: environment, connectTimeout: s.connectTimeout)
    if let verbose { easy.trace(VerboseSink(id: s.id, secrets: s.secrets, log: verbose)) }
    easy.set(CURLOPT_LOW_SPEED_LIMIT, 1024)
    easy.set(CURLOPT_LOW_SPEED_TIME, Int(s.stall.seconds))
    // Under a rate cap, smaller reads keep the pacing smooth.
    easy.set(CURLOPT_BUFFERSIZE, rateLimit.map { Int(min(max($0 / 16, 16 * 1024), 256 * 1024)) } ?? 256 * 1024)
    if s.isFile {
      easy.set(CURLOPT_FILETIME, 1)
      if case .ifModifiedSince(let d) = s.request.condition, let since = HTTPDate.parse(d) {
        easy.set(CURLOPT_TIMECONDITION, Int(CURL_TIMECOND_IFMODSINCE.rawValue))
        _ = sf_easy_setopt_off(easy.handle, CURLOPT_TIMEVALUE_LARGE, curl_off_t(since.seconds))
      }
    } else {
      var lines = ["Accept-Encoding: identity"]
      // Manifest headers go only to the origin of the task's own URL.
      if !s.headers.isEmpty && (url == s.url || RemoteProbe.origin(of: url) == RemoteProbe.origin(of: s.url)) {
        lines += s.headers
      }
      if let range = t.rangeHeaders {
        lines += range
      } else {
        // A resume needs data to continue; without it the whole file is asked for.
        let size = t.partial?.size ?? 0
        if s.request.ifRange == nil || size > 0 { lines += s.request.headerLines(partialSize: size) }
      }
      easy.setHeaders(lines)
    }
    let me = Unmanaged.passUnretained(t).toOpaque()
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_HEADERFUNCTION, transferHeaderCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_HEADERDATA, me)
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_WRITEFUNCTION, transferWriteCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_WRITEDATA, me)
    active[easy.handle] = t
    multi.add(easy)
  }

  // MARK: - The aggregate rate cap (a token bucket shared by all transfers)

  private var rateStart: Double?
  private var consumed: Int64 = 0
  private var paused: [Transfer] = []

  /// True when `n` more bytes fit under the cap now; false pauses the transfer.
  func admit(_ n: Int, _ t: Transfer) -> Bool {
    guard let rate = rateLimit else { return true }
    let now = monotonicSeconds()
    let start = rateStart ?? now
    rateStart = start
    // A fifth of a second of burst, so pacing does not starve a single transfer.
    let allowance = Int64(Double(rate) * (now - start)) + rate / 5
    if consumed + Int64(n) <= allowance || consumed == 0 {
      consumed += Int64(n)
      return true
    }
    paused.append(t)
    return false
  }

  /// Resumes paused transfers once the bucket has room (each may pause again at once).
  private func unpause() {
    guard !paused.isEmpty else { return }
    let waiting = paused
    paused.removeAll()
    for t in waiting {
      guard let easy = t.easy else { continue }
      curl_easy_pause(easy.handle, sf_pause_cont)
    }
  }

  /// Takes a transfer off libcurl without reporting it (a segmented
  /// transfer's group reports the file once).
  func detach(_ t: Transfer) {
    guard let easy = t.easy else { return }
    multi.remove(easy)
    active[easy.handle] = nil
    paused.removeAll { $0 === t }
    // Callbacks may fire during cleanup: `t` stays alive until after it.
    withExtendedLifetime(t) { t.easy = nil }
  }

  private func finish(_ t: Transfer, _ outcome: TransferOutcome) {
    if let g = t.group { return g.finish(outcome) }
    detach(t)
    t.done(t.result(outcome))
  }

  private func completed(_ t: Transfer, code: CURLcode) {
    guard let easy = t.easy else { return }
    if let g = t.group {
      let outcome = rangeOutcome(t, code: code, easy: easy)
      detach(t)
      return g.ended(t, outcome: outcome)
    }
    let status = easy.info(CURLINFO_RESPONSE_CODE)
    t.status = status
    let redirect = easy.infoString(CURLINFO_REDIRECT_URL)
    let unmet = easy.info(CURLINFO_CONDITION_UNMET)
    let fileTime = easy.infoOff(CURLINFO_FILETIME_T)
    if t.spec.isFile && fileTime >= 0 {
      // A local file's time is as strong as it is old: the same rule, with now as the date.
      let lm = HTTPDate.format(Timestamp(seconds: fileTime))
      t.validators = Validators(etag: nil, lastModified: lm, date: HTTPDate.format(Timestamp.current()))
    }
    if let failure = t.failure { return finish(t, failure) }
    if code != CURLE_OK { return finish(t, CurlFailure.outcome(code: code, easy: easy)) }
    if t.spec.isFile {
      return finish(t, unmet != 0 ? .notModified : .complete)
    }
    switch status {
    case 200, 206:
      finish(t, .complete)
    case 304 where !t.spec.request.isConditional:
      // Nothing was asked to be compared: such a 304 says nothing about the file (SPEC §8.2).
      finish(
        t,
        .failed(
          .unusableAnswer(
            "the server answered 304 Not Modified to a request that was not conditional", retryable: true)))
    case 304:
      finish(t, .notModified)
    case 416:
      finish(t, .rangeNotSatisfiable(total: t.rangeTotal))
    case 300..<400:
      switch Redirect.decide(status: status, location: redirect, hops: t.hops) {
      case .follow(let next)?:
        detach(t)
        begin(t, url: next, hops: t.hops + 1)
      case .refuse(let why)?:
        finish(t, .failed(.unusableAnswer(why, retryable: false)))
      case nil:
        finish(t, .failed(.unusableAnswer("unexpected HTTP status \(status)", retryable: false)))
      }
    case 400..<600:
      finish(t, .http(status: status, retryAfter: t.retryAfter))
    default:
      finish(t, .failed(.unusableAnswer("unexpected HTTP status \(status)", retryable: false)))
    }
  }

  /// How one range of a segmented transfer ended.
  private func rangeOutcome(_ t: Transfer, code: CURLcode, easy: EasyRequest) -> TransferOutcome {
    if t.reachedEnd { return .complete }
    if let failure = t.failure { return failure }
    if code != CURLE_OK { return CurlFailure.outcome(code: code, easy: easy) }
    let status = easy.info(CURLINFO_RESPONSE_CODE)
    switch status {
    case 200, 206: return .complete
    case 400..<600: return .http(status: status, retryAfter: t.retryAfter)
    default: return .failed(.unusableAnswer("HTTP \(status) to a range request", retryable: false))
    }
  }
}

/// Per-transfer state, confined to the engine thread.
final class Transfer {
  var spec: TransferSpec
  let done: @Sendable (TransferResult) -> Void
  unowned let engine: TransferEngine
  var easy: EasyRequest?
  var hops = 0
  var partial: PartialFile?
  var status = 0
  var headerLines: [String] = []
  var decided = false
  var writing = false
  var received: Int64 = 0
  var resumedFrom: Int64 = 0
  var head: ResponseHead?
  var failure: TransferOutcome?
  var validators: Validators?
  var rangeTotal: Int64?
  var retryAfter: Int64?
  /// The final response came over HTTP/1.x (where a body may end at the close).
  var http1 = false
  /// The URL of the current request (after redirects).
  var url = ""
  var notes: [String] = []
  // One range of a segmented transfer (SPEC §8.3):
  var group: SegmentGroup?
  /// `Range` and `If-Range` lines (nil: the lead, or one stream).
  var rangeHeaders: [String]?
  var rangeStart: Int64 = 0
  /// Where this range stops writing (moved down when another steals its tail).
  var rangeEnd: Int64 = 0
  /// What the request asked the server to send up to.
  var requestEnd: Int64 = 0
  /// The lead's end once the probe range is confirmed.
  var plannedEnd: Int64 = 0
  var written: Int64 = 0
  var reachedEnd = false
  /// A range answered with the whole file before any range was confirmed,
  /// or a mirror's range that disagreed.
  var declined = false
  /// Which of its group's sources this range asks (0: the first server).
  var source = 0
  var next: Int64 { rangeStart + written }
  var remaining: Int64 { rangeEnd - next }

  init(spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void, engine: TransferEngine) {
    self.spec = spec
    self.done = done
    self.engine = engine
    partial = spec.partial
  }

  func reset(easy: EasyRequest, hops: Int) {
    self.easy = easy
    self.hops = hops
    status = 0
    headerLines = []
    decided = false
    writing = false
  }

  func result(_ outcome: TransferOutcome) -> TransferResult {
    TransferResult(
      id: spec.id, outcome: outcome, status: status, received: received, resumedFrom: resumedFrom, head: head,
      validators: validators, partial: partial, hasher: spec.hasher, notes: notes)
  }

  func header(_ name: String) -> String? { headerValue(name, in: headerLines) }

  /// The final response's headers are in: decide what its body is for.
  /// Returns false to abort the transfer (`failure` says why).
  func decide() -> Bool {
    decided = true
    if !spec.isFile {
      validators = Validators(etag: header("ETag"), lastModified: header("Last-Modified"), date: header("Date"))
    }
    let length = header("Content-Length").flatMap { Int64($0) }
    if let ra = header("Retry-After") { retryAfter = HTTPDate.retryAfter(ra) }
    if status == 416, let cr = header("Content-Range") { rangeTotal = ContentRange.parse(cr)?.total }
    let body = spec.isFile || status == 200 || status == 206
    guard body else { return true }  // 3xx, 304, 416, errors: the body is not the file; it is dropped.
    if !spec.isFile, let encoding = header("Content-Encoding"), encoding.lowercased() != "identity" {
      // Checksums and the file are the bytes as stored: an encoded body is never installed (SPEC §8.2).
      failure = .failed(
        .unusableAnswer(
          "the server sent the body with Content-Encoding: \(encoding) although syncfiles asked for identity; refused, nothing installed",
          retryable: false))
      return false
    }
    if let g = group, rangeHeaders != nil {
      let cr = header("Content-Range").flatMap(ContentRange.parse)
      writing = g.decide(self, status: status, contentRange: cr, now: validators)
      return writing
    }

    var offset: Int64 = 0
    var total = length
    var restarted = false
    if status == 206 {
      guard let p = partial, let cr = header("Content-Range").flatMap(ContentRange.parse) else {
        failure = .restart("the server answered 206 without a usable Content-Range")
        return false
      }
      guard cr.start == p.size else {
        failure = .restart("the server resumed at byte \(cr.start) instead of \(p.size)")
        return false
      }
      // The server honoured If-Range, so a validator it left out counts as the same.
      if let sent = spec.request.ifRange, let now = validators, !(now.names(ifRange: sent) ?? true) {
        failure = .restart("the server's version changed during a resume (If-Range was not honoured)")
        return false
      }
      offset = cr.start
      total = cr.total
    } else {
      // A whole body: what the partial held (if anything) is of no use now.
      do {
        if let p = partial {
          if p.size > 0 {
            try p.truncate()
            spec.hasher.reset()
            restarted = true
          }
        } else {
          partial = try PartialFile(root: spec.root, relative: spec.relative, resume: false)
        }
      } catch {
        failure = .failed(.partialFile(error))
        return false
      }
    }
    if let max = spec.maxBytes, let total, total > max {
      failure = .failed(.tooLarge(limit: max, announced: total))
      return false
    }
    resumedFrom = offset
    var h = ResponseHead(
      status: status, validators: validators ?? Validators(etag: nil, lastModified: nil, dateIsStrong: false),
      totalBytes: total, offset: offset, restarted: restarted)
    let chunked = header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
    h.lengthUnknown = !spec.isFile && http1 && length == nil && !chunked
    head = h
    spec.onBody(h)
    writing = true
    if !h.lengthUnknown && offset == 0 { engine.considerSegments(self, total: total) }
    return failure == nil
  }

  /// Body bytes: counted, capped by max_bytes, hashed and appended to the partial.
  func write(_ buffer: UnsafeRawBufferPointer) -> Bool {
    if !decided && !decide() { return false }
    guard writing else { return true }
    if let g = group { return g.write(self, buffer) }
    guard let p = partial else {
      failure = .failed(.engine("a body arrived without a partial file"))
      return false
    }
    guard engine.admit(buffer.count, self) else { return false }
    if let max = spec.maxBytes, p.size + Int64(buffer.count) > max {
      failure = .failed(.tooLarge(limit: max, announced: nil))
      return false
    }
    do {
      try p.write(buffer)
    } catch {
      failure = .failed(.partialFile(error))
      return false
    }
    spec.hasher.update(buffer)
    received += Int64(buffer.count)
    engine.count(buffer.count)
    return true
  }
}

let transferHeaderCallback: sf_curl_data_cb = { ptr, size, count, userdata in
  let n = size * count
  guard let ptr, let userdata else { return n }
  let t = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
  let line = String(decoding: UnsafeRawBufferPointer(start: ptr, count: n), as: UTF8.self)
  if line.hasPrefix("HTTP/") {
    t.headerLines.removeAll()
    let parts = line.split(separator: " ", maxSplits: 2)
    t.status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    t.http1 = line.hasPrefix("HTTP/1")
    t.decided = false
  } else if line == "\r\n" || line == "\n" {
    // End of a response's headers; 1xx responses are interim.
    if t.status >= 200 && !t.decided && !t.decide() { return 0 }
  } else {
    t.headerLines.append(line)
  }
  return n
}

let transferWriteCallback: sf_curl_data_cb = { ptr, size, count, userdata in
  let n = size * count
  guard let ptr, let userdata else { return n }
  let t = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
  let buffer = UnsafeRawBufferPointer(start: ptr, count: n)
  if t.write(buffer) { return n }
  // Not admitted under the rate cap: pause; libcurl delivers the same bytes again later.
  return t.failure == nil && t.writing && !t.reachedEnd ? sf_writefunc_pause : 0
}
