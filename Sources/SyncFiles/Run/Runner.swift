#if canImport(Glibc)
  import Glibc
#endif

public struct RunOptions: Sendable {
  public var parallel: Int
  public var perHost: Int
  /// Aggregate bytes per second.
  public var rate: Int64?
  /// `limits.segments`: byte ranges in flight in the session.
  public var segments = Limits.defaultSegments
  /// Stop after this many seconds (exit 75).
  public var deadline: Double?
  /// Group commits of many small files (one syncfs per group); off = one fsync per file.
  public var groupCommit = true
  public var hookTimeout: Double = 600
  public var verifyTimeout: Double = 600
  /// CA bundle, CA folder and netrc file named by the environment.
  public var environment = NetworkEnvironment()
  /// `--verbose`: every request and response header, secrets as `***`.
  public var verbose: (@Sendable (String) -> Void)? = nil
  /// Plain log lines (stderr in the CLI).
  public var log: @Sendable (String) -> Void = { _ in }
  /// Called about five times a second while transfers run (a live progress line).
  public var tick: (@Sendable (RunProgress) -> Void)? = nil

  public init(parallel: Int, perHost: Int, rate: Int64? = nil, deadline: Double? = nil) {
    self.parallel = parallel
    self.perHost = perHost
    self.rate = rate
    self.deadline = deadline
  }
}

public struct RunProgress: Sendable {
  public var done: Int
  public var total: Int
  public var bytes: Int64
  public var expectedBytes: Int64
  public var active: Int
  public var elapsed: Double
}

public enum TaskOutcome: String, Sendable, CaseIterable {
  case installed, unchanged, failed, waiting, interrupted, skipped
}

public struct TaskReport: Sendable {
  public var id: String
  public var url: String
  public var destination: String
  public var action: Action
  public var outcome: TaskOutcome
  public var bytesTransferred: Int64 = 0
  public var resumedFrom: Int64 = 0
  public var httpStatus: Int? = nil
  public var error: String? = nil
  public var warnings: [String] = []
  /// Installed with content different from before (on_change ran).
  public var changed = false
  public var attempts = 0
  public var sha256: String? = nil
  public var hookError: String? = nil
  /// Installed from another task's verified bytes (the same sha256), with no transfer.
  public var copiedFrom: String? = nil
  /// How: `reflink` or `copy`.
  public var copyMethod: String? = nil
  /// Fetched as this many byte ranges at once (SPEC §8.3); nil: one stream.
  public var segments: Int? = nil
  public var reason: String
}

public struct RunReport: Sendable {
  public var session: String
  public var started: Timestamp
  public var journal: String
  public var tasks: [TaskReport]
  /// Why the run stopped early ("deadline", "SIGTERM"), if it did.
  public var stopped: String?
  public var elapsed: Double
  public var hookErrors: [String] = []
  public var journalError: String?

  public func count(_ o: TaskOutcome) -> Int { tasks.lazy.filter { $0.outcome == o }.count }
  public var bytesTransferred: Int64 { tasks.reduce(0) { $0 + $1.bytesTransferred } }

  /// SPEC §3: 75 stopped early with work left, 1 a task (or hook) failed, 0 otherwise.
  public var exitCode: Int32 {
    if stopped != nil && count(.interrupted) > 0 { return 75 }
    if count(.failed) > 0 || !hookErrors.isEmpty || journalError != nil { return 1 }
    if stopped != nil { return 75 }
    return 0
  }
}

/// Executes a plan: every task that is due runs through the transfer engine,
/// is verified, installed atomically and journaled as it happens.
public final class Runner: @unchecked Sendable {
  enum Event {
    case transfer(Int, TransferResult)
    case installed([InstallQueue.Done])
    case stop(String)
  }

  struct Job {
    var task: PlannedTask
    var manifest: Int
    var urls: [SourceURL]
    var urlIndex = 0
    /// Passes over url + mirrors so far.
    var pass = 1
    var permanent: Set<Int> = []
    var partial: PartialFile?
    var hasher = SHA256Hasher()
    /// Validators the partial was written under (a resume continues only that version).
    var partialValidators: Validators?
    /// A segmented partial's bytes (SPEC §8.3): the next try asks for the rest.
    var held: HeldRanges?
    /// Partial data can be continued only when its version can be named.
    var resumable: Bool { partialValidators?.ifRange != nil }
    var restarts = 0
    /// Validators of the complete transfer, for the journal once installed.
    var pendingValidators: Validators?
    var report: TaskReport
    var host: String { urls[urlIndex].host }
  }

  let plan: SessionPlan
  let manifests: [Manifest]
  let journal: SessionJournal
  let options: RunOptions
  let plugins: PluginRegistry
  private let lock = Lock()
  private var events: [Event] = []
  private var jobs: [Job] = []
  private let startTime = monotonicSeconds()

