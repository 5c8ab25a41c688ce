import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// A task's life after planning, as a value: the runner feeds it events
/// (a try ended, the verifiers spoke, the installer finished, a timer, a
/// stop) and carries out the actions it returns. Every decision about a
/// task's next step lives here and nowhere else: which source the next try
/// uses, whether a failure moves to a mirror, waits out a backoff or ends
/// the task, when a partial is discarded, when to give up starting over.
/// It does no I/O and reads no clock, so each transition is a unit test
/// (`TaskLifecycleTests`). Model: swift-nio's
/// `ProtocolNegotiationHandlerStateMachine` (a state enum, one action list per event).
public struct TaskLifecycle: Sendable, Equatable {
  public enum State: Sendable, Equatable {
    /// Due: waits for a free slot (or for another task's bytes of the same sha256).
    case queued
    /// A try runs.
    case transferring
    /// The bytes are complete; the verifiers run.
    case verifying
    /// A failed try waits out its backoff.
    case waitingToRetry
    /// The verified bytes are with the installer.
    case installing
    /// The task's life is over.
    case finished(TaskOutcome)
  }

  public enum Event: Sendable, Equatable {
    /// A slot is free for the next try.
    case slot
    /// The try just asked for could not be set up (no plugin, the destination is not a file).
    case couldNotStart(String)
    /// Another task's verified bytes (the same sha256) were copied into the partial.
    case copied
    /// The try ended, leaving `partial` behind.
    case tried(TryEnd, partial: PartialHeld = .none)
    /// The verifiers have spoken.
    case verified(Verdict)
    /// The backoff is over.
    case retryDue
    /// The backoff would end after the run's deadline.
    case retryPastDeadline
    /// The installer finished: nil, or why the install failed.
    case installed(failure: String?)
    /// The run is stopping (`reason`: "deadline", "SIGTERM").
    case stop(reason: String)
  }

  /// How a try ended, as the runner read the transfer's result.
  public enum TryEnd: Sendable, Equatable {
    case complete
    case notModified
    /// 416 to a resume; `partialIsWhole`: the partial already holds the announced size.
    case rangeNotSatisfiable(partialIsWhole: Bool)
    /// The partial's bytes cannot be continued (why, without "; starting over").
    case restart(String)
    case stopped
    /// The transport held the try until the run stopped: no request was sent.
    case neverBegan
    case http(status: Int, retryAfter: Double?)
    /// `discardPartial`: its bytes can never be used (more than max_bytes).
    case failed(String, retryable: Bool, discardPartial: Bool)
  }

  /// What the task's partial file holds after a try, as the runner found it.
  public enum PartialHeld: Sendable, Equatable {
    /// No partial file.
    case none
    /// Bytes of a version a resume can name (a strong validator).
    case resumable
    /// Bytes no resume can continue (empty, or no validator to name them by).
    case unresumable
  }

  public enum Verdict: Sendable, Equatable {
    case accepted
    /// The destination already holds exactly these bytes.
    case sameAsInstalled
    /// A verifier asks for the file again (why, without "; starting over").
    case refetch(String)
    /// A verifier refuses these bytes.
    case rejected(String)
    /// The body cannot be trusted whole (its end was marked only by a close).
    case cutShort(String)
    /// The run stopped before the checks could run (a list still on its way): kept for the next run.
    case stopped(String)
    /// The transfer reported complete but left no partial.
    case noPartial
  }

  public enum Action: Sendable, Equatable {
    /// Start a try against source `source` (0: the url, then the mirrors).
    case startTry(source: Int)
    /// Run the verifiers on the partial, then feed `.verified`.
    case verify
    /// Hand the partial to the installer, then feed `.installed`.
    case install
    /// Back to the front of the host's queue.
    case requeue
    /// Feed `.retryDue` after this many seconds (or `.retryPastDeadline`).
    case waitToRetry(seconds: Double)
    case discardPartial
    /// Journal: the destination is current (the validators and digest of this try).
    case recordUnchanged
    /// Journal: the new bytes are installed.
    case recordInstalled
    /// Journal and report: the task failed. A partial still held is kept
    /// for the next run to resume (the actions before said what goes).
    case fail(String)
    /// Journal and report: the run stopped the task; a partial still held is kept.
    case interrupt(String)
    /// Report only: never started because the run stopped; it stays due.
    case notStarted(String)
    case warn(String)
    /// A warning said earlier is now the failure's cause: said once, not twice.
    case withdrawWarning(String)
    case log(String)
    /// The task's life is over: settle it (release tasks waiting for its bytes).
    case end(TaskOutcome)
  }

