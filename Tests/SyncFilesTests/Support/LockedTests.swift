import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// State inside its lock: changes made on other threads are all seen, a
/// waiter wakes when the state it waits for arrives, and a deadline ends a
/// wait for a state that never comes.
@Suite struct LockedTests {
  @Test func changesFromManyThreadsAreAllKept() {
    let count = Locked(0)
    let done = Locked(0)
    for _ in 0..<8 {
      startThread {
        for _ in 0..<10_000 { count.withLock { $0 += 1 } }
        done.update { $0 += 1 }
      }
    }
    done.wait(for: { $0 == 8 }, then: { _ in })
    #expect(count.withLock { $0 } == 80_000)
  }

  @Test func aWaiterWakesWhenItsStateArrives() {
    let box = Locked<String?>(nil)
    startThread {
      Thread.sleep(forTimeInterval: 0.05)
      box.update { $0 = "ready" }
    }
    let got = box.wait(for: { $0 != nil }, then: { $0 })
    #expect(got == "ready")
  }

  @Test func aDeadlineEndsAWaitForAStateThatNeverComes() {
    let box = Locked(false)
    let start = monotonicSeconds()
    let got = box.wait(until: start + 0.1, for: { $0 }, then: { $0 })
    let waited = monotonicSeconds() - start
    #expect(!got)
    #expect(waited >= 0.09 && waited < 2, "waited \(waited) s")
  }

  @Test func backgroundHandsBackItsValue() {
    let b = Background { () -> Int in
      Thread.sleep(forTimeInterval: 0.02)
      return 42
    }
    #expect(b.wait() == 42)
    #expect(b.wait() == 42, "a second wait sees the same value")
  }
}