  public init(
    plan: SessionPlan, manifests: [Manifest], journal: SessionJournal, plugins: PluginRegistry, options: RunOptions
  ) {
    self.plugins = plugins
    self.plan = plan
    self.manifests = manifests
    self.journal = journal
    self.options = options
  }

  /// Asks the run to stop (a signal): transfers end, resume state is kept.
  public func stop(_ why: String) {
    lock.locked { stopAsked = true }
    post(.stop(why))
  }

  private var stopAsked = false
  public var stopRequested: Bool { lock.locked { stopAsked } }

  private func post(_ e: Event) {
    lock.locked {
      events.append(e)
      lock.signal()
    }
  }

  // MARK: - The run

  /// What the run loop tracks while transfers run (the run thread only).
  struct LoopState {
    var queues = HostQueues()
    /// Tasks that wait for another's bytes (the same sha256).
    var same = SameContent([])
    var waitingRetry: [(at: Double, index: Int)] = []
    var active = 0
    var activeByHost: [String: Int] = [:]
    var installing = 0
    /// Files done, for the progress line (a task the run stopped is not).
    var finished = 0
    /// Why the run stops early ("deadline", "SIGTERM"), once it does.
    var stopping: String? = nil
    var lastJournalSync = monotonicSeconds()
    /// Nothing runs, installs, or waits to (or the run is stopping).
    var isIdle: Bool {
      active == 0 && installing == 0 && (stopping != nil || (waitingRetry.isEmpty && queues.isEmpty))
    }
  }

  private var loop = LoopState()
  private var installer: InstallQueue?
  /// Indices of the jobs this run transfers.
  private var toRun: [Int] = []

  public func run() -> RunReport {
    jobs = makeJobs()
    for i in jobs.indices where jobs[i].task.adopt != nil { adopt(i) }
    for i in jobs.indices where jobs[i].task.correctMode != nil { correctMode(i) }
    toRun = jobs.indices.filter { jobs[$0].task.runs }
    var report = RunReport(
      session: plan.session, started: Timestamp.current(), journal: journal.path, tasks: [], stopped: nil,
      elapsed: 0)
    // Nothing to transfer: hooks owed by earlier runs still run.
    guard !toRun.isEmpty else { return finish(report) }
    installer = InstallQueue(group: options.groupCommit) { [self] done in post(.installed(done)) }
    loop.same = SameContent(
      toRun.map { (index: $0, sha256: jobs[$0].task.entry.sha256, action: jobs[$0].task.action) })
    for i in toRun where !loop.same.followers.contains(i) { enqueue(i) }
    let deadline = options.deadline.map { startTime + $0 }
    let expected = plan.expectedBytes

    while true {
      if loop.stopping == nil { startMore() }
      if loop.isIdle { break }
      for e in nextEvents(deadline: deadline) { handle(e) }
      let t = monotonicSeconds()
      if loop.stopping == nil, let d = deadline, t >= d {
        stopTransfers("deadline", saying: "deadline reached")
      }
      releaseRetries(now: t)
      options.tick?(
        RunProgress(
          done: loop.finished, total: toRun.count, bytes: transports.values.reduce(0) { $0 + $1.bytesReceived },
          expectedBytes: expected, active: loop.active, elapsed: t - startTime))
    }
    for t in transports.values { t.shutdown() }
    installer?.shutdown()
    // Tasks never started because the run stopped stay due for the next run.
    if let why = loop.stopping {
      report.stopped = why
      for i in toRun where jobs[i].report.attempts == 0 && jobs[i].report.outcome == .skipped {
        jobs[i].report.outcome = .interrupted
        jobs[i].report.error = "not started: the run stopped (\(why))"
      }
    }
    return finish(report)
  }

  // MARK: - The run loop's steps

  func enqueue(_ i: Int, front: Bool = false) { loop.queues.add(i, host: jobs[i].host, front: front) }

  /// Waits for events until the next retry, the deadline or a progress tick.
  func nextEvents(deadline: Double?) -> [Event] {
    let now = monotonicSeconds()
    var wake = loop.waitingRetry.map(\.at).min()
    if let d = deadline, loop.stopping == nil { wake = min(wake ?? d, d) }
    if options.tick != nil { wake = min(wake ?? now + 0.2, now + 0.2) }
    return lock.locked {
      if events.isEmpty { lock.wait(until: wake) }
      let b = events
      events.removeAll()
      return b
    }
  }

  func handle(_ e: Event) {
    switch e {
    case .transfer(let i, let r):
      handleTransfer(i, r)
    case .installed(let done):
      loop.installing -= done.count
      for d in done {
        installed(d)
        settle(d.index)
      }
      // The journal is made durable in groups too (at most twice a second,
      // and at the end): after a power loss a file installed but not yet
      // journaled is revalidated, never trusted blindly.
      if monotonicSeconds() - loop.lastJournalSync > 0.5 {
        journal.sync()
        loop.lastJournalSync = monotonicSeconds()
      }
    case .stop(let why):
      if loop.stopping == nil { stopTransfers(why, saying: why) }
    }
  }