  /// The retry rules of the entry.
  public struct Retry: Sendable, Equatable {
    public var attempts: Int
    public var backoff: Double
    public var maxBackoff: Double
    public init(attempts: Int, backoff: Double, maxBackoff: Double) {
      self.attempts = attempts
      self.backoff = backoff
      self.maxBackoff = maxBackoff
    }
  }

  public private(set) var state: State = .queued
  /// Display names of the sources: the url, then the mirrors.
  public let sources: [String]
  public let retry: Retry
  /// A destination was there when the run planned (a rejected file then
  /// keeps it; with none, there is nothing to keep and no word of it).
  public var hadDestination = true
  /// The source the next (or current) try uses.
  public private(set) var source = 0
  /// Passes over the sources so far.
  public private(set) var pass = 1
  /// Sources that failed for good (a 404, a refused redirect).
  public private(set) var permanent: Set<Int> = []
  public private(set) var restarts = 0
  public private(set) var tries = 0
  /// Why the run is stopping, once it is.
  public private(set) var stopping: String?
  /// What the last try left in the partial file (none once it is discarded
  /// or handed to the installer).
  public private(set) var partial: PartialHeld = .none
  /// Jitter for the backoff, deterministic for a given seed (SplitMix64).
  private var random: SplitMix64

  public static let maxRestarts = 3

  public init(sources: [String], retry: Retry, seed: UInt64) {
    self.sources = sources.isEmpty ? [""] : sources
    self.retry = retry
    random = SplitMix64(seed: seed)
  }

  public var isFinished: Bool {
    if case .finished = state { return true }
    return false
  }

  /// The one entry point: the actions this event calls for, in order.
  public mutating func handle(_ event: Event) -> [Action] {
    if case .stop(let reason) = event { return stop(reason) }
    switch (state, event) {
    case (.queued, .slot):
      tries += 1
      state = .transferring
      return [.startTry(source: source)]
    case (.queued, .copied):
      return install()
    case (.transferring, .couldNotStart(let why)):
      return end(.failed, discard() + [.fail(why)])
    case (.transferring, .tried(let how, let held)):
      partial = held
      return tried(how)
    case (.verifying, .verified(let verdict)):
      return verified(verdict)
    case (.waitingToRetry, .retryDue):
      state = .queued
      return [.requeue]
    case (.waitingToRetry, .retryPastDeadline):
      return interrupt("deadline reached while waiting to retry")
    case (.installing, .installed(nil)):
      return end(.installed, [.recordInstalled])
    case (.installing, .installed(let why?)):
      return end(.failed, [.fail(why)])
    default:
      // An event the state does not expect (a late timer): nothing changes.
      return []
    }
  }

  /// The run is stopping: a task not yet started stays due; one waiting to
  /// retry is stopped now; one in flight ends with its try.
  private mutating func stop(_ reason: String) -> [Action] {
    guard stopping == nil else { return [] }
    stopping = reason
    return stopNow(reason)
  }

  private mutating func stopNow(_ reason: String) -> [Action] {
    switch state {
    case .queued where tries == 0:
      return end(.interrupted, [.notStarted("not started: the run stopped (\(reason))")])
    case .queued:
      return interrupt("stopped (\(reason)) before the next try")
    case .waitingToRetry:
      return interrupt("stopped (\(reason)) while waiting to retry")
    default:
      return []
    }
  }

  private mutating func tried(_ how: TryEnd) -> [Action] {
    switch how {
    case .complete, .rangeNotSatisfiable(partialIsWhole: true):
      state = .verifying
      return [.verify]
    case .notModified:
      return end(.unchanged, [.recordUnchanged])
    case .rangeNotSatisfiable(partialIsWhole: false):
      return startOver("the server cannot continue the partial (416)")
    case .restart(let why):
      return startOver(why)
    case .stopped:
      return interrupt("stopped before the transfer finished")
    case .neverBegan:
      // As if it had never been handed over: queued, with the try not counted.
      tries -= 1
      state = .queued
      guard let reason = stopping else { return [.requeue] }
      return stopNow(reason)
    case .http(let status, let retryAfter):
      let transient = TransferOutcome.isTransient(status: status)
      return failedTry("HTTP \(status) from \(sources[source])", transient: transient, retryAfter: retryAfter)
    case .failed(let why, let retryable, let useless):
      let first = useless ? discard(always: true) : []
      return first + failedTry(why, transient: retryable, retryAfter: nil)
    }
  }

