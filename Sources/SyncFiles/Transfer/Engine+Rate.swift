internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

// The aggregate rate cap: transfers paused and resumed by the `RateLimiter`.
extension TransferEngine {
  /// True when `n` more bytes fit under the cap now; false pauses the
  /// transfer until they do (libcurl hands the same `n` bytes back then).
  func admit(_ n: Int, _ t: Transfer) -> Bool {
    guard bucket != nil else { return true }
    if bucket!.take(n, now: monotonicSeconds()) { return true }
    paused.append((t, n))
    return false
  }

  /// Past a timetable's boundary, the new cap: a fresh bucket at the new
  /// rate, or, for `off`, none and every paused transfer resumed. Asked at
  /// every turn; the engine waits at most a second between turns.
  func followTimetable() {
    guard let cap = rateCap, !cap.isConstant else { return }
    let now = monotonicSeconds()
    guard now >= nextRateChange else { return }
    let wall = Timestamp.current().seconds
    nextRateChange = now + Double(cap.secondsToNextChange(from: wall) ?? 60)
    let rate = cap.rate(at: wall)
    guard rate != bucket?.rate else { return }
    verbose?("rate: the timetable's cap is now \(rate.map { ByteSize.format($0) + "/s" } ?? "off")")
    bucket = rate.map { RateLimiter(rate: $0) }
    if bucket == nil {
      for (t, _) in paused { if let easy = t.easy { curl_easy_pause(easy.handle, sf_pause_cont) } }
      paused.removeAll()
    }
  }

  /// Resumes the paused transfers whose bytes fit in the bucket now, in the
  /// order they paused, and returns the milliseconds until the next one
  /// fits (nil when none waits): the engine sleeps that long at most.
  func unpause() -> Int32? {
    followTimetable()
    guard let bucket, !paused.isEmpty else { return nil }
    let now = monotonicSeconds()
    var reserved: Int64 = 0
    var still: [(transfer: Transfer, bytes: Int)] = []
    var soonest = Double.infinity
    let waiting = paused
    // Resuming may hand bytes to the write callback at once, which may pause it again.
    paused.removeAll()
    for (t, n) in waiting {
      // Room for a tenth of a second's worth, not only the refused read: the
      // transfer then runs for a while before it pauses again, so a capped
      // transfer wakes the engine a few times a second, not for every read.
      let batch = max(n, Int(min(bucket.rate / 10, 256 * 1024)))
      let wait = bucket.secondsUntil(batch, reserved: reserved, now: now)
      if wait > 0 {
        still.append((t, n))
        soonest = min(soonest, wait)
        continue
      }
      reserved += Int64(batch)
      if let easy = t.easy { curl_easy_pause(easy.handle, sf_pause_cont) }
    }
    paused = still + paused
    guard soonest.isFinite else { return nil }
    return Int32(min(1000, max(1, (soonest * 1000).rounded(.up))))
  }
}
