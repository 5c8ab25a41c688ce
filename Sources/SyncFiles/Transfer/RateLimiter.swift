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
    let allowance = Int64(Double(rate) * (now - begun)) + rate / 5
    guard consumed + Int64(n) <= allowance || consumed == 0 else { return false }
    consumed += Int64(n)
    return true
  }
}
