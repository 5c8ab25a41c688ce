import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

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
/// The group's state and its starts are here; what its responses and bytes
/// do is in `Segments+Bytes.swift`, and how its ranges end in `Segments+Ends.swift`.
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
  var refused: Set<Int> = []
  var launched = 0
  /// Ranges in flight (the lead among them while it runs).
  var members: [Transfer] = []
  /// Complete ranges, those held since an earlier run included.
  var held: ByteRanges
  var pending: [Range<Int64>] = []
  /// How many ranges this file runs at once.
  let wanted: Int
  /// A range other than the lead has answered 206 (or this is a resume).
  var confirmed: Bool
  var hashedUpTo: Int64
  var received: Int64 = 0
  let startedAt = monotonicSeconds()
  let resumedFrom: Int64
  var retriesLeft: Int
  var lastJournal = monotonicSeconds()
  var finished = false
  /// The probe range was answered with the whole file: the lead fetches it alone.
  var fellBack = false

  /// Sources whose answers showed the file's size and version.
  var agreed: Set<Int> = [0]
  var notes: [String] = []
  /// Body bytes that arrived and were not written (SPEC §9.1: `bytes_discarded`).
  var discarded: Int64 = 0

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

}
