// Over 400 lines: one type, SegmentGroup, the byte ranges of one file and every decision about them.
#if canImport(Glibc)
  import Glibc
#endif

/// One file fetched as several byte ranges at once (SPEC §8.3), on the
/// engine thread. Every range is a `Transfer` of its own, written at its
/// offset into the one preallocated partial.
///
/// - Formed when a first response (200 or 206 from byte 0) names the whole
///   size under a strong validator and advertises byte ranges. That
///   response hands the file over before its body is written (`handOver`):
///   every piece, the first included, is asked for as a range with
///   `If-Range`. The first piece's answer confirms that ranges work; a
///   server that answers it with the whole file (200) has it fetched as one
///   stream by that answer, and says so.
/// - Formed at once for a resume of ranges held since an earlier run; then
///   any answer but a 206 of the asked range means the version changed.
/// - Pieces are asked for in file order, each by a request of its own, and
///   a connection that ends its piece takes the next one not yet asked for.
///   No request is cut short while it runs: nothing the server sent is
///   thrown away or asked for twice (SPEC §9.1).
/// - SHA-256 needs the bytes in order: bytes that arrive at the end of the
///   hashed prefix are hashed as they arrive, the rest are read back once
///   the ranges before them are complete.
/// - The entry's http(s) mirrors take ranges in turn with the first server
///   (as aria2 does with metalinks); only the first server's answer confirms
///   that ranges work. A mirror whose answer names another
///   size or version, or that fails, takes no more; its range goes back to
///   the queue.
/// - The journal hears which bytes are held whenever a range has written
///   `journalStep` bytes since it last did, at least once a second, and at
///   each range's end, so that a kill -9 costs at most `journalStep` a
///   range again (SPEC §9.1). Those claims hold for this boot only (a kill
///   keeps the page cache); when the group ends the partial is flushed and
///   the claim marked durable, the one a later boot trusts (SPEC §9.2).
final class SegmentGroup {
  unowned let engine: TransferEngine
  let spec: TransferSpec
  let done: @Sendable (TransferResult) -> Void
  let partial: PartialFile
  let total: Int64
  let validators: Validators
  /// What `If-Range` carries: the validator the partial's bytes are of.
  let ifRange: String
  /// Where the ranges are asked for: the lead's URL (after redirects), then
  /// the mirrors (URL to ask, URL to name in messages).
  let sources: [(url: String, name: String)]
  /// Sources that disagreed or failed: they take no more ranges.
  private var refused: Set<Int> = []
  private var launched = 0
  /// Ranges in flight (the lead among them while it runs).
  private(set) var members: [Transfer] = []
  /// Complete ranges, those held since an earlier run included.
  private var held: ByteRanges
  private var pending: [Range<Int64>] = []
  /// How many ranges this file runs at once.
  let wanted: Int
  /// A range other than the lead has answered 206 (or this is a resume).
  private(set) var confirmed: Bool
  private var hashedUpTo: Int64
  private var received: Int64 = 0
  private let startedAt = monotonicSeconds()
  private let resumedFrom: Int64
  private var retriesLeft: Int
  private var lastJournal = monotonicSeconds()
  private(set) var finished = false
  /// The probe range was answered with the whole file: the lead fetches it alone.
  private var fellBack = false
  private(set) var notes: [String] = []
  /// Body bytes that arrived and were not written (SPEC §9.1: `bytes_discarded`).
  private(set) var discarded: Int64 = 0

  static let minimumSplit: Int64 = 1 << 20
  static let journalStep: Int64 = 1 << 20

  init(
    engine: TransferEngine, spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void,
    partial: PartialFile, total: Int64, validators: Validators, ifRange: String, url: String, held: ByteRanges,
    hashed: Int64, wanted: Int, confirmed: Bool
  ) {
    self.engine = engine
    self.spec = spec
    self.done = done
    self.partial = partial
    self.total = total
    self.validators = validators
    self.ifRange = ifRange
    sources = [(url, "")] + spec.mirrors
    self.held = held
    self.wanted = wanted
    self.confirmed = confirmed
    hashedUpTo = hashed
    resumedFrom = held.count
    retriesLeft = 2 * wanted
  }

