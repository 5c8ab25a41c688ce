import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The scheduler's queues: one per host, by slot, first come first served,
/// a retried task at the front, transfers in flight counted per host.
@Suite struct HostQueuesTests {
  @Test func hostsGetSlotsInFirstSeenOrderAndKeepThem() {
    var q = HostQueues()
    #expect(q.slot(of: "b.example") == 0)
    #expect(q.slot(of: "a.example") == 1)
    #expect(q.slot(of: "b.example") == 0)
    // The same host asked for again, and a name that differs only in its end.
    #expect(q.slot(of: "b.example") == 0)
    #expect(q.slot(of: "b.example.org") == 2)
    #expect(q.slot(of: "a.example") == 1)
    #expect(q.slot(of: "a.example") == 1)
    #expect(q.slot(of: "b.example.org") == 2)
    #expect(q.hosts == ["b.example", "a.example", "b.example.org"])
  }

  @Test func eachHostIsFirstComeFirstServedAndEmptiesCleanly() {
    var q = HostQueues()
    let a = q.slot(of: "a"), b = q.slot(of: "b")
    #expect(q.isEmpty)
    for t in [1, 2, 3] { q.add(t, slot: a) }
    q.add(9, slot: b)
    #expect(!q.isEmpty)
    #expect(q.peek(a) == 1 && q.peek(a) == 1)
    #expect([q.next(a), q.next(a), q.next(a), q.next(a)] == [1, 2, 3, nil])
    #expect(q.peek(a) == nil)
    #expect(!q.isEmpty)
    #expect(q.next(b) == 9)
    #expect(q.isEmpty)
    // A queue emptied is used again from its start.
    q.add(4, slot: a)
    #expect(q.next(a) == 4)
  }

  @Test func aRetriedTaskGoesToTheFront() {
    var q = HostQueues()
    let a = q.slot(of: "a")
    for t in [1, 2, 3] { q.add(t, slot: a) }
    #expect(q.next(a) == 1)
    q.add(7, slot: a, front: true)  // into the room the taken task left
    q.add(8, slot: a, front: true)  // no room left: inserted
    #expect([q.next(a), q.next(a), q.next(a), q.next(a), q.next(a)] == [8, 7, 2, 3, nil])
  }

  @Test func transfersInFlightAreCountedPerHost() {
    var q = HostQueues()
    let a = q.slot(of: "a"), b = q.slot(of: "b")
    q.count(a, by: 1)
    q.count(a, by: 1)
    q.count(b, by: 1)
    q.count(a, by: -1)
    #expect(q.active(a) == 1 && q.active(b) == 1)
  }
}
