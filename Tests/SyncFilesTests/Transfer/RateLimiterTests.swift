import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

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

/// When a paused transfer may be resumed: only once its bytes fit.
@Suite struct RateLimiterWaitTests {
  @Test func aRefusedReadWaitsForItsOwnBytesAndThoseReservedBeforeIt() {
    var b = RateLimiter(rate: 1000)
    #expect(b.secondsUntil(500, now: 0) == 0, "an unused bucket holds nobody")
    let first = b.take(1000, now: 0)
    #expect(first)
    // 1,000 taken, 200 of burst: 500 more fit once 1,300 bytes' worth of time passed.
    #expect(abs(b.secondsUntil(500, now: 0) - 1.3) < 1e-9)
    #expect(abs(b.secondsUntil(500, now: 1) - 0.3) < 1e-9)
    #expect(abs(b.secondsUntil(500, reserved: 500, now: 1) - 0.8) < 1e-9)
    #expect(b.secondsUntil(500, now: 2) == 0)
    let later = b.take(500, now: 1.3)
    #expect(later)
  }
}