  /// `gaps` as the pieces the connections take in turn (`ByteRanges.pieces`).
  func pieces(_ gaps: [Range<Int64>]) -> [Range<Int64>] {
    ByteRanges.pieces(gaps, size: ByteRanges.pieceSize(total: total, ranges: wanted, minimum: Self.minimumSplit))
  }

  /// The bytes held now: complete ranges and what the running ones wrote.
  var extents: ByteRanges {
    var all = held
    for m in members { all.insert(m.rangeStart..<(m.rangeStart + m.written)) }
    return all
  }

  /// Records the layout before the first byte lands at an offset, then
  /// reserves the file: a kill between the two leaves a journal that knows
  /// the partial is segmented (never read as one stream).
  func prepare(missing: [Range<Int64>]) -> TransferOutcome? {
    spec.onRanges?(held, total, false)
    do { try partial.preallocate(total) } catch { return .failed(.partialFile(error)) }
    pending = missing
    return nil
  }

  /// The first response hands the file over to the ranges before a byte of
  /// its body is written: it joins as a range that has ended empty, and its
  /// connection is closed. Only the bytes libcurl had already handed over
  /// with its headers are thrown away.
  func handOver(from lead: Transfer) {
    lead.group = self
    lead.handedOver = true
    lead.rangeStart = 0
    lead.rangeEnd = 0
    lead.requestEnd = 0
    lead.reachedEnd = true
    members.append(lead)
    engine.rangesInFlight += 1
  }

  /// The first piece, asked for as a range and answered 206, is the first
  /// range: it ends where it was asked to (`Transfer.firstPiece`).
  func adopt(first t: Transfer, end: Int64) {
    t.group = self
    t.rangeStart = 0
    t.rangeEnd = end
    t.requestEnd = end
    t.claimed = 0
    members.append(t)
    engine.rangesInFlight += 1
  }

  /// Bytes that arrived and were not written.
  func discard(_ n: Int) { discarded += Int64(n) }

  // MARK: - Starting ranges (from the engine loop, never from a callback)

  /// Starts pending ranges up to `wanted` and the session cap.
  func pump() {
    guard !finished else { return }
    while members.count < wanted && engine.rangesInFlight < engine.rangeCap && !pending.isEmpty {
      let r = pending.removeFirst()
      let t = Transfer(spec: spec, done: { _ in }, engine: engine)
      t.group = self
      t.partial = partial
      t.rangeStart = r.lowerBound
      t.claimed = r.lowerBound
      t.rangeEnd = r.upperBound
      t.requestEnd = r.upperBound
      t.rangeHeaders = ["Range: bytes=\(r.lowerBound)-\(r.upperBound - 1)", "If-Range: \(ifRange)"]
      // Until the first server has answered a range with 206, only it is
      // asked; then the usable sources take turns, a mirror one range at a
      // time until its first answer shows the same version.
      let usable = confirmed ? sources.indices.filter(mayTakeARange) : [0]
      t.source = usable[launched % usable.count]
      launched += 1
      members.append(t)
      engine.rangesInFlight += 1
      engine.begin(t, url: sources[t.source].url, hops: 0)
    }
  }

  // MARK: - Responses and bytes (engine thread, inside libcurl callbacks)

