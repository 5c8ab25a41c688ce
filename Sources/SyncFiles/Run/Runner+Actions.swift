import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// How the runner carries out a task's actions: tries through the source's
/// transport, verification, hand-off to the installer. The decisions are the
/// task's `TaskLifecycle`'s; this file only does what it says.
extension Runner {
  /// Hands `event` to the task's life cycle and carries out what it asks for.
  func feed(_ t: RunningTask, _ event: TaskLifecycle.Event) {
    for action in t.life.handle(event) { perform(action, for: t) }
  }

  func perform(_ action: TaskLifecycle.Action, for t: RunningTask) {
    switch action {
    case .startTry: begin(t)
    case .verify:
      if awaitTrust(t) { return }
      feed(t, .verified(verify(t)))
    case .install: install(t)
    case .requeue: enqueue(t, front: true)
    case .waitToRetry(let seconds): waitToRetry(t, seconds)
    case .discardPartial: discardPartial(t)
    case .recordUnchanged:
      t.partial?.discard()
      t.partial = nil
      unchanged(t.planned, &t.report, validators: t.pendingValidators, digest: t.verifiedDigest)
    case .recordInstalled: recordInstalled(t)
    case .fail(let why): fail(t, why)
    case .interrupt(let why): interrupted(t, why: why)
    case .notStarted(let why): t.report.error = why
    case .warn(let w): if !t.report.warnings.contains(w) { t.report.warnings.append(w) }
    case .withdrawWarning(let w): t.report.warnings.removeAll { $0 == w }
    case .log(let line): options.log?("syncfiles: \(t.id): \(line)")
    case .end(let outcome):
      t.report.outcome = outcome
      settle(t)
      retire(t)
    }
  }

  /// Starts the try the life cycle asked for.
  func begin(_ t: RunningTask) {
    let transport: any Transport
    let spec: TransferSpec
    do throws(RunError) {
      transport = try self.transport(for: t)
      spec = try prepare(t)
    } catch {
      return feed(t, .couldNotStart(error.message))
    }
    if t.report.attempts == 0, TrustCheck.applies(to: t.entry) {
      // The lists and signatures arrive while the file does.
      let check = trust(for: t)
      for f in check.fetches { check.store.want(f) }
    }
    loop.active += 1
    loop.running.append(t)
    t.hostSlot = loop.queues.slot(of: t.host)
    loop.queues.count(t.hostSlot, by: 1)
    t.report.attempts += 1
    clock.end(.start)
    transport.start(spec) { [self, number = t.number] r in post(.transfer(number, r)) }
  }

  func waitToRetry(_ t: RunningTask, _ seconds: Double) {
    if let deadline = options.deadline.map({ startTime + $0 }), monotonicSeconds() + seconds > deadline {
      feed(t, .retryPastDeadline)
    } else {
      loop.waitingRetry.append((monotonicSeconds() + seconds, t))
    }
  }

  /// The verified partial goes to the installer.
  func install(_ t: RunningTask) {
    guard let p = t.partial else { return }
    t.partial = nil
    loop.installing += 1
    installer?.add(
      InstallQueue.Item(index: t.number, partial: p, mode: t.entry.mode, keepVersions: t.entry.keepVersions))
  }

  /// The installer is done with a task's bytes.
  func installDone(_ d: InstallQueue.Done) {
    guard let t = tasks.live(d.index) else { return }
    if let err = d.error, d.fact == nil { return feed(t, .installed(failure: err.message)) }
    t.install = d
    feed(t, .installed(failure: nil))
  }

  /// The transport of the plugin serving the task's current URL, opened on first use.
  func transport(for t: RunningTask) throws(RunError) -> any Transport { try transport(scheme: t.scheme) }

  /// The transport of scheme `scheme`'s plugin, opened on first use.
  func transport(scheme: String) throws(RunError) -> any Transport {
    if let last = lastTransport, last.scheme == scheme { return last.transport }
    let made = try open(scheme: scheme)
    lastTransport = (scheme, made)
    return made
  }