  func stopTransfers(_ why: String, saying said: String) {
    loop.stopping = why
    options.log("syncfiles: \(said): stopping transfers, keeping what was received for a resume")
    for t in transports.values { t.stopAll() }
  }

  /// Retries whose wait is over go back to the front of their host's queue;
  /// when the run is stopping, they are interrupted instead.
  func releaseRetries(now t: Double) {
    if let why = loop.stopping {
      for (_, i) in loop.waitingRetry { interrupted(i, why: "stopped (\(why)) while waiting to retry") }
      loop.waitingRetry.removeAll()
    } else {
      let due = loop.waitingRetry.filter { $0.at <= t }
      loop.waitingRetry.removeAll { $0.at <= t }
      for (_, i) in due { enqueue(i, front: true) }
    }
  }

  /// A task has ended: the tasks waiting for its bytes get them, or fetch.
  func settle(_ i: Int) {
    // The progress line counts files done; a task the run stopped is not.
    if jobs[i].report.outcome != .interrupted { loop.finished += 1 }
    for f in loop.same.release(after: i) where loop.stopping == nil {
      if jobs[i].report.outcome == .installed, let item = copyItem(f, from: i) {
        loop.installing += 1
        installer?.add(item)
      } else {
        enqueue(f)
      }
    }
  }

  func begin(_ i: Int) {
    guard let transport = transport(for: i), let spec = prepare(i) else {
      settle(i)
      return
    }
    loop.active += 1
    loop.activeByHost[jobs[i].host, default: 0] += 1
    jobs[i].report.attempts += 1
    transport.start(spec) { [self] r in post(.transfer(i, r)) }
  }

  /// Starts transfers, host by host in turn, up to `parallel` and `per_host`.
  func startMore() {
    var progressed = true
    while progressed && loop.active < options.parallel && loop.installing < 256 {
      progressed = false
      for h in loop.queues.hosts where loop.active < options.parallel {
        guard loop.activeByHost[h, default: 0] < options.perHost, let i = loop.queues.next(of: h) else { continue }
        begin(i)
        progressed = true
      }
    }
  }

  func handleTransfer(_ i: Int, _ r: TransferResult) {
    loop.active -= 1
    loop.activeByHost[jobs[i].host, default: 1] -= 1
    switch afterTransfer(i, r, stopping: loop.stopping != nil) {
    case .done:
      settle(i)
    case .install(let item):
      loop.installing += 1
      installer?.add(item)
    case .again:
      enqueue(i, front: true)
    case .wait(let seconds):
      if let deadline = options.deadline.map({ startTime + $0 }), monotonicSeconds() + seconds > deadline {
        interrupted(i, why: "deadline reached while waiting to retry")
        settle(i)
      } else {
        loop.waitingRetry.append((monotonicSeconds() + seconds, i))
      }
    }
  }

  /// One job per planned task, each knowing its manifest and its URLs (mirrors after the url).
  func makeJobs() -> [Job] {
    var manifestOf: [String: Int] = [:]
    for (i, m) in manifests.enumerated() { for f in m.files { manifestOf[f.qualifiedID] = i } }
    return plan.tasks.map { t in
      let outcome: TaskOutcome = t.action == .wait ? .waiting : .skipped
      return Job(
        task: t, manifest: manifestOf[t.id] ?? 0, urls: [t.entry.url] + t.entry.mirrors,
        report: TaskReport(
          id: t.id, url: t.entry.url.display, destination: t.entry.destinationPath, action: t.action,
          outcome: outcome, reason: t.reason))
    }
  }

  /// The end of every run: the journal made durable, the hooks it owes run
  /// (and their outcome made durable too), the report completed.
  func finish(_ started: RunReport) -> RunReport {
    var report = started
    journal.sync()
    report.hookErrors = runHooks()
    journal.sync()
    journal.compactIfNeeded()
    report.journalError = journal.firstError?.message
    report.tasks = jobs.map(\.report)
    report.elapsed = monotonicSeconds() - startTime
    return report
  }

  // MARK: - Steps of one task

  /// One transport per source plugin per run (the run thread only).
  private var transports: [ObjectIdentifier: any Transport] = [:]

  /// The transport of the plugin serving the task's current URL, opened on first use.
  func transport(for i: Int) -> (any Transport)? {
    let url = jobs[i].urls[jobs[i].urlIndex]
    guard let source = plugins.source(scheme: url.scheme) else {
      fail(
        i,
        "no plugin serves '\(url.scheme):' URLs: looked for an executable '\(PluginLocator.sourceExecutable(scheme: url.scheme))' in SYNCFILES_PLUGIN_PATH and PATH",
        retryable: false)
      return nil
    }
    let key = ObjectIdentifier(source)
    if let t = transports[key] { return t }
    var transportOptions = TransportOptions(perHost: options.perHost, rate: options.rate)
    transportOptions.environment = options.environment
    transportOptions.verbose = options.verbose
    transportOptions.segments = options.segments
    guard let t = source.makeTransport(transportOptions) else {
      fail(i, "the \(url.scheme): source could not start", retryable: false)
      return nil
    }
    transports[key] = t
    return t
  }

