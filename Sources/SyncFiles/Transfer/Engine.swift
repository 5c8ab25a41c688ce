internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// The transfer engine: one libcurl multi handle for the whole session,
/// driven by one dedicated thread (`curl_multi_poll`, woken by
/// `curl_multi_wakeup`). Connections are reused across transfers and HTTP/2
/// is multiplexed where the server offers it. Completion handlers run on the
/// engine thread and must only hand the result on.
public final class TransferEngine: @unchecked Sendable {
  // Shared with the threads that call `start`, under `lock`.
  let lock = Lock()
  /// Transfers handed over and not yet taken by the engine thread.
  var inbox: [Handover] = []
  var stopRequested = false
  var quitRequested = false
  var finished = false
  /// Body bytes received by all transfers (`bytesReceived`).
  var received: Int64 = 0
  /// Handles between requests. A new handle per request cost more than the
  /// request itself on a run of 304s. One that served a request keeps its
  /// last transfer alive until it is reset. As many as were ever in use at once.
  var spare: [(easy: EasyRequest, last: Transfer?)] = []
  /// Handles made in this engine's life (`stats`).
  var made = 0
  /// Whether every slot was taken when the engine last ended a turn. A
  /// transfer handed over then cannot begin before one of those ends, and an
  /// end is socket activity that ends the engine's wait anyway: `start` does
  /// not wake it. Each turn ends by looking at the inbox again, so one handed
  /// over during the turn (most often by the runner, answering this turn's
  /// results) is taken at once, without a wake-up of its own.
  var full = false
  /// Wake-ups `start` has sent (`stats`).
  var wakes = 0
  /// Transfers the engine set up itself as they began (`stats`).
  var engineSetUps = 0

  // Set once by `init`, read by any thread.
  let rateCap: RateCap?
  /// `limits.segments`: ranges in flight in the session at most.
  let rangeCap: Int
  /// Handles a caller may make for the transfers it hands over when none is
  /// spare: twice `parallel` (the runner hands over at most that many), and
  /// at most 256. Without them, a transfer that waited for a slot without a
  /// handle was set up by the engine when it began, with the handle just
  /// given back, and the next one handed over found none spare in turn, so
  /// the busier thread did the work. Past the cap (a caller that hands over
  /// thousands at once), the engine still sets them up as they begin.
  let handleCap: Int
  let environment: NetworkEnvironment
  let verbose: (@Sendable (String) -> Void)?

  // The engine thread's own.
  let multi: CurlMulti
  /// Transfers on libcurl, by easy handle.
  var active: [UnsafeMutableRawPointer: Transfer] = [:]
  /// Handles of transfers that ended this turn, for `spare` at its end.
  var retired: [(easy: EasyRequest, last: Transfer?)] = []
  /// Segmented transfers with ranges to start.
  var groups: [SegmentGroup] = []
  /// Ranges in flight in the session (at most `rangeCap`).
  var rangesInFlight = 0
  /// `parallel` and `per_host`: transfers handed over beyond them wait here.
  var admission: Admission<Handover>
  /// Hosts of transfers that ended this turn: their slots go to waiting ones.
  var freed: [String] = []
  /// `--verbose`: which protocol each host spoke.
  var sharing = ConnectionSharing()
  /// The aggregate rate cap now, and the transfers it paused.
  var bucket: RateLimiter?
  /// When a timetable's next boundary is due (monotonic seconds).
  var nextRateChange = 0.0
  /// Transfers the cap paused, with the bytes each was refused.
  var paused: [(transfer: Transfer, bytes: Int)] = []
  /// Results of one turn of the loop, handed on together (the runner wakes once for them).
  var results: [(@Sendable (TransferResult) -> Void, TransferResult)] = []

  /// `perHost` caps transfers per host (connections on HTTP/1.1, streams on
  /// HTTP/2), `parallel` transfers in all; a segmented file counts as one,
  /// and its ranges, `segments` at most in the session, are connections of
  /// their own. `rate` is shared by all transfers; a timetable's cap
  /// changes at its boundaries.
  public init?(
    perHost: Int, rate: RateCap?, environment: NetworkEnvironment = NetworkEnvironment(),
    verbose: (@Sendable (String) -> Void)? = nil, segments: Int = Limits.defaultSegments, parallel: Int = .max
  ) {
    // A segmented file's ranges are connections of their own, beside the
    // transfers `per_host` counts (SPEC §9.1: `segments: N` gets N).
    guard let m = CurlMulti(maxPerHost: max(perHost, segments)) else { return nil }
    multi = m
    rangeCap = max(1, segments)
    admission = Admission(total: parallel, perHost: perHost)
    handleCap = 2 * min(max(1, parallel), 128)
    rateCap = rate
    bucket = rate.flatMap { $0.rate(at: Timestamp.current().seconds) }.map { RateLimiter(rate: $0) }
    if let rate, let s = rate.secondsToNextChange(from: Timestamp.current().seconds) {
      nextRateChange = monotonicSeconds() + Double(s)
    }
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

  /// A new transfer: ranges held since an earlier run resume as ranges; anything else starts as one stream.
  private func startOnEngine(_ spec: TransferSpec, _ done: @escaping @Sendable (TransferResult) -> Void) {
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
    if let verbose { verbose("engine: \(stats.text)") }
    multi.close()
  }

  func count(_ n: Int) {
    lock.locked { received += Int64(n) }
  }

  /// Wake-ups `start` has sent.

  func loop() {
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
      let nextRoom = unpause()
      let handedOver = lock.locked {
        full = admission.isFull
        return !inbox.isEmpty
      }
      if handedOver { continue }
      multi.wait(milliseconds: nextRoom ?? 1000)
    }
    retired.removeAll()
    lock.locked {
      spare.removeAll()
      finished = true
      lock.broadcast()
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
  func launch(_ h: Handover) {
    if let t = h.transfer, let easy = t.easy { return add(t, easy) }
    if h.spec.held == nil { lock.locked { engineSetUps += 1 } }
    startOnEngine(h.spec, releasing(h.done, host: h.spec.host))
  }

  /// `done`, then `host`'s slot freed (on the engine thread, where results are handed on).
  func releasing(
    _ done: @escaping @Sendable (TransferResult) -> Void, host: String
  ) -> @Sendable (TransferResult) -> Void {
    { [self] r in
      done(r)
      freed.append(host)
    }
  }

  /// Slots freed this turn go to the transfers waiting for them, at once:
  /// not after a round trip through the runner's thread.
  func beginFreed() {
    while !freed.isEmpty {
      let hosts = freed
      freed.removeAll()
      for h in hosts {
        for ready in admission.release(host: h) { launch(ready) }
      }
    }
  }
}
