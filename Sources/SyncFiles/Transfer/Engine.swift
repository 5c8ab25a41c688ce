internal import CCurl

#if canImport(Glibc)
  import Glibc
#endif

/// The transfer engine: one libcurl multi handle for the whole session,
/// driven by one dedicated thread (`curl_multi_poll`, woken by
/// `curl_multi_wakeup`). Connections are reused across transfers and HTTP/2
/// is multiplexed where the server offers it. Completion handlers run on the
/// engine thread and must only hand the result on.
public final class TransferEngine: @unchecked Sendable {
  private let lock = Lock()
  private var inbox: [Handover] = []
  private var stopRequested = false
  private var quitRequested = false
  private var finished = false
  private var received: Int64 = 0
  private let rateLimit: Int64?
  /// Handles between requests, shared with the threads that call `start`
  /// (under `lock`): a new handle per request cost more than the request
  /// itself on a run of 304s. One that served a request keeps its last
  /// transfer alive until it is reset. As many as were ever in use at once.
  private var spare: [(easy: EasyRequest, last: Transfer?)] = []
  // Engine thread only:
  private let multi: CurlMulti
  private var active: [UnsafeMutableRawPointer: Transfer] = [:]
  /// Handles of transfers that ended this turn, for `spare` at its end.
  private var retired: [(easy: EasyRequest, last: Transfer?)] = []
  /// Segmented transfers with ranges to start.
  private var groups: [SegmentGroup] = []
  /// `limits.segments`: ranges in flight in the session, and how many are.
  let rangeCap: Int
  var rangesInFlight = 0
  /// `parallel` and `per_host`: transfers handed over beyond them wait here.
  private var admission: Admission<Handover>
  /// Hosts of transfers that ended this turn: their slots go to waiting ones.
  private var freed: [String] = []

  let environment: NetworkEnvironment
  let verbose: (@Sendable (String) -> Void)?
  /// `--verbose`: which protocol each host spoke (engine thread only).
  private var sharing = ConnectionSharing()

  /// `perHost` caps transfers per host (connections on HTTP/1.1, streams on
  /// HTTP/2), `parallel` transfers in all; a segmented file counts as one,
  /// and its ranges, `segments` at most in the session, are connections of
  /// their own. `rate` (bytes/s) is shared by all transfers.
  public init?(
    perHost: Int, rate: Int64?, environment: NetworkEnvironment = NetworkEnvironment(),
    verbose: (@Sendable (String) -> Void)? = nil, segments: Int = Limits.defaultSegments, parallel: Int = .max
  ) {
    // A segmented file's ranges are connections of their own, beside the
    // transfers `per_host` counts (SPEC §9.1: `segments: N` gets N).
    guard let m = CurlMulti(maxPerHost: max(perHost, segments)) else { return nil }
    multi = m
    rangeCap = max(1, segments)
    admission = Admission(total: parallel, perHost: perHost)
    handleCap = 2 * min(max(1, parallel), 128)
    rateLimit = rate
    self.environment = environment
    self.verbose = verbose
    startThread { [self] in loop() }
  }

  /// Queues a transfer; `done` is called once, on the engine thread. It
  /// begins when `parallel` and `per_host` leave it room.
  ///
  /// The request is set up here, on the caller's thread: a handle is reset
  /// and given its options and header lines, so that the engine thread, which
  /// every request of the session passes through, only adds it to libcurl.
  /// (A transfer that continues held ranges is set up by the engine.)
  public func start(_ spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void) {
    let h = Handover(spec: spec, done: done, transfer: spec.held == nil ? prepared(spec, done) : nil)
    // The engine takes the whole inbox when it wakes: one wake-up per batch
    // of starts, and none while every slot is taken (see `full`).
    let wake = lock.locked {
      inbox.append(h)
      guard inbox.count == 1 && !full else { return false }
      wakes += 1
      return true
    }
    if wake { multi.wake() }
  }

  /// Whether every slot was taken when the engine last ended a turn (under
  /// `lock`). A transfer handed over then cannot begin before one of those
  /// ends, and an end is socket activity that ends the engine's wait anyway:
  /// `start` does not wake it. Each turn ends by looking at the inbox again,
  /// so one handed over during the turn (most often by the runner, answering
  /// this turn's results) is taken at once. W4 woke the engine 483 times for
  /// 2,000 requests, each a `poll`, a `recvfrom` that found nothing more and
  /// a turn over every transfer (issue 15).
  private var full = false
  /// Wake-ups `start` has sent.
  var startWakes: Int { lock.locked { wakes } }
  private var wakes = 0

