import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// `parallel` and `per_host` as the engine keeps them (`Admission`): what is
/// handed over beyond them waits, in order, for a slot. Pure.
@Suite struct AdmissionTests {
  @Test func itemsBeyondTheTotalWaitAndBeginInOrderAsSlotsFree() {
    var a = Admission<Int>(total: 2, perHost: 8)
    #expect(a.offer(1, host: "h") == 1)
    #expect(a.offer(2, host: "h") == 2)
    #expect(a.offer(3, host: "h") == nil)
    #expect(a.offer(4, host: "h") == nil)
    #expect(a.running == 2 && a.waitingCount == 2)
    #expect(a.release(host: "h") == [3])
    #expect(a.release(host: "h") == [4])
    #expect(a.release(host: "h") == [])
    #expect(a.running == 1 && a.waitingCount == 0)
  }

  @Test func aHostAtItsCapDoesNotHoldBackAnother() {
    var a = Admission<String>(total: 4, perHost: 1)
    #expect(a.offer("a1", host: "a") == "a1")
    #expect(a.offer("a2", host: "a") == nil)
    #expect(a.offer("b1", host: "b") == "b1", "b has room although a2 waits")
    #expect(a.offer("a3", host: "a") == nil)
    #expect(a.release(host: "b") == [], "b's slot is not a's")
    #expect(a.release(host: "a") == ["a2"], "a's own waiting ones begin in the order they came")
    #expect(a.release(host: "a") == ["a3"])
  }

  @Test func aFreedSlotGoesToTheOldestThatFits() {
    var a = Admission<String>(total: 2, perHost: 1)
    #expect(a.offer("a1", host: "a") == "a1")
    #expect(a.offer("b1", host: "b") == "b1")
    #expect(a.offer("a2", host: "a") == nil)
    #expect(a.offer("c1", host: "c") == nil)
    #expect(a.offer("b2", host: "b") == nil)
    // b's slot frees: a2 still does not fit (a is at its cap), c1 does.
    #expect(a.release(host: "b") == ["c1"])
    #expect(a.release(host: "a") == ["a2"])
    #expect(a.release(host: "c") == ["b2"])
  }

  /// Each host's cap holds while hosts come and go: one whose transfers all
  /// ended starts again from none, and one name that only adds to another's
  /// end is another host.
  @Test func eachHostsCapHoldsAsHostsComeAndGo() {
    var a = Admission<String>(total: 3, perHost: 2)
    #expect(a.offer("a1", host: "a") == "a1")
    #expect(a.offer("ab1", host: "ab") == "ab1")
    #expect(a.offer("a2", host: "a") == "a2")
    #expect(a.offer("a3", host: "a") == nil, "a is at its cap of 2")
    #expect(a.offer("b1", host: "b") == nil, "the total of 3 is reached")
    #expect(a.release(host: "ab") == ["b1"], "a3 still does not fit; b1 does")
    #expect(a.release(host: "b") == [])
    #expect(a.offer("ab2", host: "ab") == "ab2", "ab, gone, starts again from none")
    #expect(a.release(host: "a") == ["a3"])
    #expect(a.offer("a4", host: "a") == nil, "a is at its cap again")
    #expect(a.release(host: "ab") == [], "a4 waits for a, not for the total")
    #expect(a.release(host: "a") == ["a4"])
    #expect(a.running == 2 && a.waitingCount == 0)
  }

  @Test func aStopTakesEveryWaitingItemAndLeavesTheRunningCount() {
    var a = Admission<Int>(total: 1, perHost: 1)
    #expect(a.offer(1, host: "h") == 1)
    #expect(a.offer(2, host: "h") == nil)
    #expect(a.offer(3, host: "h") == nil)
    #expect(a.drain() == [2, 3])
    #expect(a.waitingCount == 0 && a.running == 1)
    #expect(a.release(host: "h") == [])
    #expect(a.running == 0)
  }

  /// The runner hands over twice the limits; `Int.max` (no limit, from a
  /// library caller) stays `Int.max` instead of wrapping to a negative cap
  /// under which nothing would ever start.
  @Test func theRunnersHandOverCapSaturates() {
    #expect(Runner.times(8, 2) == 16 && Runner.times(8, 1) == 8)
    #expect(Runner.times(.max, 2) == .max && Runner.times(.max / 2 + 1, 2) == .max)
  }

  @Test func limitsBelowOneMeanOne() {
    var a = Admission<Int>(total: 0, perHost: 0)
    #expect(a.offer(1, host: "h") == 1)
    #expect(a.offer(2, host: "h") == nil)
  }
}