  /// The headers of a range other than the lead are in, and what they mean
  /// (`ResponseVerdict`). False aborts it. A mirror that answers otherwise
  /// takes no more ranges; the first server's answer confirms the ranges,
  /// falls back to one stream, or starts the file over.
  func decide(_ t: Transfer, _ answer: ResponseVerdict.RangeAnswer) -> Bool {
    if t.source != 0 {
      guard answer == .asked else {
        refuse(t, "answered HTTP \(t.status) for another version or size")
        return false
      }
      agreed.insert(t.source)
      return true
    }
    switch answer {
    case .asked:
      confirm()
      return true
    case .whole(sameVersion: false) where !confirmed:
      // A whole body of another version (a cache answering from its
      // previous copy while it refreshes): its bytes are not of the
      // version this group's validators name, so none of them is kept.
      t.failure = .restart("the server answered the first range with the whole file of another version")
    case .whole where !confirmed:
      // The server does not honour ranges after all: the answer for the
      // first piece is the whole file, from byte 0, and goes on alone.
      fallBack("the server answered a range request with the whole file; fetched as one stream")
      guard t.rangeStart == 0 else {
        t.declined = true
        return false
      }
      t.rangeEnd = total
      t.requestEnd = total
      return true
    case .whole:
      t.failure = .restart(
        "the server's version changed during a segmented transfer (If-Range answered with the whole file)")
    case .mismatch(let why):
      t.failure = .restart(why)
    }
    return false
  }

  /// Sources whose answers showed the file's size and version.
  private var agreed: Set<Int> = [0]

  private func mayTakeARange(_ source: Int) -> Bool {
    !refused.contains(source) && (agreed.contains(source) || !members.contains { $0.source == source })
  }

  /// A mirror takes no more ranges; the range it had goes back to the queue.
  private func refuse(_ t: Transfer, _ why: String) {
    t.declined = true
    guard refused.insert(t.source).inserted else { return }
    notes.append("mirror \(sources[t.source].name) \(why); its ranges went to the other sources")
  }

  private func confirm() {
    guard !confirmed, !fellBack else { return }
    confirmed = true
  }

  private func fallBack(_ why: String) {
    guard !confirmed, !fellBack else { return }
    fellBack = true
    notes.append(why)
    pending.removeAll()
    for m in members where m.rangeStart == 0 { m.rangeEnd = total }
    retriesLeft = 0
  }