  /// Opens what a transfer needs: the partial being resumed (re-hashed once),
  /// the request to send. Nil when the task failed before any request.
  func prepare(_ i: Int) -> TransferSpec? {
    let t = jobs[i].task
    let e = t.entry
    let url = jobs[i].urls[jobs[i].urlIndex]
    // The report names the URL of the last try (the mirror that served), and
    // only that try's status: an earlier 503 never stands beside a later connection error.
    jobs[i].report.url = url.display
    jobs[i].report.httpStatus = nil
    if let f = FactGatherer.fact(at: e.destinationPath), !f.isRegular && !f.isSymlink {
      fail(i, "\(e.destinationPath) exists and is not a regular file; refusing to replace it", retryable: false)
      return nil
    }
    let root = manifests[jobs[i].manifest].root
    // A resume planned from a partial held since an earlier run: open and re-hash it once.
    if jobs[i].partial == nil && t.action == .resume && jobs[i].report.attempts == 0,
      let held = journal.state(t.id).partial
    {
      do { try reopen(i, held, root: root) } catch {
        fail(i, error.message, retryable: false)
        return nil
      }
    }
    var spec = TransferSpec(
      id: t.id, url: url.text.revealed, headers: e.headers.map { "\($0.name): \($0.value.revealed)" },
      scheme: url.scheme, root: root, relative: e.destination, partial: jobs[i].partial,
      hasher: jobs[i].hasher, connectTimeout: e.timeout.connect, stall: e.timeout.stall,
      onBody: journalPartial(t))
    spec.maxBytes = e.maxBytes
    spec.network = e.network
    spec.secrets = manifests[jobs[i].manifest].secrets
    spec.request = request(i)
    spec.segments = e.segments
    spec.held = jobs[i].held
    spec.mirrors = jobs[i].urls.indices.filter {
      $0 != jobs[i].urlIndex && ["http", "https"].contains(jobs[i].urls[$0].scheme)
    }.map { (jobs[i].urls[$0].text.revealed, jobs[i].urls[$0].display) }
    spec.onRanges = journalRanges(t)
    return spec
  }

  /// Opens the partial held since an earlier run and hashes what it holds
  /// from byte 0: one stream is continued from its end; a segmented one
  /// (SPEC §8.3) asks for its missing ranges, or, when this run fetches it
  /// as one stream, is cut back to its held prefix.
  func reopen(_ i: Int, _ held: TaskState.Partial, root: String) throws(InstallError) {
    let partial = try PartialFile(root: root, relative: jobs[i].task.entry.destination, resume: true)
    var keep = partial.size > 0
    var hashed = partial.size
    if let ranges = held.ranges {
      let total = held.totalBytes ?? -1
      keep = keep && partial.size == total && (ranges.ranges.last?.upperBound ?? 0) <= total && ranges.count > 0
      hashed = ranges.prefix
      if keep && (jobs[i].task.entry.segments == 1 || options.segments == 1) {
        // This run fetches it as one stream: it continues the held prefix.
        try partial.truncate(to: hashed)
        keep = hashed > 0
      } else if keep {
        jobs[i].held = HeldRanges(ranges: ranges, total: total, validators: held.validators, hashed: hashed)
      }
    }
    if keep && partial.hash(0..<hashed, into: jobs[i].hasher) {
      jobs[i].partial = partial
      jobs[i].partialValidators = held.validators
    } else {
      partial.discard()
      jobs[i].hasher.reset()
      jobs[i].held = nil
    }
  }

  /// The journal hears which bytes a segmented partial holds as they grow.
  func journalRanges(_ t: PlannedTask) -> @Sendable (ByteRanges?, Int64) -> Void {
    let id = t.id
    return { [journal] ranges, total in
      journal.update(id) { s in
        s.partial?.ranges = ranges
        s.partial?.totalBytes = total
        if let ranges { s.partial?.offset = ranges.count }
      }
    }
  }

  /// The request of the next try: the plan's, unless this run holds partial
  /// data (continued only under a version `If-Range` can name).
  func request(_ i: Int) -> RequestPolicy {
    guard let p = jobs[i].partial, p.size > 0, let held = jobs[i].partialValidators else {
      if case .resume = jobs[i].task.request.condition { return .whole }
      return jobs[i].task.request
    }
    return RequestPolicy.resume(size: p.size, held: held) ?? .whole
  }

