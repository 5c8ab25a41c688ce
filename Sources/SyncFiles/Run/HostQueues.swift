/// Tasks ready to start, one queue per host in first-seen order, so one busy
/// host never holds back another. A retried task goes back to the front.
struct HostQueues {
  private var ready: [String: [Int]] = [:]
  private var head: [String: Int] = [:]
  /// Hosts in the order they were first seen.
  private(set) var hosts: [String] = []

  mutating func add(_ task: Int, host h: String, front: Bool = false) {
    if ready[h] == nil {
      ready[h] = []
      head[h] = 0
      hosts.append(h)
    }
    guard front else {
      ready[h]!.append(task)
      return
    }
    let at = head[h]!
    if at > 0 {
      ready[h]![at - 1] = task
      head[h] = at - 1
    } else {
      ready[h]!.insert(task, at: 0)
    }
  }

  /// The next task of `host`, left on its queue; nil when none waits.
  func peek(of h: String) -> Int? {
    guard let at = head[h], at < ready[h]!.count else { return nil }
    return ready[h]![at]
  }

  /// The next task of `host`, taken off its queue; nil when none waits.
  mutating func next(of h: String) -> Int? {
    guard let at = head[h], at < ready[h]!.count else { return nil }
    let task = ready[h]![at]
    head[h] = at + 1
    if at + 1 == ready[h]!.count {
      ready[h]!.removeAll(keepingCapacity: true)
      head[h] = 0
    }
    return task
  }

  var isEmpty: Bool { hosts.allSatisfy { ready[$0]!.count == head[$0]! } }
}
