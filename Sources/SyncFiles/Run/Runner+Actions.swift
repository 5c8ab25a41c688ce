/// How the runner carries out a task's actions: tries through the source's
/// transport, verification, hand-off to the installer. The decisions are the
/// task's `TaskLifecycle`'s; this file only does what it says.
extension Runner {
  /// Hands `event` to the task's life cycle and carries out what it asks for.
  func feed(_ i: Int, _ event: TaskLifecycle.Event) {
    for action in jobs[i].life.handle(event) { perform(action, for: i) }
  }

  func perform(_ action: TaskLifecycle.Action, for i: Int) {
    switch action {
    case .startTry: begin(i)
    case .verify: feed(i, .verified(verify(i)))
    case .install: install(i)
    case .requeue: enqueue(i, front: true)
    case .waitToRetry(let seconds): waitToRetry(i, seconds)
    case .discardPartial: discardPartial(i)
    case .recordUnchanged:
      unchanged(i, validators: jobs[i].flight.pendingValidators, digest: jobs[i].flight.verifiedDigest)
    case .recordInstalled: recordInstalled(i)
    case .fail(let why): fail(i, why)
    case .interrupt(let why): interrupted(i, why: why)
    case .notStarted(let why): reports[i].error = why
    case .warn(let w): if !reports[i].warnings.contains(w) { reports[i].warnings.append(w) }
    case .withdrawWarning(let w): reports[i].warnings.removeAll { $0 == w }
    case .log(let line): options.log?("syncfiles: \(plan.tasks[i].id): \(line)")
    case .end(let outcome):
      reports[i].outcome = outcome
      settle(i)
    }
  }

  /// Starts the try the life cycle asked for.
  func begin(_ i: Int) {
    let transport: any Transport
    let spec: TransferSpec
    do throws(RunError) {
      transport = try self.transport(for: i)
      spec = try prepare(i)
    } catch {
      return feed(i, .couldNotStart(error.message))
    }
    loop.active += 1
    loop.running.append(i)
    jobs[i].hostSlot = loop.queues.slot(of: host(i))
    loop.queues.count(jobs[i].hostSlot, by: 1)
    reports[i].attempts += 1
    clock.end(.start)
    transport.start(spec) { [self] r in post(.transfer(i, r)) }
  }

  func waitToRetry(_ i: Int, _ seconds: Double) {
    if let deadline = options.deadline.map({ startTime + $0 }), monotonicSeconds() + seconds > deadline {
      feed(i, .retryPastDeadline)
    } else {
      loop.waitingRetry.append((monotonicSeconds() + seconds, i))
    }
  }

  /// The verified partial goes to the installer.
  func install(_ i: Int) {
    guard let p = jobs[i].flight.partial else { return }
    jobs[i].flight.partial = nil
    loop.installing += 1
    installer?.add(InstallQueue.Item(index: i, partial: p, mode: plan.tasks[i].entry.mode))
  }

  /// The installer is done with a task's bytes.
  func installDone(_ d: InstallQueue.Done) {
    if let err = d.error, d.fact == nil { return feed(d.index, .installed(failure: err.message)) }
    jobs[d.index].flight.install = d
    feed(d.index, .installed(failure: nil))
  }

  /// The transport of the plugin serving the task's current URL, opened on first use.
  func transport(for i: Int) throws(RunError) -> any Transport {
    let scheme = scheme(i)
    if let last = lastTransport, last.scheme == scheme { return last.transport }
    let t = try transport(scheme: scheme)
    lastTransport = (scheme, t)
    return t
  }