  private func open(scheme: String) throws(RunError) -> any Transport {
    guard let source = plugins.source(scheme: scheme) else {
      throw .noSourcePlugin(scheme: scheme, executable: PluginLocator.sourceExecutable(scheme: scheme))
    }
    let key = ObjectIdentifier(source)
    if let t = transports[key] { return t }
    var transportOptions = TransportOptions(perHost: options.perHost, rate: options.rate)
    transportOptions.environment = options.environment
    transportOptions.verbose = options.verbose
    transportOptions.segments = options.segments
    transportOptions.parallel = options.parallel
    guard let t = source.makeTransport(transportOptions) else { throw .sourceCouldNotStart(scheme: scheme) }
    transports[key] = t
    return t
  }

  /// Whether task `t`'s complete file waits for a list or signature still
  /// on its way: the run loop goes on, and verifies it when that arrives.
  func awaitTrust(_ t: RunningTask) -> Bool {
    guard TrustCheck.applies(to: t.entry) else { return false }
    let check = trust(for: t)
    guard let pending = check.store.pending(check.fetches) else { return false }
    loop.awaitingTrust += 1
    check.store.whenFetched(pending) { [self, number = t.number] in post(.trustFetched(number)) }
    return true
  }

  /// The trust checks of task `t`'s entry, on the run's store.
  func trust(for t: RunningTask) -> TrustCheck {
    let store =
      trustStore
      ?? TrustStore(folder: journal.path + ".trust", environment: options.environment, verbose: options.verbose)
    trustStore = store
    return TrustCheck(store: store, entry: t.entry, secrets: manifests[t.manifest].secrets)
  }

  /// Opens what a try needs: the partial being resumed (re-hashed once),
  /// the request to send.
  func prepare(_ t: RunningTask) throws(RunError) -> TransferSpec {
    let planned = t.planned
    let e = planned.entry
    let source = t.source
    // The report names the URL of the last try (the mirror that served), and
    // only that try's status: an earlier 503 never stands beside a later connection error.
    let text = source.text  // joined once for the report and the request
    t.report.url = source.display(of: text)
    t.report.httpStatus = nil
    if planned.destinationNotAFile { throw .destinationNotAFile(path: e.destinationPath) }
    let root = manifests[t.manifest].root
    // A resume planned from a partial held since an earlier run: open and re-hash it once.
    if t.partial == nil && planned.action == .resume && t.report.attempts == 0, let held = planned.heldPartial {
      do throws(InstallError) { try reopen(t, held, root: root) } catch { throw .install(error) }
    }
    if t.partial == nil {
      // This try starts a new partial over whatever an earlier run left: the journal stops claiming that first.
      journal.retractPartial(t.id)
    }
    var mirrors: [(url: String, name: String)] = []
    if !e.mirrors.isEmpty {  // most entries have none: no array of their URLs made per try
      let urls = [e.url] + e.mirrors
      mirrors = urls.indices.filter {
        $0 != t.life.source && ["http", "https"].contains(urls[$0].scheme)
      }.map { (urls[$0].text.revealed, urls[$0].display) }
    }
    return TransferSpec(
      id: t.id, url: text.revealed, headers: e.headers.map { "\($0.name): \($0.value.revealed)" },
      scheme: source.scheme, host: source.host, root: root, relative: e.destination,
      partial: t.partial, hasher: t.hasher, request: request(t), network: e.network,
      secrets: manifests[t.manifest].secrets, maxBytes: e.maxBytes, rate: e.rate,
      connectTimeout: e.timeout.connect,
      stall: e.timeout.stall, onBody: journalPartial(planned),
      segments: SegmentPolicy.asked(
        segments: e.segments, expectedBytes: e.expectedBytes, throughProxy: planned.throughProxy), mirrors: mirrors,
      held: t.held, onRanges: journalRanges(planned),
      mayHoldBody: !plugins.anyVerifierReadsFile(for: e) && !TrustCheck.applies(to: e),
      onDrop: { [journal, id = t.id] in journal.retractPartial(id) })
  }

