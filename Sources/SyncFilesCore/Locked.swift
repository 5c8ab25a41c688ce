/// A value threads share, reachable only with its lock held: the state
/// lives inside the lock (the shape of swift-nio's `NIOLockedValueBox`), so
/// that code which reads it without the lock does not compile. With a
/// condition variable: a thread may wait, the lock released meanwhile,
/// until another changes the state and signals.
///
/// `@unchecked`: its one stored value is only reached inside `lock`.
public final class Locked<State>: @unchecked Sendable {
  private let lock = Lock()
  private var state: State

  public init(_ state: State) { self.state = state }

  /// `body` with the state, under the lock.
  public func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
    try lock.locked { try body(&state) }
  }

  /// Waits, the lock released meanwhile, until `ready` holds of the state or
  /// the monotonic time `deadline` (seconds) passes; then `body` with the
  /// state, still under the lock.
  public func wait<T>(until deadline: Double? = nil, for ready: (State) -> Bool, then body: (inout State) -> T) -> T {
    lock.locked {
      while !ready(state) {
        if let deadline, monotonicSeconds() >= deadline { break }
        lock.wait(until: deadline)
      }
      return body(&state)
    }
  }

  /// Changes the state under the lock and wakes the threads waiting on it.
  public func update<T>(_ body: (inout State) throws -> T) rethrows -> T {
    try lock.locked {
      defer { lock.broadcast() }
      return try body(&state)
    }
  }
}
