import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// The tasks a run transfers, by number (their order in the plan): each not
/// yet begun, running, or ended. A task's `RunningTask` is made when it first
/// needs one (its first slot, or the bytes of another task with its sha256)
/// and let go when it ends, its report written back to the run's: a run
/// holds the tasks in progress, not one for each task of a large plan.
struct RunningTasks {
  private enum Slot {
    case waiting
    case live(RunningTask)
    case ended
  }

  /// Each task's place in the plan, by number.
  let positions: [Int]
  private var slots: [Slot]

  init(positions: [Int]) {
    self.positions = positions
    slots = Array(repeating: .waiting, count: positions.count)
  }

  var count: Int { positions.count }
  var isEmpty: Bool { positions.isEmpty }
  var numbers: Range<Int> { positions.indices }

  /// Task `n` if it runs now.
  func live(_ n: Int) -> RunningTask? {
    if case .live(let t) = slots[n] { return t }
    return nil
  }

  func hasEnded(_ n: Int) -> Bool {
    if case .ended = slots[n] { return true }
    return false
  }

  /// Task `n`, made by `make` if it has not begun; nil once it has ended.
  mutating func task(_ n: Int, make: (_ number: Int, _ position: Int) -> RunningTask) -> RunningTask? {
    switch slots[n] {
    case .live(let t): return t
    case .ended: return nil
    case .waiting:
      let t = make(n, positions[n])
      slots[n] = .live(t)
      return t
    }
  }

  /// Task `t` has ended: it is let go.
  mutating func end(_ t: RunningTask) { slots[t.number] = .ended }

  /// The tasks that run now.
  var running: [RunningTask] { slots.compactMap { if case .live(let t) = $0 { t } else { nil } } }
}