  private func transport(scheme: String) throws(RunError) -> any Transport {
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

  /// Opens what a try needs: the partial being resumed (re-hashed once),
  /// the request to send.
  func prepare(_ i: Int) throws(RunError) -> TransferSpec {
    let t = plan.tasks[i]
    let e = t.entry
    let source = url(i)
    // The report names the URL of the last try (the mirror that served), and
    // only that try's status: an earlier 503 never stands beside a later connection error.
    let text = source.text  // joined once for the report and the request
    reports[i].url = source.display(of: text)
    reports[i].httpStatus = nil
    if t.destinationNotAFile { throw .destinationNotAFile(path: e.destinationPath) }
    let root = manifests[jobs[i].manifest].root
    // A resume planned from a partial held since an earlier run: open and re-hash it once.
    if jobs[i].flight.partial == nil && t.action == .resume && reports[i].attempts == 0, let held = t.heldPartial {
      do throws(InstallError) { try reopen(i, held, root: root) } catch { throw .install(error) }
    }
    if jobs[i].flight.partial == nil {
      // This try starts a new partial over whatever an earlier run left: the journal stops claiming that first.
      journal.retractPartial(t.id)
    }
    var mirrors: [(url: String, name: String)] = []
    if !e.mirrors.isEmpty {  // most entries have none: no array of their URLs made per try
      let urls = [e.url] + e.mirrors
      mirrors = urls.indices.filter {
        $0 != jobs[i].life.source && ["http", "https"].contains(urls[$0].scheme)
      }.map { (urls[$0].text.revealed, urls[$0].display) }
    }
    return TransferSpec(
      id: t.id, url: text.revealed, headers: e.headers.map { "\($0.name): \($0.value.revealed)" },
      scheme: source.scheme, host: source.host, root: root, relative: e.destination,
      partial: jobs[i].flight.partial, hasher: jobs[i].hasher, request: request(i), network: e.network,
      secrets: manifests[jobs[i].manifest].secrets, maxBytes: e.maxBytes, connectTimeout: e.timeout.connect,
      stall: e.timeout.stall, onBody: journalPartial(t),
      segments: SegmentPolicy.asked(
        segments: e.segments, expectedBytes: e.expectedBytes, throughProxy: t.throughProxy), mirrors: mirrors,
      held: jobs[i].flight.held, onRanges: journalRanges(t), mayHoldBody: !plugins.anyVerifierReadsFile(for: e),
      onDrop: { [journal, id = t.id] in journal.retractPartial(id) })
  }

  /// Opens the partial held since an earlier run and hashes what it holds
  /// from byte 0: one stream is continued from its end; a segmented one
  /// (SPEC §8.3) asks for its missing ranges, or, when this run fetches it
  /// as one stream, is cut back to its held prefix.
  func reopen(_ i: Int, _ held: TaskState.Partial, root: String) throws(InstallError) {
    let partial = try PartialFile(root: root, relative: plan.tasks[i].entry.destination, resume: true)
    var keep = partial.size > 0
    var hashed = partial.size
    if let ranges = held.ranges {
      let total = held.totalBytes ?? -1
      keep = keep && partial.size == total && (ranges.ranges.last?.upperBound ?? 0) <= total && ranges.count > 0
      hashed = ranges.prefix
      if keep && (plan.tasks[i].entry.segments == 1 || options.segments == 1) {
        // This run fetches it as one stream: it continues the held prefix.
        try partial.truncate(to: hashed)
        keep = hashed > 0
      } else if keep {
        jobs[i].flight.held = HeldRanges(ranges: ranges, total: total, validators: held.validators, hashed: hashed)
      }
    }
    if keep && partial.hash(0..<hashed, into: jobs[i].hasher) {
      jobs[i].flight.partial = partial
      jobs[i].flight.partialValidators = held.validators
    } else {
      partial.discard()
      jobs[i].hasher.reset()
      jobs[i].flight.held = nil
    }
  }

  /// The request of the next try: the plan's, unless this run holds partial
  /// data (continued only under a version `If-Range` can name).
  func request(_ i: Int) -> RequestPolicy {
    guard let p = jobs[i].flight.partial, p.size > 0, let held = jobs[i].flight.partialValidators else {
      if case .resume = plan.tasks[i].request.condition { return .whole }
      return plan.tasks[i].request
    }
    return RequestPolicy.resume(size: p.size, held: held) ?? .whole
  }

  /// What a try's result leaves behind (the partial, the report's figures,
  /// the version it was written under), and how the try ended, for the life cycle.
  func took(_ i: Int, _ r: TransferResult) -> TaskLifecycle.TryEnd {
    if !r.began {
      reports[i].attempts -= 1
      return .neverBegan
    }
    let f = jobs[i].flight  // one lookup for the fields below (a job's flight is a reference)
    f.partial = r.partial
    reports[i].bytesTransferred += r.received
    reports[i].bytesDiscarded += r.discarded
    if r.received > 0 && r.resumedFrom > 0 { reports[i].resumedFrom = r.resumedFrom }
    if r.status != 0 { reports[i].httpStatus = r.status }
    if let h = r.head { f.partialValidators = h.validators }
    f.held = nil
    if let rs = r.ranges, let h = r.head, let total = h.totalBytes {
      f.held = HeldRanges(ranges: rs, total: total, validators: h.validators, hashed: r.hashed)
    }
    if r.segments > 1 { reports[i].segments = r.segments }
    var notes = r.notes
    let t = plan.tasks[i]
    if SegmentPolicy.keptWholeByProxy(
      segments: t.entry.segments, throughProxy: t.throughProxy, total: r.head?.totalBytes)
    {
      notes.append(SegmentPolicy.proxyNote)
    }
    for note in notes where !reports[i].warnings.contains(note) {
      reports[i].warnings.append(note)
      options.verbose?("\(t.id): \(note)")
    }
    f.head = r.head
    f.pendingValidators = r.validators
    f.verifiedDigest = nil
    switch r.outcome {
    case .complete: return .complete
    case .notModified: return .notModified
    case .rangeNotSatisfiable(let total):
      // The partial may already hold the whole file; check it rather than trust an error body.
      let known = total ?? journal.state(plan.tasks[i].id).partial?.totalBytes
      let whole = f.partial.map { $0.size == known } ?? false
      if whole {
        f.head = nil
        f.pendingValidators = f.partialValidators
      }
      return .rangeNotSatisfiable(partialIsWhole: whole)
    case .restart(let why): return .restart(manifests[jobs[i].manifest].redacting(why))
    case .stopped: return .stopped
    case .http(let status, let retryAfter): return .http(status: status, retryAfter: retryAfter.map(Double.init))
    case .failed(let e):
      // Bytes past max_bytes can never be installed: the partial goes.
      var tooLarge = false
      if case .tooLarge = e { tooLarge = true }
      return .failed(
        manifests[jobs[i].manifest].redacting(e.message), retryable: e.isRetryable, discardPartial: tooLarge)
    }
  }

  /// What task `i`'s partial file holds now, for its life cycle to decide
  /// whether it is kept.
  func partialHeld(_ i: Int) -> TaskLifecycle.PartialHeld {
    guard let f = jobs[i].made, let p = f.partial else { return .none }
    return p.size > 0 && f.partialValidators?.ifRange != nil ? .resumable : .unresumable
  }

  /// A complete partial: every verifier that applies (size, sha256, the
  /// entry's `verify:` plugins), and whether the destination already holds it.
  func verify(_ i: Int) -> TaskLifecycle.Verdict {
    guard let p = jobs[i].flight.partial else { return .noPartial }
    let e = plan.tasks[i].entry
    let head = jobs[i].flight.head
    let validators = jobs[i].flight.pendingValidators
    if head?.lengthUnknown == true, let refusal = closeDelimited(i, size: p.size, validators: validators) {
      return .cutShort(refusal)
    }
    // A body still held in memory was not hashed as it arrived: it is here.
    p.hashHeld(into: jobs[i].hasher)
    guard let digest = jobs[i].hasher.finish() else {
      return .refetch(unreadable(p.destination, jobs[i].hasher.unreadable))
    }
    reports[i].sha256 = digest
    jobs[i].flight.verifiedDigest = digest
    var input = VerifyInput(
      entry: e, path: PartialFile.path(for: e.destinationPath), size: p.size, sha256: digest,
      announcedSize: head?.totalBytes, with: .object([]), timeout: options.verifyTimeout)
    input.etag = (validators ?? head?.validators)?.etag
    input.storeSHA256 = head?.storeSHA256
    for (verifier, with) in plugins.verifiers(for: e) {
      input.with = with
      switch verifier.verify(input) {
      case .accept(let warnings): reports[i].warnings += warnings
      case .passed(let check): reports[i].checks.append(check)
      case .refetch(let why): return .refetch(why)
      case .reject(let why): return .rejected(why)
      }
    }
    jobs[i].flight.pendingValidators = validators ?? head?.validators
    // The same bytes again (a weak date's unconditional check, or a lost journal): nothing changes.
    return sameAsInstalled(i, digest: digest, size: p.size) ? .sameAsInstalled : .accepted
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
  func copy(_ f: Int, from leader: Int) -> Bool {
    let e = plan.tasks[f].entry
    do throws(InstallError) {
      let p = try PartialFile(root: manifests[jobs[f].manifest].root, relative: e.destination, resume: false)
      do throws(InstallError) {
        let how = try p.fill(from: plan.tasks[leader].entry.destinationPath)
        reports[f].copiedFrom = plan.tasks[leader].id
        reports[f].copyMethod = how.rawValue
      } catch {
        p.discard()
        throw error
      }
      jobs[f].flight.partial = p
      reports[f].sha256 = reports[leader].sha256
      // The leader's validators name a version at its URL only.
      if e.url == plan.tasks[leader].entry.url {
        jobs[f].flight.pendingValidators = jobs[leader].flight.pendingValidators
      }
      return true
    } catch {
      reports[f].warnings.append(
        "could not copy \(plan.tasks[leader].id)'s bytes (\(error.message)); fetched instead")
      return false
    }
  }
}
