import Testing

@testable import SyncFiles

/// The session's rate cap as a pure token bucket: what fits, given the time.
@Suite struct RateLimiterTests {
  @Test func theFirstBytesFitAndThenTheBucketFillsAtTheRate() {
    var b = RateLimiter(rate: 1000)
    // (bytes, time, fits): the first read fits however large; then 5 s later
    // the bucket allows 5,000 more plus a fifth of a second of burst.
    let steps: [(Int, Double, Bool)] = [
      (5000, 10, true), (1, 10, false), (200, 15, true), (1, 15, false), (1000, 16, true),
    ]
    for (n, now, fits) in steps {
      let took = b.take(n, now: now)
      #expect(took == fits, "\(n) bytes at \(now) s")
    }
  }

  @Test func aPauseNeverLetsTheAverageExceedTheRate() {
    var b = RateLimiter(rate: 10_000)
    var taken = 0
    var now = 0.0
    while now < 10 {
      if b.take(4096, now: now) { taken += 4096 }
      now += 0.001
    }
    #expect(taken <= 10_000 * 10 + 2_000 + 4096, "\(taken) bytes in 10 s at 10 kB/s")
    #expect(taken >= 10_000 * 9, "\(taken): the bucket was not starved")
  }
}
