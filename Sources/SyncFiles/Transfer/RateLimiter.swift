import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// The aggregate rate cap (`limits.rate`): a token bucket shared by every
/// transfer of a session, filled at `rate` bytes a second from the first
/// byte on, with a fifth of a second of burst so that pacing does not
/// starve a single transfer. Pure: the caller gives the time.
struct RateLimiter {
  let rate: Int64
  private var start: Double?
  private var consumed: Int64 = 0

  init(rate: Int64) { self.rate = rate }

  /// Takes `n` bytes from the bucket at time `now` (seconds, monotonic) if
  /// they fit; false when the transfer must pause. The first bytes always fit.
  mutating func take(_ n: Int, now: Double) -> Bool {
    let begun = start ?? now
    start = begun
    guard consumed + Int64(n) <= allowance(at: now) || consumed == 0 else { return false }
    consumed += Int64(n)
    return true
  }

  /// Seconds from `now` until `n` more bytes fit beside `reserved` bytes
  /// promised to others; 0 when they fit now. A paused transfer is resumed
  /// only then: resuming it earlier makes libcurl hand the same bytes back
  /// at once, to be refused again, and the engine's wait becomes a busy poll.
  func secondsUntil(_ n: Int, reserved: Int64 = 0, now: Double) -> Double {
    guard let begun = start, consumed > 0 else { return 0 }
    let needed = consumed + reserved + Int64(n) - rate / 5
    let at = begun + Double(needed) / Double(rate)
    return max(0, at - now)
  }

  private func allowance(at now: Double) -> Int64 {
    Int64(Double(rate) * (now - (start ?? now))) + rate / 5
  }
}
