internal import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// The scheduling policy of the run's threads. They hand work to each other
/// all the time: a completion to the runner, a file to the install thread, a
/// start to the engine. Under Linux's normal policy (SCHED_OTHER) the woken
/// thread may preempt the one that woke it on its own core, and the engine
/// thread is preempted by the runner about once a request. Under
/// SCHED_BATCH a woken thread waits for a free core, the waker's next sleep or
/// the next tick instead. Nothing else changes: same nice value, same share.
package enum ThreadPolicy {
  package static let normal: Int32 = 0  // SCHED_OTHER
  package static let batch: Int32 = 3  // SCHED_BATCH
  package static let resetOnFork: Int32 = 0x4000_0000  // SCHED_RESET_ON_FORK

  /// The policy the process was given (read before any change of ours).
  package static let original: Int32 = sf_thread_policy()

  /// Runs `body` with the calling thread under SCHED_BATCH, and the threads
  /// it starts meanwhile, which inherit it; then restores the calling
  /// thread's policy. A thread under any other policy than the normal one
  /// (`chrt`, systemd's `CPUSchedulingPolicy=`) is left as it is.
  package static func batched<T>(_ body: () -> T) -> T {
    let old = sf_thread_policy()
    // `original` is read here, before the change, so that `forChild` never
    // takes the run's policy for the process's.
    guard old == original, old >= 0, old & ~resetOnFork == normal,
      sf_set_thread_policy(batch | (old & resetOnFork)) == 0
    else { return body() }
    defer { _ = sf_set_thread_policy(old) }
    return body()
  }

  /// The policy a child process should start with, when it differs from the
  /// calling thread's: the process's own, not the one a run gave its threads.
  package static var forChild: Int32? {
    let now = sf_thread_policy()
    guard original >= 0, now >= 0, now & ~resetOnFork == batch, original & ~resetOnFork == normal else {
      return nil
    }
    return normal
  }
}
