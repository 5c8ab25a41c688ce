import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

extension SegmentGroup {
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
