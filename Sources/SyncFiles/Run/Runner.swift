import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// Executes a plan: every task that is due runs through the transfer engine,
/// is verified, installed atomically and journaled as it happens.
///
/// Each task that transfers is a `RunningTask` while it runs (`tasks`), and
/// every step takes one. Where each decision lives: what a task does next is its
/// `TaskLifecycle`'s (pure); which task starts when is this file's scheduler (per-host queues,
/// `parallel`, `per_host`); what a request asks for is the plan's
/// `RequestPolicy`; how actions touch the world is `Runner+Actions`
/// (transfers, verification, install) and `Runner+Records` (the journal).
/// The loop runs on the caller's thread; transports and the installer post
/// events to it.
public final class Runner: @unchecked Sendable {
  enum Event {
    /// A try of task `number` (`tasks`) ended.
    case transfer(Int, TransferResult)
    case installed([InstallQueue.Done])
    /// A list or signature task `number` waits for has arrived (`TrustStore`).
    case trustFetched(Int)
    case stop(String)
  }

  let plan: SessionPlan
  let manifests: [Manifest]
  let journal: SessionJournal
  let options: RunOptions
  let plugins: PluginRegistry
  private let lock = Lock()
  private var events: [Event] = []
  /// The tasks this run transfers, in the plan's order.
  var tasks = RunningTasks(positions: [])
  /// One draw from the system for the run (not a getrandom per task); each
  /// task's jitter seed follows from it.
  let runSeed = UInt64.random(in: 0...UInt64.max)
  /// What each planned task did, in the plan's order: the run's report. A
  /// running task keeps its own until the run ends (`finish`).
  var reports: [TaskReport] = []
  /// Each task's manifest, by qualified id; made only when the session has
  /// more than one (most have one, and every task is its).
  lazy var manifestOf: [String: Int] = {
    guard manifests.count > 1 else { return [:] }
    var table: [String: Int] = [:]
    table.reserveCapacity(manifests.reduce(0) { $0 + $1.files.count })
    for (m, manifest) in manifests.enumerated() { for f in manifest.files { table[f.qualifiedID] = m } }
    return table
  }()

  /// The manifest a planned task belongs to.
  func manifest(of t: PlannedTask) -> Manifest { manifests[manifestIndex(of: t)] }

  /// Where that manifest is in the session.
  func manifestIndex(of t: PlannedTask) -> Int {
    // With one manifest (most sessions) every task is its: no table of ids.
    manifests.count > 1 ? manifestOf[t.id] ?? 0 : 0
  }

  /// The apply's steps: the caller's, then the run's own.
  var clock: RunClock
  /// When the apply began: the deadline and the elapsed time count from here.
  var startTime: Double { clock.start }

  public init(
    plan: SessionPlan, manifests: [Manifest], journal: SessionJournal, plugins: PluginRegistry, options: RunOptions
  ) {
    self.plugins = plugins
    self.plan = plan
    self.manifests = manifests
    self.journal = journal
    self.options = options
    clock = options.clock ?? RunClock()
  }

  /// Asks the run to stop (a signal): transfers end, resume state is kept.
  public func stop(_ why: String) {
    lock.locked { stopAsked = true }
    post(.stop(why))
  }

  private var stopAsked = false
  public var stopRequested: Bool { lock.locked { stopAsked } }

  func post(_ e: Event) {
    lock.locked {
      // Only the run loop waits, and only for an empty queue: one wake-up per batch.
      if events.isEmpty { lock.signal() }
      events.append(e)
    }
  }

  // MARK: - The run

  /// What the run loop tracks while transfers run (the run thread only).
  struct LoopState {
    var queues = HostQueues()
    /// Tasks that wait for another's bytes (the same sha256).
    var same = SameContent([])
    var waitingRetry: [(at: Double, task: RunningTask)] = []
    var active = 0
    /// Tasks handed to their transport, in the order they started (the progress line names the first).
    var running: [RunningTask] = []
    var installing = 0
    /// Complete files whose lists or signatures are still on their way.
    var awaitingTrust = 0
    /// Files done, for the progress line (a task the run stopped is not).
    var finished = 0
    /// The progress line's total: the plan's expected bytes, each replaced by
    /// what its task transferred once it ends, so the line ends at 100 %.
    var expectedBytes: Int64 = 0
    /// Why the run stops early ("deadline", "SIGTERM"), once it does.
    var stopping: String? = nil
    var lastJournalSync = monotonicSeconds()
    var lastJournalFlush = monotonicSeconds()
    /// Nothing runs, installs, or waits to (or the run is stopping).
    var isIdle: Bool {
      active == 0 && installing == 0 && awaitingTrust == 0
        && (stopping != nil || (waitingRetry.isEmpty && queues.isEmpty))
    }
  }

  var loop = LoopState()
  var installer: InstallQueue?
  /// One transport per source plugin per run (the run thread only).
  var transports: [ObjectIdentifier: any Transport] = [:]
  /// The scheme `transport(for:)` found last and its transport: asked twice
  /// a try, and a run's tasks mostly share one scheme.
  var lastTransport: (scheme: String, transport: any Transport)?
  /// The run's checksum lists and signatures, made when a task first needs one.
  var trustStore: TrustStore?