  /// Before the partial holds a byte of a version, the journal knows that version.
  func journalPartial(_ t: PlannedTask) -> @Sendable (ResponseHead) -> Void {
    let fp = Planner.fingerprint(t.entry)
    let id = t.id
    let partialPath = PartialFile.path(for: t.entry.destinationPath)
    return { [journal] head in
      journal.update(id) { s in
        if s.fingerprint == nil { s.fingerprint = fp }
        s.partial = TaskState.Partial(
          path: partialPath, offset: head.offset, totalBytes: head.totalBytes, etag: head.validators.etag,
          lastModified: head.validators.lastModified, dateIsStrong: head.validators.dateIsStrong)
      }
    }
  }

  enum Next {
    case done
    case install(InstallQueue.Item)
    case again
    case wait(Double)
  }

  func afterTransfer(_ i: Int, _ r: TransferResult, stopping: Bool) -> Next {
    var r = r
    let m = manifests[jobs[i].manifest]
    if case .failed(let why, let retryable) = r.outcome { r.outcome = .failed(m.redacting(why), retryable: retryable) }
    if case .restart(let why) = r.outcome { r.outcome = .restart(m.redacting(why)) }
    jobs[i].partial = r.partial
    jobs[i].report.bytesTransferred += r.received
    if r.received > 0 && r.resumedFrom > 0 { jobs[i].report.resumedFrom = r.resumedFrom }
    if r.status != 0 { jobs[i].report.httpStatus = r.status }
    if let h = r.head { jobs[i].partialValidators = h.validators }
    jobs[i].held = nil
    if let rs = r.ranges, let h = r.head, let total = h.totalBytes {
      jobs[i].held = HeldRanges(ranges: rs, total: total, validators: h.validators, hashed: r.hashed)
    }
    if r.segments > 1 { jobs[i].report.segments = r.segments }
    for note in r.notes where !jobs[i].report.warnings.contains(note) { jobs[i].report.warnings.append(note) }
    let e = jobs[i].task.entry
    switch r.outcome {
    case .complete:
      return verify(i, head: r.head, validators: r.validators)
    case .notModified:
      unchanged(i, validators: r.validators)
      return .done
    case .rangeNotSatisfiable(let total):
      // The partial may already hold the whole file; check it rather than trust an error body.
      let known = total ?? journal.state(jobs[i].task.id).partial?.totalBytes
      if let p = jobs[i].partial, let known, p.size == known {
        return verify(i, head: nil, validators: jobs[i].partialValidators)
      }
      return startOver(i, "the server cannot continue the partial (416); starting over")
    case .restart(let why):
      return startOver(i, why)
    case .stopped:
      interrupted(i, why: "stopped before the transfer finished")
      return .done
    case .http(let status, let retryAfter):
      let transient = TransferOutcome.isTransient(status: status)
      return failedTry(
        i, "HTTP \(status) from \(jobs[i].urls[jobs[i].urlIndex].display)", transient: transient,
        retryAfter: retryAfter.map(Double.init), stopping: stopping)
    case .failed(let why, let retryable):
      if !retryable, e.maxBytes != nil, why.contains("max_bytes") {
        discardPartial(i)
      }
      return failedTry(i, why, transient: retryable, retryAfter: nil, stopping: stopping)
    }
  }

  /// `why` ends in "; starting over": said once per reason in the task's
  /// warnings, and once more, as the cause, when the task gives up.
  func startOver(_ i: Int, _ why: String) -> Next {
    discardPartial(i)
    jobs[i].restarts += 1
    options.log("syncfiles: \(jobs[i].task.id): \(why)")
    if jobs[i].restarts > 3 {
      let cause = why.hasSuffix("; starting over") ? String(why.dropLast("; starting over".count)) : why
      jobs[i].report.warnings.removeAll { $0 == why }
      fail(i, "\(cause); gave up after starting over 3 times", retryable: true)
      return .done
    }
    if !jobs[i].report.warnings.contains(why) { jobs[i].report.warnings.append(why) }
    return .again
  }

  func discardPartial(_ i: Int) {
    jobs[i].partial?.discard()
    jobs[i].partial = nil
    jobs[i].partialValidators = nil
    jobs[i].held = nil
    jobs[i].hasher.reset()
    journal.update(jobs[i].task.id) { $0.partial = nil }
  }