  /// A transfer with its first request set up, its slot freed when its
  /// result is handed on; nil when no handle is spare and `handleCap` are
  /// made (the engine sets it up when it begins: a caller that starts
  /// thousands at once does not make a handle for each).
  private func prepared(_ spec: TransferSpec, _ done: @escaping @Sendable (TransferResult) -> Void) -> Transfer? {
    let shape = requestShape(spec, url: spec.url)
    guard let easy = takeSpare(for: shape) ?? newHandle(under: handleCap) else { return nil }
    let t = Transfer(spec: spec, done: releasing(done, host: spec.host), engine: self)
    t.firstPiece = firstPiece(spec)
    configure(t, easy: easy, url: spec.url, hops: 0, shape: shape)
    return t
  }

  /// A spare handle, made ready on the calling thread for a request of
  /// `shape`, if one is free.
  private func takeSpare(for shape: RequestShape?) -> EasyRequest? {
    guard let (easy, last) = lock.locked({ spare.popLast() }) else { return nil }
    // Callbacks may fire while the handle is reset: its last transfer stays alive until after it.
    withExtendedLifetime(last) { easy.recycle(for: shape) }
    return easy
  }

  /// Handles made in this engine's life: as many as ran at once, not one per request.
  var handlesMade: Int { lock.locked { made } }
  private var made = 0

  /// `curl_easy_reset` calls of the spare handles (all of them, when no
  /// transfer runs or waits): none between requests of one shape.
  var handleResets: Int { lock.locked { spare.reduce(0) { $0 + $1.easy.resets } } }

  /// A spare handle, else a new one.
  private func takeHandle(for shape: RequestShape?) -> EasyRequest? {
    takeSpare(for: shape) ?? newHandle(under: .max)
  }

  /// A new handle while fewer than `cap` were made; nil past it, or when libcurl cannot make one.
  private func newHandle(under cap: Int) -> EasyRequest? {
    let reserved = lock.locked { () -> Bool in
      guard made < cap else { return false }
      made += 1
      return true
    }
    guard reserved else { return nil }
    guard let easy = EasyRequest() else {
      lock.locked { made -= 1 }
      return nil
    }
    return easy
  }

  /// Handles a caller may make for the transfers it hands over when none is
  /// spare: twice `parallel` (the runner hands over at most that many), and
  /// at most 256. Without them, a transfer that waited for a slot without a
  /// handle was set up by the engine when it began, with the handle just
  /// given back, and the next one handed over found none spare in turn: on
  /// W4 the engine's thread, the busier one, set up one request in ten
  /// (issue 15). Past the cap (a caller that hands over thousands at once),
  /// the engine still sets them up as they begin.
  private let handleCap: Int

