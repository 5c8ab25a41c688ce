import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

extension SegmentGroup {
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

  func mayTakeARange(_ source: Int) -> Bool {
    !refused.contains(source) && (agreed.contains(source) || !members.contains { $0.source == source })
  }

  /// A mirror takes no more ranges; the range it had goes back to the queue.
  func refuse(_ t: Transfer, _ why: String) {
    t.declined = true
    guard refused.insert(t.source).inserted else { return }
    notes.append("mirror \(sources[t.source].name) \(why); its ranges went to the other sources")
  }

  func confirm() {
    guard !confirmed, !fellBack else { return }
    confirmed = true
  }

  func fallBack(_ why: String) {
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
  func catchUp() {
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
  func heldEnd(from start: Int64) -> Int64 {
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
  func journal() {
    lastJournal = monotonicSeconds()
    spec.onRanges?(extents, total, false)
    for m in members { m.claimed = m.next }
  }
}