  /// One try failed: next mirror, a retry after a backoff, or the task fails.
  func failedTry(_ i: Int, _ why: String, transient: Bool, retryAfter: Double?, stopping: Bool) -> Next {
    if stopping {
      interrupted(i, why: why)
      return .done
    }
    if !transient { jobs[i].permanent.insert(jobs[i].urlIndex) }
    let n = jobs[i].urls.count
    let usable = (0..<n).filter { !jobs[i].permanent.contains($0) }
    if usable.isEmpty {
      fail(i, why, retryable: false)
      return .done
    }
    // The next mirror in this pass, at once.
    if let next = usable.first(where: { $0 > jobs[i].urlIndex }) {
      options.log("syncfiles: \(jobs[i].task.id): \(why); trying mirror \(jobs[i].urls[next].display)")
      jobs[i].urlIndex = next
      return .again
    }
    let policy = jobs[i].task.entry.retry
    guard jobs[i].pass < policy.attempts else {
      fail(i, "\(why) (after \(policy.attempts) attempt\(policy.attempts == 1 ? "" : "s"))", retryable: true)
      return .done
    }
    let k = jobs[i].pass
    jobs[i].pass += 1
    jobs[i].urlIndex = usable[0]
    let base = Double(policy.backoff.seconds) * Double(1 << min(k - 1, 30))
    // Jitter: between half and all of the backoff, so many clients do not retry in step.
    var delay = base * (0.5 + Double.random(in: 0..<0.5))
    if let ra = retryAfter { delay = max(delay, ra) }
    delay = min(delay, Double(policy.maxBackoff.seconds))
    options.log(
      "syncfiles: \(jobs[i].task.id): \(why); retry \(k) of \(policy.attempts - 1) in \(Int(delay.rounded(.up)))s")
    return .wait(delay)
  }

  /// A complete partial: every verifier that applies (size, sha256, the
  /// entry's `verify:` plugins), then to the installer.
  func verify(_ i: Int, head: ResponseHead?, validators: Validators?) -> Next {
    guard let p = jobs[i].partial else {
      fail(i, "the transfer completed without a partial file", retryable: true)
      return .done
    }
    let e = jobs[i].task.entry
    if head?.lengthUnknown == true, let refusal = closeDelimited(i, size: p.size, validators: validators) {
      discardPartial(i)
      fail(i, refusal, retryable: true)
      return .done
    }
    let digest = jobs[i].hasher.finish()
    jobs[i].report.sha256 = digest
    var input = VerifyInput(
      entry: e, path: PartialFile.path(for: e.destinationPath), size: p.size, sha256: digest,
      announcedSize: head?.totalBytes, with: .object([]), timeout: options.verifyTimeout)
    for (verifier, with) in plugins.verifiers(for: e) {
      input.with = with
      switch verifier.verify(input) {
      case .accept(let warnings):
        jobs[i].report.warnings += warnings
      case .refetch(let why):
        return startOver(i, why)
      case .reject(let why):
        discardPartial(i)
        fail(i, "\(why); the old file is kept", retryable: false)
        return .done
      }
    }
    jobs[i].pendingValidators = validators ?? head?.validators
    if sameAsInstalled(i, digest: digest, size: p.size) {
      // The same bytes again (a weak date's unconditional check, or a lost journal): nothing changes.
      discardPartial(i)
      unchanged(i, validators: jobs[i].pendingValidators, digest: digest)
      return .done
    }
    jobs[i].partial = nil
    return .install(InstallQueue.Item(index: i, partial: p, mode: e.mode))
  }

  /// A body whose end only the closing connection marked (SPEC §8.2): a
  /// warning, or the reason to refuse it when an earlier response for the
  /// same version (same strong ETag, or same strong date) gave another size.
  func closeDelimited(_ i: Int, size: Int64, validators now: Validators?) -> String? {
    let state = journal.state(jobs[i].task.id)
    var known: Int64? = nil
    if let inst = state.installed, let now, inst.validators.isSameVersion(as: now) { known = inst.size }
    if let p = state.partial, let total = p.totalBytes, let now, p.validators.isSameVersion(as: now) { known = total }
    if let known, known != size {
      return
        "the server marked the end of the body only by closing the connection after \(ByteSize.format(size)), but this version is \(ByteSize.format(known)); refused as cut short, nothing installed"
    }
    jobs[i].report.warnings.append(
      "the server marked the end of the body only by closing the connection: its length (\(ByteSize.format(size))) could not be checked"
    )
    return nil
  }

  /// Sets an installed file's mode without a transfer (the plan found it differs).
  func correctMode(_ i: Int) {
    guard let mode = jobs[i].task.correctMode else { return }
    let root = manifests[jobs[i].manifest].root
    do {
      try PartialFile.correctMode(root: root, relative: jobs[i].task.entry.destination, mode: mode)
    } catch {
      jobs[i].report.warnings.append(error.message)
    }
  }

  /// The install of a task's bytes copied from `leader`'s installed file
  /// (the same declared sha256, verified when the leader was installed);
  /// nil, with a warning, when the copy cannot be made: the task then fetches.
  func copyItem(_ f: Int, from leader: Int) -> InstallQueue.Item? {
    let e = jobs[f].task.entry
    do throws(InstallError) {
      let p = try PartialFile(root: manifests[jobs[f].manifest].root, relative: e.destination, resume: false)
      do throws(InstallError) {
        let how = try p.fill(from: jobs[leader].task.entry.destinationPath)
        jobs[f].report.copiedFrom = jobs[leader].task.id
        jobs[f].report.copyMethod = how.rawValue
      } catch {
        p.discard()
        throw error
      }
      jobs[f].report.sha256 = jobs[leader].report.sha256
      // The leader's validators name a version at its URL only.
      if e.url == jobs[leader].task.entry.url { jobs[f].pendingValidators = jobs[leader].pendingValidators }
      return InstallQueue.Item(index: f, partial: p, mode: e.mode)
    } catch {
      jobs[f].report.warnings.append(
        "could not copy \(jobs[leader].task.id)'s bytes (\(error.message)); fetched instead")
      return nil
    }
  }