  private mutating func verified(_ verdict: Verdict) -> [Action] {
    switch verdict {
    case .accepted:
      return install()
    case .sameAsInstalled:
      return end(.unchanged, discard(always: true) + [.recordUnchanged])
    case .refetch(let why):
      return startOver(why)
    case .rejected(let why):
      return end(.failed, discard(always: true) + [.fail(hadDestination ? "\(why); the old file is kept" : why)])
    case .cutShort(let why):
      return end(.failed, discard(always: true) + [.fail(why)])
    case .stopped(let why):
      return interrupt(why)
    case .noPartial:
      return end(.failed, [.fail("the transfer completed without a partial file")])
    }
  }

  /// The partial goes and the file is fetched again, at most `maxRestarts`
  /// times. The cause is said once in the warnings ("…; starting over"),
  /// and once more when the task gives up.
  private mutating func startOver(_ cause: String) -> [Action] {
    restarts += 1
    let why = "\(cause); starting over"
    let said: [Action] = discard(always: true) + [.log(why)]
    if restarts > Self.maxRestarts {
      return end(
        .failed,
        said + [.withdrawWarning(why), .fail("\(cause); gave up after starting over \(Self.maxRestarts) times")])
    }
    if let reason = stopping {
      return end(.interrupted, said + [.interrupt("stopped (\(reason)) before starting over")])
    }
    state = .queued
    return said + [.warn(why), .requeue]
  }

  /// One try failed: the next mirror at once, a retry after a backoff, or
  /// the task fails (every source failed for good, or the attempts are spent).
  private mutating func failedTry(_ why: String, transient: Bool, retryAfter: Double?) -> [Action] {
    if stopping != nil { return interrupt(why) }
    if !transient { permanent.insert(source) }
    let usable = sources.indices.filter { !permanent.contains($0) }
    guard let first = usable.first else { return end(.failed, discard() + [.fail(why)]) }
    if let next = usable.first(where: { $0 > source }) {
      source = next
      state = .queued
      return [.log("\(why); trying mirror \(sources[next])"), .requeue]
    }
    guard pass < retry.attempts else {
      let n = retry.attempts
      return end(.failed, keepIfResumable() + [.fail("\(why) (after \(n) attempt\(n == 1 ? "" : "s"))")])
    }
    let k = pass
    pass += 1
    source = first
    let delay = backoff(afterPass: k, retryAfter: retryAfter)
    state = .waitingToRetry
    return [
      .log("\(why); retry \(k) of \(retry.attempts - 1) in \(Int(delay.rounded(.up)))s"),
      .waitToRetry(seconds: delay),
    ]
  }

  /// Doubling from `backoff`, with jitter between half and all of it (so
  /// many clients do not retry in step), at least the server's Retry-After,
  /// at most `maxBackoff`.
  mutating func backoff(afterPass k: Int, retryAfter: Double?) -> Double {
    RetryPolicy.delay(
      backoff: retry.backoff, maxBackoff: retry.maxBackoff, beforeRetry: k, retryAfter: retryAfter,
      unit: random.nextUnit())
  }

  /// `backoff` doubled for each pass after the first (`RetryPolicy.doubled`).
  public static func doubled(_ backoff: Double, pass k: Int) -> Double { RetryPolicy.doubled(backoff, pass: k) }

  /// How long the journal holds a task back after `failures` failed runs
  /// in a row: the backoff doubled per failure, at most `maxBackoff`, in
  /// whole seconds (no jitter: the next run is the scheduler's).
  public static func hold(afterFailures failures: Int, backoff: TimeSpan, maxBackoff: TimeSpan) -> TimeSpan {
    let held = min(doubled(Double(backoff.seconds), pass: failures), Double(maxBackoff.seconds))
    return TimeSpan(seconds: Int64(held))
  }

  /// The verified bytes go to the installer, which owns them from here.
  private mutating func install() -> [Action] {
    state = .installing
    partial = .none
    return [.install]
  }

  /// The task stops with its try: a partial a resume can continue is kept
  /// for the next run, any other goes.
  private mutating func interrupt(_ why: String) -> [Action] {
    end(.interrupted, keepIfResumable() + [.interrupt(why)])
  }

  /// The one rule of what a task that ends keeps: a partial of a version a
  /// resume can name, when its failure may pass (the next run resumes it).
  private mutating func keepIfResumable() -> [Action] {
    partial == .resumable ? [] : discard()
  }

  /// The partial goes: the file, the journal's claim, the hash so far.
  /// `always`: even when the last try left none (a body held in memory, a
  /// partial from an earlier run).
  private mutating func discard(always: Bool = false) -> [Action] {
    defer { partial = .none }
    return always || partial != .none ? [.discardPartial] : []
  }

  private mutating func end(_ outcome: TaskOutcome, _ actions: [Action]) -> [Action] {
    state = .finished(outcome)
    return actions + [.end(outcome)]
  }
}