  public func run() -> RunReport {
    reports = plan.tasks.map { t in
      TaskReport(
        id: t.id, url: t.entry.url.display, destination: t.entry.destinationPath, action: t.action,
        outcome: t.action == .wait ? .waiting : .skipped, reason: t.reason)
    }
    for n in plan.tasks.indices where plan.tasks[n].adopt != nil { adopt(plan.tasks[n], &reports[n]) }
    for n in plan.tasks.indices where plan.tasks[n].correctMode != nil { correctMode(plan.tasks[n], &reports[n]) }
    tasks = RunningTasks(positions: plan.tasks.indices.filter { plan.tasks[$0].runs })
    loop.expectedBytes = plan.expectedBytes
    var report = RunReport(
      session: plan.session, started: Timestamp.current(), journal: journal.path, tasks: [], stopped: nil,
      elapsed: 0)
    // Nothing to transfer: hooks owed by earlier runs still run.
    guard !tasks.isEmpty else { return finish(report) }
    // The engine and install threads start in here and inherit the policy.
    ThreadPolicy.batched { transferAll() }
    trustStore?.finish()
    clock.endTransfers()
    report.stopped = loop.stopping
    return finish(report)
  }

  static let flushInterval = 0.02

  /// The run loop: transfers, installs and records until nothing is left
  /// (or the run stops), then the transports and the install thread end.
  func transferAll() {
    installer = InstallQueue(group: options.groupCommit) { [self] done in post(.installed(done)) }
    loop.same = SameContent(
      tasks.numbers.map { n in
        let t = plan.tasks[tasks.positions[n]]
        return (index: n, sha256: t.entry.sha256, action: t.action)
      })
    for n in tasks.numbers where !loop.same.followers.contains(n) {
      enqueue(number: n, host: plan.tasks[tasks.positions[n]].entry.url.host)
    }
    let deadline = options.deadline.map { startTime + $0 }
    while true {
      if loop.stopping == nil { startMore() }
      if loop.isIdle { break }
      for e in nextEvents(deadline: deadline) { handle(e) }
      // Nothing in flight: what the installer gathers is all there is for now.
      if loop.active == 0 && loop.installing > 0 { installer?.closeGroup() }
      let t = monotonicSeconds()
      // The outcomes held back reach the journal in one write every 20 ms
      // (and at 64 KiB, and at the end): a killed run loses at most those
      // checks, whose files are revalidated next time. A write per batch of
      // events would hold only a few records each.
      if t - loop.lastJournalFlush >= Self.flushInterval {
        journal.flush()
        loop.lastJournalFlush = t
      }
      if loop.stopping == nil, let d = deadline, t >= d { stopRun("deadline", saying: "deadline reached") }
      releaseRetries(now: t)
      tick(now: t)
    }
    // The last figures, where every task ended: 100 % of what was learned.
    tick(now: monotonicSeconds())
    for t in transports.values { t.shutdown() }
    installer?.shutdown()
  }

  /// Task `n`, made when it first needs to be (`RunningTasks`); nil once it has ended.
  func task(_ n: Int) -> RunningTask? {
    tasks.task(n) { number, position in
      let t = plan.tasks[position]
      let sources = [t.entry.url.display] + t.entry.mirrors.map(\.display)
      let r = t.entry.retry
      let retry = TaskLifecycle.Retry(
        attempts: r.attempts, backoff: Double(r.backoff.seconds), maxBackoff: Double(r.maxBackoff.seconds))
      var life = TaskLifecycle(sources: sources, retry: retry, seed: Runner.mix(runSeed, position))
      life.hadDestination = !t.destinationMissing
      return RunningTask(
        number: number, position: position, planned: t, manifest: manifestIndex(of: t), life: life,
        report: reports[position])
    }
  }

  /// Task `t` has ended: its report is the run's, and it is let go.
  func retire(_ t: RunningTask) {
    reports[t.position] = t.report
    tasks.end(t)
  }

  /// Task `n`'s seed from the run's.
  static func mix(_ seed: UInt64, _ n: Int) -> UInt64 { SplitMix64.output(seed: seed, step: UInt64(n + 1)) }

  /// The end of every run: the journal made durable, the hooks it owes run
  /// (and their outcome made durable too), the report completed.
  func finish(_ started: RunReport) -> RunReport {
    var report = started
    clock.endTransfers()
    journal.sync()
    report.prefixes = Pruner.carryOut(plan.prefixes, journal: journal, stopped: report.stopped != nil)
    for t in tasks.running { reports[t.position] = t.report }
    report.hookErrors = runHooks()
    journal.sync()
    journal.compactIfNeeded()
    report.journalError = journal.firstError?.message
    report.tasks = reports
    clock.end(.finish)
    report.elapsed = clock.elapsed
    report.phases = clock.phases
    return report
  }

  // MARK: - The scheduler

  func enqueue(_ t: RunningTask, front: Bool = false) { enqueue(number: t.number, host: t.host, front: front) }

  func enqueue(number n: Int, host: String, front: Bool = false) {
    loop.queues.add(n, slot: loop.queues.slot(of: host), front: front)
  }