  /// SPEC §8.3: the destination already holds the declared sha256 (hashed by
  /// the plan): record it as installed, unless it changed since.
  func adopt(_ i: Int) {
    let e = jobs[i].task.entry
    guard let planned = jobs[i].task.adopt, let now = FactGatherer.fact(at: e.destinationPath),
      now.size == planned.size, now.mtimeNs == planned.mtimeNs, now.isRegular
    else {
      jobs[i].report.warnings.append(
        "the destination changed after it was hashed; not recorded, the next apply checks again")
      return
    }
    unchanged(i, validators: nil, digest: e.sha256, replacingRecord: true)
    jobs[i].report.sha256 = e.sha256
    options.log(
      "syncfiles: \(e.qualifiedID) already holds its sha256 (\(ByteSize.format(now.size))): recorded, no transfer")
  }

  /// The destination already holds exactly these bytes: the journal's record
  /// of it still matches the file and its digest is this one; or, with no
  /// record (a lost journal, a file put there by hand), the file's own bytes
  /// hash to it (read only when the sizes agree).
  func sameAsInstalled(_ i: Int, digest: String, size: Int64) -> Bool {
    let e = jobs[i].task.entry
    let recorded = journal.state(e.qualifiedID).installed.flatMap { $0.sha256 == nil ? nil : $0 }
    guard let f = FactGatherer.fact(at: e.destinationPath), f.isRegular, f.size == size else { return false }
    // The journal's digest speaks for the file only while the file is as the
    // journal left it; a file changed since (a record lost to a full disk, a
    // hand copy) is hashed.
    if let inst = recorded, inst.size == f.size, inst.mtimeNs == f.mtimeNs { return inst.sha256 == digest }
    return SHA256Hasher.digest(ofFileAt: e.destinationPath, size: size) == digest
  }

  func installed(_ d: InstallQueue.Done) {
    let i = d.index
    let e = jobs[i].task.entry
    if let err = d.error, d.fact == nil {
      fail(i, err.message, retryable: false)
      journal.update(e.qualifiedID) { $0.partial = nil }
      return
    }
    let now = Timestamp.current()
    let previous = journal.state(e.qualifiedID).installed?.sha256
    let digest = jobs[i].report.sha256
    let v = jobs[i].pendingValidators
    let changed = previous == nil || previous != digest
    let manifest = manifests[jobs[i].manifest]
    journal.update(e.qualifiedID) { s in
      // The hooks are owed from the moment the new bytes are in place, in the same record.
      if changed {
        s.changeHookPending = s.changeHookPending || e.onChange != nil
        s.completeHookPending = s.completeHookPending || manifest.onComplete != nil
      }
      s.fingerprint = Planner.fingerprint(e)
      s.lastCheck = now
      s.lastSuccess = now
      s.lastOutcome = .installed
      s.lastError = nil
      s.lastBytes = jobs[i].report.bytesTransferred
      s.httpStatus = jobs[i].report.httpStatus
      s.partial = nil
      s.failures = 0
      s.backoffUntil = nil
      if let f = d.fact {
        s.installed = TaskState.Installed(
          size: f.size, mtimeNs: f.mtimeNs, etag: v?.etag, lastModified: v?.lastModified, sha256: digest,
          dateIsStrong: v?.dateIsStrong ?? false)
      }
    }
    jobs[i].report.outcome = .installed
    jobs[i].report.changed = changed
    if let err = d.error { jobs[i].report.warnings.append(err.message) }
    var line = "syncfiles: installed \(e.qualifiedID) (\(ByteSize.format(jobs[i].report.bytesTransferred))"
    if let from = jobs[i].report.copiedFrom {
      line += ", the same sha256 as \(from): \(jobs[i].report.copyMethod ?? "copy")"
    }
    if jobs[i].report.resumedFrom > 0 { line += ", resumed at \(ByteSize.format(jobs[i].report.resumedFrom))" }
    options.log(line + ")")
  }

