import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// Tasks ready to start, one queue per host in first-seen order, so one busy
/// host never holds back another. A retried task goes back to the front.
///
/// A host is looked up by name when a task is queued and when its try
/// begins (`slot(of:)`); otherwise the scheduler works with its slot, a
/// number (it was a dozen lookups by name a task).
struct HostQueues {
  private struct Queue {
    var ready: [Int] = []
    var head = 0
    /// Transfers of this host in flight.
    var active = 0
  }

  private var slotOf: [String: Int] = [:]
  private var queues: [Queue] = []
  /// Hosts in the order they were first seen: slot `s` is `hosts[s]`.
  private(set) var hosts: [String] = []

  /// The host asked for last and its slot: most manifests name one host or
  /// a few, and comparing a name is cheaper than hashing it (two lookups a
  /// task).
  private var last: (name: String, slot: Int)?

  /// The slot of host `h`, made when `h` is new.
  mutating func slot(of h: String) -> Int {
    if let last, last.name == h { return last.slot }
    let s: Int
    if let known = slotOf[h] {
      s = known
    } else {
      s = hosts.count
      slotOf[h] = s
      hosts.append(h)
      queues.append(Queue())
    }
    last = (h, s)
    return s
  }

  mutating func add(_ task: Int, slot s: Int, front: Bool = false) {
    guard front else {
      queues[s].ready.append(task)
      return
    }
    let at = queues[s].head
    if at > 0 {
      queues[s].ready[at - 1] = task
      queues[s].head = at - 1
    } else {
      queues[s].ready.insert(task, at: 0)
    }
  }

  /// The next task of slot `s`, left on its queue; nil when none waits.
  func peek(_ s: Int) -> Int? {
    let q = queues[s]
    return q.head < q.ready.count ? q.ready[q.head] : nil
  }

  /// The next task of slot `s`, taken off its queue; nil when none waits.
  mutating func next(_ s: Int) -> Int? {
    let at = queues[s].head
    guard at < queues[s].ready.count else { return nil }
    let task = queues[s].ready[at]
    queues[s].head = at + 1
    if at + 1 == queues[s].ready.count {
      queues[s].ready.removeAll(keepingCapacity: true)
      queues[s].head = 0
    }
    return task
  }

  /// Transfers of slot `s` in flight.
  func active(_ s: Int) -> Int { queues[s].active }

  /// A transfer of slot `s` began (`by: 1`) or ended (`by: -1`).
  mutating func count(_ s: Int, by n: Int) { queues[s].active += n }

  var isEmpty: Bool { queues.allSatisfy { $0.ready.count == $0.head } }
}