  /// Opens the partial held since an earlier run and hashes what it holds
  /// from byte 0: one stream is continued from its end; a segmented one
  /// (SPEC §8.3) asks for its missing ranges, or, when this run fetches it
  /// as one stream, is cut back to its held prefix.
  func reopen(_ t: RunningTask, _ held: TaskState.Partial, root: String) throws(InstallError) {
    let partial = try PartialFile(root: root, relative: t.entry.destination, resume: true)
    var keep = partial.size > 0
    var hashed = partial.size
    if let ranges = held.ranges {
      let total = held.totalBytes ?? -1
      keep = keep && SegmentPolicy.rangesUsable(ranges, total: held.totalBytes, fileSize: partial.size)
      hashed = ranges.prefix
      if keep && (t.entry.segments == 1 || options.segments == 1) {
        // This run fetches it as one stream: it continues the held prefix.
        try partial.truncate(to: hashed)
        keep = hashed > 0
      } else if keep {
        t.held = HeldRanges(ranges: ranges, total: total, validators: held.validators, hashed: hashed)
      }
    }
    if keep && partial.hash(0..<hashed, into: t.hasher) {
      t.partial = partial
      t.partialValidators = held.validators
    } else {
      partial.discard()
      t.hasher.reset()
      t.held = nil
    }
  }

  /// The request of the next try: the plan's, unless this run holds partial
  /// data (continued only under a version `If-Range` can name).
  func request(_ t: RunningTask) -> RequestPolicy {
    guard let p = t.partial, p.size > 0, let held = t.partialValidators else {
      if case .resume = t.planned.request.condition { return .whole }
      return t.planned.request
    }
    return RequestPolicy.resume(size: p.size, held: held) ?? .whole
  }

  /// What a try's result leaves behind (`keep`), and how the try ended, for the life cycle.
  func took(_ t: RunningTask, _ r: TransferResult) -> TaskLifecycle.TryEnd {
    if !r.began {
      t.report.attempts -= 1
      return .neverBegan
    }
    keep(r, in: t)
    switch r.outcome {
    case .complete: return .complete
    case .notModified: return .notModified
    case .rangeNotSatisfiable(let total):
      // The partial may already hold the whole file; check it rather than trust an error body.
      let known = total ?? journal.state(t.id).partial?.totalBytes
      let whole = t.partial.map { $0.size == known } ?? false
      if whole {
        t.head = nil
        t.pendingValidators = t.partialValidators
      }
      return .rangeNotSatisfiable(partialIsWhole: whole)
    case .restart(let why): return .restart(manifests[t.manifest].redacting(why))
    case .stopped: return .stopped
    case .http(let status, let retryAfter): return .http(status: status, retryAfter: retryAfter.map(Double.init))
    case .failed(let e):
      // Bytes past max_bytes can never be installed: the partial goes.
      var tooLarge = false
      if case .tooLarge = e { tooLarge = true }
      return .failed(
        manifests[t.manifest].redacting(e.message), retryable: e.isRetryable, discardPartial: tooLarge)
    }
  }

  /// The partial a try leaves, the version it was written under, and the
  /// report's figures and notes.
  func keep(_ r: TransferResult, in t: RunningTask) {
    t.partial = r.partial
    t.report.bytesTransferred += r.received
    t.report.bytesDiscarded += r.discarded
    if r.received > 0 && r.resumedFrom > 0 { t.report.resumedFrom = r.resumedFrom }
    if r.status != 0 { t.report.httpStatus = r.status }
    if let h = r.head { t.partialValidators = h.validators }
    t.held = nil
    if let rs = r.ranges, let h = r.head, let total = h.totalBytes {
      t.held = HeldRanges(ranges: rs, total: total, validators: h.validators, hashed: r.hashed)
    }
    if r.segments > 1 { t.report.segments = r.segments }
    var notes = r.notes
    if SegmentPolicy.keptWholeByProxy(
      segments: t.entry.segments, throughProxy: t.planned.throughProxy, total: r.head?.totalBytes)
    {
      notes.append(SegmentPolicy.proxyNote)
    }
    for note in notes where !t.report.warnings.contains(note) {
      t.report.warnings.append(note)
      options.verbose?("\(t.id): \(note)")
    }
    t.head = r.head
    t.pendingValidators = r.validators
    t.verifiedDigest = nil
  }

