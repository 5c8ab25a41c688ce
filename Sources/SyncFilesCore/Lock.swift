#if canImport(Glibc)
  import Glibc
#endif

/// A mutex with a condition variable, for the few values threads share
/// (the runner's event queue, the engine's inbox, counters).
public final class Lock: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  public init() {
    pthread_mutex_init(mutex, nil)
    var attr = pthread_condattr_t()
    pthread_condattr_init(&attr)
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
    pthread_cond_init(cond, &attr)
    pthread_condattr_destroy(&attr)
  }

  deinit {
    pthread_cond_destroy(cond)
    pthread_mutex_destroy(mutex)
    cond.deallocate()
    mutex.deallocate()
  }

  public func locked<T>(_ body: () throws -> T) rethrows -> T {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body()
  }

  /// With the lock held: waits for a signal or until the monotonic time `deadline` (seconds).
  package func wait(until deadline: Double?) {
    guard let deadline else {
      pthread_cond_wait(cond, mutex)
      return
    }
    var ts = timespec()
    ts.tv_sec = Int(deadline)
    ts.tv_nsec = Int((deadline - Double(Int(deadline))) * 1e9)
    pthread_cond_timedwait(cond, mutex, &ts)
  }

  /// With the lock held: wakes one thread waiting on the condition.
  package func signal() { pthread_cond_signal(cond) }

  /// With the lock held: wakes every thread waiting on the condition.
  package func broadcast() { pthread_cond_broadcast(cond) }
}

/// Seconds on the monotonic clock (for deadlines and rates, never for dates).
package func monotonicSeconds() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Starts a detached thread running `body`.
package func startThread(_ body: @escaping @Sendable () -> Void) {
  final class Box {
    let body: @Sendable () -> Void
    init(_ b: @escaping @Sendable () -> Void) { body = b }
  }
  let arg = Unmanaged.passRetained(Box(body)).toOpaque()
  var thread = pthread_t()
  let rc = pthread_create(
    &thread, nil,
    { arg in
      let box = Unmanaged<AnyObject>.fromOpaque(arg!).takeRetainedValue() as! Box
      box.body()
      return nil
    }, arg)
  precondition(rc == 0, "cannot start a thread: \(String(cString: strerror(rc)))")
  pthread_detach(thread)
}

/// A value worked out on a thread of its own while the caller does
/// something else; `wait` returns it once it is there.
package final class Background<Value: Sendable>: Sendable {
  /// Set once by the working thread.
  private let value = Locked<Value?>(nil)

  package init(_ work: @escaping @Sendable () -> Value) {
    startThread { [value] in
      let v = work()
      value.update { $0 = v }
    }
  }

  package func wait() -> Value {
    value.wait(for: { $0 != nil }, then: { $0! })
  }
}
