import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// Which handed-over transfers run now, under `parallel` and `per_host`.
///
/// The runner hands the engine more transfers than the limits allow; the
/// rest wait here, in the order they came, and begin on the engine thread
/// the moment a slot frees. Without them a freed slot waited for a round
/// trip through the runner's thread, and on a run of quick 304s the engine
/// sat idle while the runner handled the last batch.
/// Pure: the engine thread owns it.
struct Admission<Item> {
  let total: Int
  let perHost: Int
  /// Transfers running now.
  private(set) var running = 0
  /// Transfers running per host, for the hosts that have any: at most
  /// `total` of them, found by comparing names rather than hashing them
  /// (three look-ups by name a request, on the busiest thread).
  private var byHost: [(host: String, running: Int)] = []
  private var waiting: [(host: String, item: Item)] = []

  init(total: Int, perHost: Int) {
    self.total = max(1, total)
    self.perHost = max(1, perHost)
  }

  /// Whether every slot is taken: nothing handed over can begin before a transfer ends.
  var isFull: Bool { running >= total }

  /// Transfers handed over that wait for a slot.
  var waitingCount: Int { waiting.count }

  /// `item` for `host`: returned when it may begin now, else kept until a
  /// slot frees. (An item that fits never overtakes one of its own host:
  /// those wait only while their host is at its cap.)
  mutating func offer(_ item: Item, host: String) -> Item? {
    guard fits(host) else {
      waiting.append((host, item))
      return nil
    }
    take(host)
    return item
  }

  /// A transfer for `host` has ended: the waiting items that fit now, oldest
  /// first (one host at its cap does not hold back another's).
  mutating func release(host: String) -> [Item] {
    running -= 1
    if let k = entry(of: host) {
      byHost[k].running -= 1
      if byHost[k].running == 0 { byHost.swapAt(k, byHost.count - 1); byHost.removeLast() }
    }
    var ready: [Item] = []
    var k = 0
    while k < waiting.count && running < total {
      guard fits(waiting[k].host) else {
        k += 1
        continue
      }
      let w = waiting.remove(at: k)
      take(w.host)
      ready.append(w.item)
    }
    return ready
  }

  /// Everything still waiting, taken out (the run stops).
  mutating func drain() -> [Item] {
    defer { waiting.removeAll() }
    return waiting.map(\.item)
  }

  private func fits(_ host: String) -> Bool { running < total && runningFor(host) < perHost }

  private func runningFor(_ host: String) -> Int { entry(of: host).map { byHost[$0].running } ?? 0 }

  /// Where `host` is in `byHost`; nil when none of its transfers runs.
  private func entry(of host: String) -> Int? { byHost.firstIndex { $0.host == host } }

  private mutating func take(_ host: String) {
    running += 1
    if let k = entry(of: host) {
      byHost[k].running += 1
    } else {
      byHost.append((host, 1))
    }
  }
}