  /// A complete partial: every verifier that applies (size, sha256, the
  /// entry's `verify:` plugins), and whether the destination already holds it.
  func verify(_ t: RunningTask) -> TaskLifecycle.Verdict {
    guard let p = t.partial else { return .noPartial }
    let e = t.entry
    let head = t.head
    let validators = t.pendingValidators
    if head?.lengthUnknown == true, let refusal = closeDelimited(t, size: p.size, validators: validators) {
      return .cutShort(refusal)
    }
    // A body still held in memory was not hashed as it arrived: it is here.
    p.hashHeld(into: t.hasher)
    guard let digest = t.hasher.finish() else {
      return .refetch(unreadable(p.destination, t.hasher.unreadable))
    }
    t.report.sha256 = digest
    t.verifiedDigest = digest
    var input = VerifyInput(
      entry: e, path: PartialFile.path(for: e.destinationPath), size: p.size, sha256: digest,
      announcedSize: head?.totalBytes, with: .object([]), timeout: options.verifyTimeout)
    input.etag = (validators ?? head?.validators)?.etag
    input.storeSHA256 = head?.storeSHA256
    for (verifier, with) in plugins.verifiers(for: e) {
      input.with = with
      switch verifier.verify(input) {
      case .accept(let warnings): t.report.warnings += warnings
      case .passed(let check): t.report.checks.append(check)
      case .refetch(let why): return .refetch(why)
      case .reject(let why): return .rejected(why)
      }
    }
    if TrustCheck.applies(to: e) {
      switch trust(for: t).run(partial: input.path, sha256: digest) {
      case .success(let passed): t.report.checks += passed
      case .failure(.stopped(let url)): return .stopped("stopped before \(url) arrived")
      case .failure(let f): return .rejected(f.message)
      }
    }
    t.pendingValidators = validators ?? head?.validators
    // The same bytes again (a weak date's unconditional check, or a lost journal): nothing changes.
    return sameAsInstalled(t, digest: digest, size: p.size) ? .sameAsInstalled : .accepted
  }

  /// Why a partial's digest is unknown: its bytes could not be read back for the hashing.
  func unreadable(_ destination: String, _ failure: HashContext.ReadFailure?) -> String {
    switch failure {
    case .errno(let e)?: return TransferError.readBack(path: destination, errno: e).message
    case .short?, nil:
      return
        "the partial file of \(destination) could not be read back to hash it: it is shorter than the bytes written to it"
    }
  }

  /// Fills task `f`'s partial with `leader`'s installed bytes (the same
  /// declared sha256, verified when the leader was installed). False, with a
  /// warning, when the copy cannot be made: the task then fetches.
  func copy(_ f: RunningTask, from leader: RunningTask) -> Bool {
    let e = f.entry
    do throws(InstallError) {
      let p = try PartialFile(root: manifests[f.manifest].root, relative: e.destination, resume: false)
      do throws(InstallError) {
        let how = try p.fill(from: leader.entry.destinationPath)
        f.report.copiedFrom = leader.id
        f.report.copyMethod = how.rawValue
      } catch {
        p.discard()
        throw error
      }
      f.partial = p
      f.report.sha256 = leader.report.sha256
      // The leader's validators name a version at its URL only.
      if e.url == leader.entry.url {
        f.pendingValidators = leader.pendingValidators
      }
      return true
    } catch {
      f.report.warnings.append(
        "could not copy \(leader.id)'s bytes (\(error.message)); fetched instead")
      return false
    }
  }
}