  /// Transfers the engine set up itself as they began, for want of a handle when handed over.
  var setUpByEngine: Int { lock.locked { engineSetUps } }
  private var engineSetUps = 0

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
      for h in incoming {
        if let ready = admission.offer(h, host: h.spec.host) { launch(ready) }
      }
      if stop {
        for t in Array(active.values) { finish(t, .stopped) }
        for h in admission.drain() {
          let t = h.transfer ?? Transfer(spec: h.spec, done: h.done, engine: self)
          if let easy = t.easy { retired.append((easy, t)) }
          var r = t.result(.stopped)
          r.began = false
          h.done(r)
        }
      }
      deliver()
      beginFreed()
      if quit && active.isEmpty && incoming.isEmpty { break }
      multi.perform { h, code in
        if let t = active[h] { completed(t, code: code) }
      }
      for g in groups { g.pump() }
      groups.removeAll { $0.finished }
      deliver()
      beginFreed()
      unpause()
      let handedOver = lock.locked {
        full = admission.isFull
        return !inbox.isEmpty
      }
      if handedOver { continue }
      multi.wait(milliseconds: paused.isEmpty ? 1000 : 10)
    }
    retired.removeAll()
    lock.locked {
      spare.removeAll()
      finished = true
      lock.signal()
    }
  }

  /// A transfer as the runner handed it over: one reference, however long it waits.
  /// `transfer`: its request set up by the caller (`start`), handed to the
  /// engine thread through the inbox's lock and touched only there after.
  final class Handover: @unchecked Sendable {
    let spec: TransferSpec
    let done: @Sendable (TransferResult) -> Void
    let transfer: Transfer?
    init(spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void, transfer: Transfer?) {
      self.spec = spec
      self.done = done
      self.transfer = transfer
    }
  }

  /// A transfer the limits admit; its slot is freed when its result is handed on.
  private func launch(_ h: Handover) {
    if let t = h.transfer, let easy = t.easy { return add(t, easy) }
    if h.spec.held == nil { lock.locked { engineSetUps += 1 } }
    start(h.spec, releasing(h.done, host: h.spec.host))
  }

  /// `done`, then `host`'s slot freed (on the engine thread, where results are handed on).
  private func releasing(
    _ done: @escaping @Sendable (TransferResult) -> Void, host: String
  ) -> @Sendable (TransferResult) -> Void {
    { [self] r in
      done(r)
      freed.append(host)
    }
  }

  /// Slots freed this turn go to the transfers waiting for them, at once:
  /// not after a round trip through the runner's thread.
  private func beginFreed() {
    while !freed.isEmpty {
      let hosts = freed
      freed.removeAll()
      for h in hosts {
        for ready in admission.release(host: h) { launch(ready) }
      }
    }
  }

  /// A new transfer: ranges held since an earlier run resume as ranges; anything else starts as one stream.
  private func start(_ spec: TransferSpec, _ done: @escaping @Sendable (TransferResult) -> Void) {
    let t = Transfer(spec: spec, done: done, engine: self)
    t.firstPiece = firstPiece(spec)
    guard let held = spec.held, let p = spec.partial, let ifRange = held.validators.ifRange else {
      return begin(t, url: spec.url, hops: 0)
    }
    let wanted = min(max(2, spec.segments ?? SegmentPolicy.autoRanges), rangeCap)
    let g = SegmentGroup(
      engine: self, spec: spec, done: done, partial: p, total: held.total, validators: held.validators,
      ifRange: ifRange, url: spec.url, held: held.ranges, hashed: held.hashed, wanted: wanted, confirmed: true)
    if let failure = g.prepare(missing: g.pieces(held.ranges.missing(total: held.total))) {
      return done(t.result(failure))
    }
    groups.append(g)
  }

  /// Where the first request of a fresh transfer stops, when its entry asks
  /// for ranges (`segments: 2` or more): its piece is bounded, so it never
  /// runs into a piece another range asks for. Nil: the whole file.
  func firstPiece(_ s: TransferSpec) -> Int64? {
    guard (s.segments ?? 1) > 1, rangeCap > 1, !s.isFile, s.held == nil, (s.partial?.size ?? 0) == 0,
      s.request.ifRange == nil
    else { return nil }
    return SegmentGroup.minimumSplit
  }

  /// A whole body is about to begin (in a callback): fetch it in ranges
  /// instead when the file is large enough, the version strong and ranges
  /// offered; the body is then not written (`SegmentGroup.handOver`).
  func considerSegments(_ t: Transfer, total: Int64?) {
    let s = t.spec
    guard s.segments != 1, !s.isFile, s.held == nil, let p = t.partial, let total else { return }
    // The first piece answered 206: the ranges go on from its end.
    if t.status == 206, let end = t.firstPiece { return continueFirstPiece(t, end: end, total: total, partial: p) }
    guard t.status == 200, t.firstPiece == nil else { return }
    let n = min(s.segments ?? SegmentPolicy.forSize(total), rangeCap)
    guard n > 1 else { return }
    let asked = s.segments.map { "segments: \($0) asked; fetched as one stream: " }
    let offersRanges = t.header(.acceptRanges)?.lowercased().contains("bytes") ?? false
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
    let size = ByteRanges.pieceSize(total: total, ranges: n, minimum: SegmentGroup.minimumSplit)
    let parts = ByteRanges.pieces([0..<total], size: size)
    let g = SegmentGroup(
      engine: self, spec: s, done: t.done, partial: p, total: total, validators: v, ifRange: ifRange,
      url: t.url, held: ByteRanges(), hashed: 0, wanted: min(n, parts.count), confirmed: false)
    if let failure = g.prepare(missing: parts) {
      t.failure = failure
      return
    }
    g.handOver(from: t)
    groups.append(g)
  }

  /// The first piece answered 206 and the file is larger: the pieces after
  /// it as ranges of one version, or the whole file once more when no
  /// strong validator names one.
  private func continueFirstPiece(_ t: Transfer, end: Int64, total: Int64, partial p: PartialFile) {
    let s = t.spec
    guard end < total else { return }  // the first piece is the whole file
    guard let v = t.validators, let ifRange = v.ifRange else {
      t.askWhole = true
      t.notes.append(
        "segments: \(s.segments ?? 1) asked; fetched as one stream: no strong validator (ETag, or a strong Last-Modified) to keep the ranges of one version"
      )
      return
    }
    let n = min(s.segments ?? 1, rangeCap)
    let size = ByteRanges.pieceSize(total: total, ranges: n, minimum: SegmentGroup.minimumSplit)
    let parts = ByteRanges.pieces([end..<total], size: size)
    let g = SegmentGroup(
      engine: self, spec: s, done: t.done, partial: p, total: total, validators: v, ifRange: ifRange,
      url: t.url, held: ByteRanges(), hashed: 0, wanted: min(n, parts.count + 1), confirmed: true)
    if let failure = g.prepare(missing: parts) {
      t.failure = failure
      return
    }
    g.adopt(first: t, end: end)
    groups.append(g)
  }

  func begin(_ t: Transfer, url: String, hops: Int) {
    let shape = requestShape(t.spec, url: url)
    guard let easy = takeHandle(for: shape) else {
      return t.done(t.result(.failed(.engine("libcurl could not create a handle"))))
    }
    configure(t, easy: easy, url: url, hops: hops, shape: shape)
    add(t, easy)
  }

  private func add(_ t: Transfer, _ easy: EasyRequest) {
    active[easy.handle] = t
    multi.add(easy)
  }

  /// Gives `easy` the options of `t`'s request to `url`. Reads only what
  /// does not change after `init` and `t` itself: callers on any thread may
  /// set up a transfer the engine thread does not hold yet.
  private func configure(_ t: Transfer, easy: EasyRequest, url: String, hops: Int, shape: RequestShape?) {
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
      // Under a rate cap, smaller reads keep the pacing smooth.
      easy.set(CURLOPT_BUFFERSIZE, rateLimit.map { Int(min(max($0 / 16, 16 * 1024), 256 * 1024)) } ?? 256 * 1024)
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
      easy.setRequestHeaders(url: url, entryURL: s.url, manifest: s.headers, conditions: conditions)
    }
    let me = Unmanaged.passUnretained(t).toOpaque()
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_HEADERFUNCTION, transferHeaderCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_HEADERDATA, me)
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_WRITEFUNCTION, transferWriteCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_WRITEDATA, me)
  }

  /// The shape of `s`'s request to `url`, or nil when its options are set
  /// afresh on a reset handle: `file:` (its time condition is the
  /// request's), `--verbose`, a rate cap (paused transfers), and
  /// credentials libcurl keeps for a transfer (netrc, or a user in the URL).
  func requestShape(_ s: TransferSpec, url: String) -> RequestShape? {
    guard !s.isFile, verbose == nil, rateLimit == nil, s.network.netrc == nil || s.network.netrc == .off,
      !Self.namesUser(url)
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
    t.easy = nil
    // Reset by whoever takes it next (`takeHandle`), most often the runner's thread.
    retired.append((easy, t))
  }

  private func finish(_ t: Transfer, _ outcome: TransferOutcome) {
    if let g = t.group { return g.finish(outcome) }
    detach(t)
    results.append((t.done, t.result(outcome)))
  }

  /// Results of one turn of the loop, handed on together (the runner wakes once for them).
  private var results: [(@Sendable (TransferResult) -> Void, TransferResult)] = []

  private func deliver() {
    if !retired.isEmpty {
      lock.locked { spare.append(contentsOf: retired) }
      retired.removeAll()
    }
    let batch = results
    results.removeAll()
    for (done, r) in batch { done(r) }
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
    if let verbose, !t.spec.isFile,
      let line = sharing.note(host: t.spec.host, version: easy.info(CURLINFO_HTTP_VERSION), perHost: admission.perHost)
    {
      verbose("\(t.spec.id): \(line)")
    }
    let redirect = easy.infoString(CURLINFO_REDIRECT_URL)
    let unmet = easy.info(CURLINFO_CONDITION_UNMET)
    let fileTime = easy.infoOff(CURLINFO_FILETIME_T)
    if t.spec.isFile && fileTime >= 0 {
      // A local file's time is as strong as it is old: the same rule, with now as the date.
      let lm = HTTPDate.format(Timestamp(seconds: fileTime))
      t.validators = Validators(etag: nil, lastModified: lm, date: HTTPDate.format(Timestamp.current()))
    }
    if let failure = t.failure { return finish(t, failure) }
    if t.askWhole {
      // The first piece could not be continued as ranges: ask for the whole file.
      t.askWhole = false
      t.firstPiece = nil
      detach(t)
      return begin(t, url: t.url, hops: t.hops)
    }
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