  /// `digest`: the SHA-256 of the destination's bytes, when this run read them.
  /// `replacingRecord`: the journal's record of the destination is stale; describe the file as it is.
  func unchanged(_ i: Int, validators v: Validators?, digest: String? = nil, replacingRecord: Bool = false) {
    let e = jobs[i].task.entry
    let now = Timestamp.current()
    let fact = FactGatherer.fact(at: e.destinationPath)
    journal.update(e.qualifiedID) { s in
      let fp = Planner.fingerprint(e)
      if s.fingerprint != fp || replacingRecord { s.installed = nil }
      s.fingerprint = fp
      s.lastCheck = now
      s.lastSuccess = now
      s.lastOutcome = .unchanged
      s.lastError = nil
      s.lastBytes = 0
      s.httpStatus = jobs[i].report.httpStatus
      s.failures = 0
      s.backoffUntil = nil
      s.partial = nil
      if var inst = s.installed {
        if let e = v?.etag { inst.etag = e }
        if inst.sha256 == nil { inst.sha256 = digest }
        if let v, v.lastModified != nil {
          inst.lastModified = v.lastModified
          inst.dateIsStrong = v.dateIsStrong
        }
        s.installed = inst
      } else if let f = fact {
        s.installed = TaskState.Installed(
          size: f.size, mtimeNs: f.mtimeNs, etag: v?.etag, lastModified: v?.lastModified, sha256: digest,
          dateIsStrong: v?.dateIsStrong ?? false)
      }
    }
    jobs[i].report.outcome = .unchanged
    removeLeftoverPartial(i)
  }

  /// The destination is up to date: partial data beside it (of another
  /// version, or one a kill left unjournaled) will never be resumed.
  func removeLeftoverPartial(_ i: Int) {
    jobs[i].partial?.discard()
    jobs[i].partial = nil
    guard jobs[i].task.leftoverPartial else { return }
    do throws(InstallError) {
      try PartialFile.removeLeftover(root: manifests[jobs[i].manifest].root, relative: jobs[i].task.entry.destination)
    } catch {
      jobs[i].report.warnings.append(error.message)
    }
  }

  func fail(_ i: Int, _ reason: String, retryable: Bool) {
    let e = jobs[i].task.entry
    // A plugin's or server's words may echo a URL or header made from a secret.
    let why = manifests[jobs[i].manifest].redacting(reason)
    let now = Timestamp.current()
    let keep = jobs[i].partial != nil && jobs[i].resumable && retryable
    if !keep { jobs[i].partial?.discard() }
    let size = jobs[i].partial?.size
    journal.update(e.qualifiedID) { s in
      s.lastCheck = now
      s.lastOutcome = .failed
      s.lastError = why
      s.lastBytes = jobs[i].report.bytesTransferred
      s.httpStatus = jobs[i].report.httpStatus
      s.failures += 1
      let hold = Double(e.retry.backoff.seconds) * Double(1 << min(s.failures - 1, 30))
      s.backoffUntil = now + TimeSpan(seconds: Int64(min(hold, Double(e.retry.maxBackoff.seconds))))
      if !keep { s.partial = nil } else if let size { s.partial?.offset = size }
    }
    jobs[i].partial = nil
    jobs[i].report.outcome = .failed
    jobs[i].report.error = why
    options.log("syncfiles: failed \(e.qualifiedID): \(why)")
  }

  func interrupted(_ i: Int, why: String) {
    let e = jobs[i].task.entry
    let size = jobs[i].partial?.size
    let resumable = jobs[i].resumable && (size ?? 0) > 0
    if !resumable { jobs[i].partial?.discard() }
    journal.update(e.qualifiedID) { s in
      s.lastOutcome = .interrupted
      s.lastError = why
      if resumable, let size { s.partial?.offset = size } else { s.partial = nil }
    }
    jobs[i].partial = nil
    jobs[i].report.outcome = .interrupted
    jobs[i].report.error = why
  }

  // MARK: - Hooks

  /// The hooks the journal says are owed (SPEC §8.2): `on_change` for each
  /// file whose change has not yet been hooked successfully, then
  /// `on_complete` once per manifest with such a file. A hook that fails
  /// stays owed and runs again on the next apply, even if nothing changes
  /// then; one that succeeds is cleared and never runs again for that change.
  /// Failures are reported, never fatal to others.
  func runHooks() -> [String] {
    var errors: [String] = []
    func run(_ event: HookEvent) -> String? {
      var first: String? = nil
      for hook in plugins.hooks {
        guard let r = hook.run(event, timeout: options.hookTimeout), let err = r.error else { continue }
        options.log("syncfiles: \(err)")
        errors.append(err)
        first = first ?? err
      }
      return first
    }
    var owedByManifest: [Int: [Int]] = [:]
    for i in jobs.indices where jobs[i].task.selected {
      let id = jobs[i].task.id
      let state = journal.state(id)
      if state.completeHookPending { owedByManifest[jobs[i].manifest, default: []].append(i) }
      guard state.changeHookPending else { continue }
      let err = run(.fileChanged(jobs[i].task.entry, manifest: manifests[jobs[i].manifest]))
      jobs[i].report.hookError = err
      if err == nil { journal.update(id) { $0.changeHookPending = false } }
    }
    for (m, owed) in owedByManifest.sorted(by: { $0.key < $1.key }) {
      guard run(.manifestChanged(manifests[m], changed: owed.map { jobs[$0].task.id })) == nil else { continue }
      for i in owed { journal.update(jobs[i].task.id) { $0.completeHookPending = false } }
    }
    return errors
  }
}