  /// Starts transfers, host by host in turn, up to `parallel` and
  /// `per_host`; twice as many where the transport keeps those limits itself
  /// (the built-in one), so that it always holds the next transfer to begin.
  func startMore() {
    var progressed = true
    while progressed && loop.installing < 256 {
      progressed = false
      for s in loop.queues.hosts.indices {
        guard let n = loop.queues.peek(s) else { continue }
        // A task not begun tries its url first.
        let scheme = tasks.live(n)?.scheme ?? plan.tasks[tasks.positions[n]].entry.url.scheme
        let ahead = (try? transport(scheme: scheme))?.keepsLimits == true ? 2 : 1
        guard loop.active < Self.times(options.parallel, ahead),
          loop.queues.active(s) < Self.times(options.perHost, ahead)
        else { continue }
        _ = loop.queues.next(s)
        if let t = task(n) { feed(t, .slot) }
        progressed = true
      }
    }
  }

  /// `limit` × `k`, or `Int.max` past it (a library caller may pass `Int.max`
  /// for no limit: a product that wrapped would start nothing).
  static func times(_ limit: Int, _ k: Int) -> Int {
    let (product, overflow) = limit.multipliedReportingOverflow(by: k)
    return overflow ? .max : product
  }

  /// Waits for events until the next retry, the deadline or a progress tick.
  func nextEvents(deadline: Double?) -> [Event] {
    let now = monotonicSeconds()
    var wake = loop.waitingRetry.map(\.at).min()
    if let d = deadline, loop.stopping == nil { wake = min(wake ?? d, d) }
    if options.tick != nil { wake = min(wake ?? now + 0.2, now + 0.2) }
    // Outcomes held back are written within the flush interval, however long the next event takes.
    if journal.holdsRecords {
      let due = loop.lastJournalFlush + Self.flushInterval
      wake = min(wake ?? due, due)
    }
    return lock.locked {
      if events.isEmpty { lock.wait(until: wake) }
      let b = events
      events.removeAll()
      return b
    }
  }

  func handle(_ e: Event) {
    switch e {
    case .transfer(let n, let r):
      loop.active -= 1
      guard let t = tasks.live(n) else { return }
      if let k = loop.running.firstIndex(where: { $0 === t }) { loop.running.remove(at: k) }
      loop.queues.count(t.hostSlot, by: -1)
      let end = took(t, r)
      feed(t, .tried(end, partial: t.partialHeld))
    case .installed(let done):
      loop.installing -= done.count
      for d in done { installDone(d) }
      // The journal is made durable in groups too (at most twice a second,
      // and at the end): after a power loss a file installed but not yet
      // journaled is revalidated, never trusted blindly.
      if monotonicSeconds() - loop.lastJournalSync > 0.5 {
        journal.sync()
        loop.lastJournalSync = monotonicSeconds()
      }
    case .trustFetched(let n):
      loop.awaitingTrust -= 1
      if let t = tasks.live(n) { perform(.verify, for: t) }
    case .stop(let why):
      if loop.stopping == nil { stopRun(why, saying: why) }
    }
  }

  /// Transfers end (their bytes kept for a resume); every task hears it:
  /// one not started stays due, one waiting to retry stops now.
  func stopRun(_ why: String, saying said: String) {
    loop.stopping = why
    options.log?("syncfiles: \(said): stopping transfers, keeping what was received for a resume")
    for t in transports.values { t.stopAll() }
    trustStore?.stop()
    // A task not begun is made to hear it, ends at once and is let go.
    for n in tasks.numbers where !tasks.hasEnded(n) {
      if let t = task(n) { feed(t, .stop(reason: why)) }
    }
    loop.waitingRetry.removeAll { $0.task.life.isFinished }
  }

  /// Retries whose wait is over go back to their host's queue.
  func releaseRetries(now t: Double) {
    let due = loop.waitingRetry.filter { $0.at <= t }
    loop.waitingRetry.removeAll { $0.at <= t }
    for (_, t) in due { feed(t, .retryDue) }
  }

  func tick(now t: Double) {
    options.tick?(
      RunProgress(
        done: loop.finished, total: tasks.count, bytes: transports.values.reduce(0) { $0 + $1.bytesReceived },
        expectedBytes: loop.expectedBytes, active: min(loop.active, options.parallel),
        elapsed: t - startTime,
        current: loop.running.prefix(2).map(\.id)))
  }

  /// A task has ended: the tasks waiting for its bytes get them, or fetch.
  func settle(_ t: RunningTask) {
    // The progress line counts files done; a task the run stopped is not.
    if t.report.outcome != .interrupted { loop.finished += 1 }
    if t.planned.runs {
      let learned = t.report.bytesTransferred - t.report.bytesDiscarded
      loop.expectedBytes += learned - (t.planned.bytesToTransfer ?? 0)
    }
    for n in loop.same.release(after: t.number) where loop.stopping == nil {
      guard let f = task(n) else { continue }
      if t.report.outcome == .installed, copy(f, from: t) {
        feed(f, .copied)
      } else {
        enqueue(f)
      }
    }
  }
}