  /// Body bytes of range `t`: written at their offset, cut at the range's
  /// end (what lies past it belongs to another range), hashed when in order.
  func write(_ t: Transfer, _ buffer: UnsafeRawBufferPointer) -> Bool {
    let at = t.next
    guard at < t.rangeEnd else {
      t.reachedEnd = true
      discarded += Int64(buffer.count)
      return false
    }
    let take = Int(min(Int64(buffer.count), t.rangeEnd - at))
    discarded += Int64(buffer.count - take)
    let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<take])
    guard engine.admit(take, t) else { return false }
    do { try partial.write(bytes, at: at) } catch {
      t.failure = .failed(.partialFile(error))
      return false
    }
    t.written += Int64(take)
    t.received += Int64(take)
    received += Int64(take)
    engine.count(take)
    if at == hashedUpTo {
      spec.hasher.update(bytes, writtenAt: at, in: partial.reader)
      hashedUpTo += Int64(take)
    }
    catchUp()
    if t.next - t.claimed >= Self.journalStep || monotonicSeconds() - lastJournal > 1 { journal() }
    if t.next >= t.rangeEnd {
      t.reachedEnd = true
      // A range cut short (stolen from, or the lead) ends here; one that
      // reached the end it asked for finishes cleanly, its connection kept.
      if take < buffer.count || t.rangeEnd < t.requestEnd { return false }
    }
    return true
  }

  /// Hands the hashing what the ranges have completed past the hashed
  /// prefix, to be read back from the partial on the hashing thread (read
  /// back here, 1 MiB at a time, when no descriptor is left for that).
  private func catchUp() {
    let end = heldEnd(from: hashedUpTo)
    guard end > hashedUpTo else { return }
    if let reader = partial.reader {
      spec.hasher.update(readingBack: hashedUpTo..<end, from: reader)
      hashedUpTo = end
      return
    }
    let upTo = min(end, hashedUpTo + (1 << 20))
    if partial.hash(hashedUpTo..<upTo, into: spec.hasher) { hashedUpTo = upTo }
  }

  /// Where the bytes held from `start` on end (held ranges and what the
  /// running ones wrote): called on every write, so it allocates nothing.
  private func heldEnd(from start: Int64) -> Int64 {
    var end = start
    var grew = true
    while grew {
      grew = false
      for r in held.ranges where r.lowerBound <= end && r.upperBound > end {
        end = r.upperBound
        grew = true
      }
      for m in members where m.rangeStart <= end && m.next > end {
        end = m.next
        grew = true
      }
    }
    return end
  }

  /// Tells the journal what is held, in this boot (not flushed: a flush
  /// here made a fast transfer wait for the disk at every step).
  private func journal() {
    lastJournal = monotonicSeconds()
    spec.onRanges?(extents, total, false)
    for m in members { m.claimed = m.next }
  }

  // MARK: - Ends

  /// Range `t` has ended, well or not (already detached from libcurl).
  func ended(_ t: Transfer, outcome: TransferOutcome) {
    members.removeAll { $0 === t }
    engine.rangesInFlight -= 1
    guard !finished else { return }
    let complete = t.reachedEnd || (outcome == .complete && t.next >= t.rangeEnd)
    // What it wrote is held, however it ended.
    held.insert(t.rangeStart..<t.next)
    if t.source != 0 && !complete {
      // A mirror that failed or disagreed: what it owed is asked of the others.
      if !t.declined { refuse(t, "failed (\(Self.words(outcome)))") }
      if t.next < t.rangeEnd { pending.append(t.next..<t.rangeEnd) }
    } else if complete || t.declined {
      if complete { journal() }
    } else {
      // What it still owed.
      let owed = t.next..<max(t.next, t.rangeEnd)
      if outcome.isTransient && retriesLeft > 0 && !owed.isEmpty && !fellBack {
        // One range failed: ask again for what it still owed, as a range.
        retriesLeft -= 1
        pending.append(owed)
      } else {
        return finish(outcome)
      }
    }
    if held.covers(total: total) { return finish(.complete) }
    if members.isEmpty && pending.isEmpty {
      // Nothing runs, and bytes are missing: ask for them again, or give up.
      guard confirmed && retriesLeft > 0 else {
        return finish(
          .failed(
            .unusableAnswer(
              "the transfer ended holding \(ByteSize.format(held.count)) of \(ByteSize.format(total))", retryable: true)
          ))
      }
      retriesLeft -= 1
      pending = pieces(held.missing(total: total))
    }
  }

  static func words(_ o: TransferOutcome) -> String {
    switch o {
    case .failed(let e): return e.message
    case .restart(let why): return why
    case .http(let s, _): return "HTTP \(s)"
    default: return "\(o)"
    }
  }

  /// Ends every range still running and reports the file once.
  func finish(_ outcome: TransferOutcome) {
    guard !finished else { return }
    finished = true
    for m in members {
      held.insert(m.rangeStart..<m.next)
      engine.detach(m)
      engine.rangesInFlight -= 1
    }
    members.removeAll()
    var outcome = outcome
    if outcome == .complete {
      while hashedUpTo < total, heldEnd(from: hashedUpTo) > hashedUpTo {
        let before = hashedUpTo
        catchUp()
        if hashedUpTo == before { break }
      }
      if hashedUpTo != total {
        outcome = .failed(.readBack(path: partial.destination, errno: Errno(errno)))
      }
    }
    var ranges: ByteRanges? = held
    if fellBack && outcome != .complete, (try? partial.truncate(to: held.prefix)) != nil {
      // One stream continues what it wrote, from where it stopped.
      ranges = nil
      hashedUpTo = min(hashedUpTo, held.prefix)
    }
    // Flushed, the ranges held are what a later boot may trust.
    spec.onRanges?(ranges, total, partial.syncWritten())
    let head = ResponseHead(status: 206, validators: validators, totalBytes: total, offset: 0, restarted: false)
    var r = TransferResult(id: spec.id, outcome: outcome, hasher: spec.hasher)
    r.status = confirmed ? 206 : 200
    r.received = received + discarded
    r.resumedFrom = resumedFrom
    r.head = head
    r.validators = validators
    r.partial = partial
    r.ranges = ranges
    r.hashed = hashedUpTo
    r.notes = notes
    r.segments = confirmed ? wanted : 1
    r.discarded = discarded
    done(r)
  }
}
