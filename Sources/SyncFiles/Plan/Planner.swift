import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Options that change what is due.
public struct PlanOptions: Sendable, Hashable {
  /// Ignore schedules, `not_before` and backoff (requests stay conditional).
  public var force = false
  /// Only tasks whose id matches one of these (`name/id` or a glob); empty = all.
  public var only: [String] = []
  public init(force: Bool = false, only: [String] = []) {
    self.force = force
    self.only = only
  }
}

/// The planner: a pure function of manifests, journal state, facts and
/// options. Everything `plan` shows is computed here, and `apply` executes
/// exactly this.
public enum Planner {
  public static func plan(
    manifests: [Manifest], journal: [String: TaskState], facts: Facts, options: PlanOptions = PlanOptions(),
    journalPath: String
  ) -> SessionPlan {
    var tasks: [PlannedTask] = []
    tasks.reserveCapacity(manifests.reduce(0) { $0 + $1.files.count })
    // Tasks held back alike (one not_before, one backoff) share the text of
    // their reason instead of holding a copy each.
    var lastReason = ""
    var waits = WaitReasons()
    for m in manifests {
      for i in m.files.indices {
        var t = planTask(
          m.files[i], conditions: m.conditions, state: journal[m.files[i].qualifiedID], facts: facts,
          options: options, waits: &waits)
        if t.reason == lastReason { t.reason = lastReason } else { lastReason = t.reason }
        tasks.append(t)
      }
    }
    let limits = Limits.merged(manifests.map(\.limits))
    for i in tasks.indices { segmentNote(&tasks[i], cap: limits.segments ?? Limits.defaultSegments) }
    return SessionPlan(
      session: sessionID(manifests: manifests, journal: journalPath), now: facts.now, journal: journalPath,
      tasks: tasks, disk: diskChecks(tasks, facts: facts), limits: limits)
  }

  /// A stable id for the session: the journal and the manifests it reads.
  static func sessionID(manifests: [Manifest], journal: String) -> String {
    hex16(fnv1a(joined: [journal] + manifests.map(\.absolutePath), separator: "\n"))
  }

  /// The journal vouches for a destination's bytes: the entry is unchanged,
  /// the file is as recorded, and the recorded digest is the declared sha256.
  static func vouches(_ s: TaskState?, for e: FileEntry, fact f: FileFact) -> Bool {
    guard let s, let inst = s.installed, let want = e.sha256, inst.sha256 == want else { return false }
    return inst.size == f.size && inst.mtimeNs == f.mtimeNs && isFingerprint(s.fingerprint, of: e)
  }

  /// A due revalidation of an object its prefix's listing describes: the
  /// listing already says whether it changed, so no request is needed to
  /// learn it (SPEC §9.4).
  static func listed(_ t: inout PlannedTask, _ object: ListedObject, _ installed: TaskState.Installed?) {
    guard let installed, let etag = installed.etag else { return }
    if etag == object.etag && installed.size == object.size {
      t.action = .skip
      t.reason = "unchanged in the listing (ETag and size as installed): no request"
      t.bytesToTransfer = 0
    } else {
      download(
        &t,
        "changed in the listing: ETag \(object.etag ?? "none"), \(ByteSize.format(object.size)) (installed: \(etag))")
      t.request = .whole
    }
  }

  // MARK: - One task

  static func planTask(
    _ e: FileEntry, conditions: Conditions, state: TaskState?, facts: Facts, options: PlanOptions,
    waits: inout WaitReasons
  ) -> PlannedTask {
    var t = PlannedTask(entry: e, action: .skip, reason: "")
    let now = facts.now
    t.throughProxy = facts.proxies.used(scheme: e.url.scheme, host: e.url.host, setting: e.network.proxy)

    guard matches(e.qualifiedID, patterns: options.only) else {
      t.reason = "not selected by --only"
      t.selected = false
      return t
    }

    if heldByRollback(&t, state) { return t }

    // 1. What would happen if nothing held it back.
    let dest = facts.files[e.destinationPath]
    let partialFact = partialFact(e, state, facts)
    let sourceChanged = state?.fingerprint.map { !isFingerprint($0, of: e) } ?? false
    let held = sourceChanged ? nil : resumable(state?.partial, fact: partialFact)
    if let dest, dest.isSymlink {
      download(&t, "destination is a symlink: it is replaced by the downloaded file, never followed")
    } else if let dest, !dest.isRegular {
      download(&t, "destination is not a regular file; apply will refuse to replace it")
      t.destinationNotAFile = true
    } else if let dest {
      present(&t, dest, state: state, held: held, sourceChanged: sourceChanged, facts: facts, options: options)
    } else {
      t.destinationMissing = true
      if let (p, size) = held {
        resume(&t, p, size: size, prefix: "")
      } else if state?.installed != nil && !sourceChanged {
        download(&t, "destination deleted since install — will download again")
      } else {
        let note = weakPartialNote(state?.partial, fact: partialFact)
        download(&t, note.isEmpty ? "destination missing" : "destination missing" + note)
      }
    }

    modeCheck(&t, dest)
    t.leftoverPartial = t.action != .resume && partialFact != nil
    // When it is due next, after this run.
    if t.runs {
      t.nextDue = nextAfterRun(e.schedule, now: now)
    }
    guard t.runs else { return t }

    // 2. What holds it back: not_before, backoff, conditions.
    holdBack(&t, conditions: conditions, state: state, facts: facts, options: options, waits: &waits)
    return t
  }

  /// A regular file at the destination: adopted, replaced, resumed over,
  /// revalidated, or up to date, by what the journal says of it.
  static func present(
    _ t: inout PlannedTask, _ dest: FileFact, state: TaskState?, held: (TaskState.Partial, Int64)?,
    sourceChanged: Bool, facts: Facts, options: PlanOptions
  ) {
    let e = t.entry
    if let want = e.sha256, facts.digests[e.destinationPath] == want {
      t.action = .skip
      t.reason = "destination already holds the declared sha256: recorded as installed, no transfer"
      t.bytesToTransfer = 0
      t.adopt = dest
    } else if sourceChanged {
      download(&t, "manifest entry changed (url, destination or checks) since the last install — will download")
    } else if let inst = state?.installed, inst.size != dest.size || inst.mtimeNs != dest.mtimeNs {
      download(&t, "destination changed on disk since install — will re-download")
      t.destinationEdited = true
    } else if let (p, size) = held {
      resume(&t, p, size: size, prefix: "update interrupted: ")
    } else if state?.installed == nil {
      t.action = .revalidate
      t.reason = "destination exists but is not in the journal: revalidate against its modification time"
      // A changed source sends the whole file: its expected size is the upper bound (and the disk needs room).
      t.bytesToTransfer = e.expectedBytes ?? 0
      t.request = .revalidate(
        installed: nil, localMtime: dest.mtimeNs / 1_000_000_000, cacheMaxAge: e.cacheMaxAge.seconds)
    } else if !options.force, let inst = state?.installed, inst.validators.isEmpty, vouches(state, for: e, fact: dest) {
      // Adopted bytes with no validator to ask about: a request could only
      // bring the same bytes again, or bytes the sha256 refuses.
      t.action = .skip
      t.reason = "destination holds the declared sha256 (no validator to revalidate with): up to date"
    } else {
      scheduled(&t, e.schedule, last: state?.lastSuccess ?? state?.lastCheck, now: facts.now, force: options.force)
      t.request = .revalidate(
        installed: state?.installed?.validators, localMtime: nil, throughProxy: t.throughProxy,
        cacheMaxAge: e.cacheMaxAge.seconds)
      if t.action == .revalidate, let object = facts.listed[e.qualifiedID] { listed(&t, object, state?.installed) }
    }
  }

  /// A rollback holds the task, `--force` or not, until it is released (SPEC §10.4).
  static func heldByRollback(_ t: inout PlannedTask, _ state: TaskState?) -> Bool {
    guard let at = state?.rolledBack else { return false }
    t.reason = "rolled back at \(at.rfc3339); held until syncfiles rollback --release \(t.entry.qualifiedID)"
    return true
  }

  /// What lies at the task's partial path: the journal's, else the one
  /// beside the destination (not made when the facts counted none there).
  static func partialFact(_ e: FileEntry, _ state: TaskState?, _ facts: Facts) -> FileFact? {
    // A partial elsewhere (the journal of a folder copied, not moved) is not this entry's.
    if let held = state?.partial?.path {
      return held == PartialFile.path(for: e.destinationPath) ? facts.files[held] : nil
    }
    if facts.siblingPartials == 0 { return nil }
    return facts.files[PartialFile.path(for: e.destinationPath)]
  }

  /// What holds a due task back (not_before, a backoff after failed runs,
  /// the conditions of a discretionary one): it waits instead.
  static func holdBack(
    _ t: inout PlannedTask, conditions: Conditions, state: TaskState?, facts: Facts, options: PlanOptions,
    waits: inout WaitReasons
  ) {
    let now = facts.now
    if !options.force {
      if let nb = t.entry.notBefore, nb > now {
        hold(&t, waits.notBefore(nb), until: nb)
        return
      }
      if let until = state?.backoffUntil, until > now, let st = state {
        let n = st.failures
        hold(&t, "in backoff after \(n) failed run\(n == 1 ? "" : "s") until \(until.rfc3339)", until: until)
        return
      }
    }
    if t.entry.discretionary {
      if let w = conditions.window, !w.contains(minuteOfDay: facts.localMinuteOfDay) {
        let minutes = (w.startMinute - facts.localMinuteOfDay + 1440) % 1440
        let start = Timestamp(seconds: now.seconds + Int64(minutes * 60 - facts.localSecond))
        hold(&t, "outside window \(w) (local time); discretionary", until: start)
        return
      }
      if conditions.acPower && !facts.onACPower {
        hold(&t, "not on mains power (ac_power); discretionary", until: nil)
        return
      }
    }
  }

  /// The reason of a task waiting for its `not_before`, made once per date:
  /// a large manifest often names one date for all of its entries, and
  /// writing it out costs more than planning the task.
  struct WaitReasons {
    private var last: (date: Timestamp, text: String)?

    mutating func notBefore(_ date: Timestamp) -> String {
      if let last, last.date == date { return last.text }
      let text = "waiting for not_before \(date.rfc3339)"
      last = (date, text)
      return text
    }
  }

  // Helpers take the task inout: local functions capturing it would box it
  // on the heap and copy it in and out, for every entry.
  static func download(_ t: inout PlannedTask, _ why: String) {
    t.action = .download
    t.reason = why
    t.bytesToTransfer = t.entry.expectedBytes
  }

  static func resume(_ t: inout PlannedTask, _ p: TaskState.Partial, size: Int64, prefix: String) {
    guard let request = RequestPolicy.resume(size: size, held: p.validators) else { return }
    t.action = .resume
    t.resumeOffset = size
    t.request = request
    t.heldPartial = p
    let total = t.entry.expectedBytes ?? p.totalBytes
    let of = total.map { " of \(ByteSize.format($0))" } ?? ""
    let validator = p.etag != nil ? "ETag" : "Last-Modified"
    t.reason = "\(prefix)partial \(ByteSize.format(size))\(of) held, resumable with \(validator)"
    t.bytesToTransfer = total.map { max(0, $0 - size) }
  }

  /// Partial data that cannot be resumed, said in the reason of the download that replaces it.
  static func weakPartialNote(_ p: TaskState.Partial?, fact: FileFact?) -> String {
    guard let p, let f = fact, f.isRegular, f.size > 0, p.validators.ifRange == nil else { return "" }
    let why = p.validators.hasWeakDate ? "a weak Last-Modified" : "no strong validator"
    return
      "; the \(ByteSize.format(f.size)) partial held was received under \(why) and cannot be resumed — will start over"
  }

  /// A transfer that may run as byte ranges (SPEC §8.3) says so: `segments`
  /// asked by number, or `auto` for a file expected to be 64 MiB or more.
  /// Whether the server allows it is known only from its answer, so the
  /// plan says "up to", and the cap of `limits.segments` applies.
  static func segmentNote(_ t: inout PlannedTask, cap: Int) {
    guard t.action == .download || t.action == .resume else { return }
    let asked = SegmentPolicy.asked(segments: t.entry.segments, expectedBytes: t.entry.expectedBytes) ?? 1
    guard asked > 1 else { return }
    if t.throughProxy && t.entry.segments == nil {
      t.reason += "; " + SegmentPolicy.proxyNote
      return
    }
    guard cap > 1 else {
      t.reason += "; segments: \(asked) asked, one stream (limits.segments is 1)"
      return
    }
    t.segments = min(asked, cap)
    let capped = asked > cap ? " (segments: \(asked) asked; limits.segments caps it at \(cap))" : ""
    t.reason +=
      "; in up to \(min(asked, cap)) byte ranges at once\(capped), each on a connection of its own, if the server offers ranges under a strong validator, else one stream"
  }

  /// An installed file that stays (not downloaded again) gets the manifest's
  /// mode without a transfer when its mode differs.
  static func modeCheck(_ t: inout PlannedTask, _ dest: FileFact?) {
    guard t.action != .download && t.action != .resume, let dest, dest.isRegular else { return }
    let wanted = t.entry.mode ?? 0o644
    guard dest.mode != wanted else { return }
    t.correctMode = wanted
    t.reason += "; mode \(octalMode(dest.mode)) will be set to \(octalMode(wanted)) without a transfer"
  }

  static func hold(_ t: inout PlannedTask, _ why: String, until: Timestamp?) {
    t.action = .wait
    t.reason = why
    t.nextDue = until
    t.bytesToTransfer = 0
  }

  /// Partial data that a resume can continue: the file exists, is not empty,
  /// and was started under a validator `If-Range` can use (`Validators.ifRange`).
  static func resumable(_ p: TaskState.Partial?, fact: FileFact?) -> (TaskState.Partial, Int64)? {
    guard let p, let fact, fact.isRegular, fact.size > 0, p.validators.ifRange != nil else { return nil }
    if let total = p.totalBytes, fact.size > total { return nil }
    // A segmented partial is as long as the whole file and holds its ranges:
    // after a reboot, only those it flushed (a power cut left the rest zeros).
    if let ranges = p.trustedRanges(boot: BootID.current) {
      guard SegmentPolicy.rangesUsable(ranges, total: p.totalBytes, fileSize: fact.size) else { return nil }
      var trusted = p
      trusted.ranges = ranges
      return (trusted, ranges.count)
    }
    return (p, fact.size)
  }

  static func scheduled(_ t: inout PlannedTask, _ schedule: Schedule, last: Timestamp?, now: Timestamp, force: Bool) {
    func revalidate(_ why: String) {
      t.action = .revalidate
      t.reason = why
      t.bytesToTransfer = 0
    }
    if force && schedule != .once {
      revalidate("forced (--force): revalidate")
      return
    }
    switch schedule {
    case .always:
      revalidate("no schedule: revalidate on every apply")
    case .once:
      t.action = .skip
      t.reason = "schedule once: destination present"
    case .every(let d):
      guard let last else { return revalidate("due: never checked (every \(d))") }
      let due = last + d
      if due <= now {
        revalidate("due: last checked \(last.rfc3339) (every \(d))")
      } else {
        t.action = .skip
        t.reason = "not due until \(due.rfc3339) (every \(d))"
        t.nextDue = due
      }
    case .cron(let c):
      guard let last else { return revalidate("due: never checked (cron \(c.source))") }
      if let fire = c.next(after: last), fire <= now {
        revalidate("due: cron \(c.source) fired at \(fire.rfc3339) since the last check")
      } else {
        t.action = .skip
        let next = c.next(after: now)
        t.reason = "not due until \(next?.rfc3339 ?? "never") (cron \(c.source))"
        t.nextDue = next
      }
    }
  }

  static func nextAfterRun(_ schedule: Schedule, now: Timestamp) -> Timestamp? {
    switch schedule {
    case .always, .once: return nil
    case .every(let d): return now + d
    case .cron(let c): return c.next(after: now)
    }
  }

  // MARK: - Disk preflight

  /// Per file system: bytes the run needs (expected bytes minus what partial
  /// files already hold; a replaced file needs room for its new copy while
  /// the old one stays) against free space.
  static func diskChecks(_ tasks: [PlannedTask], facts: Facts) -> [DiskCheck] {
    var byDevice: [UInt64: DiskCheck] = [:]
    var order: [UInt64] = []
    for i in tasks.indices
    where tasks[i].action == .download || tasks[i].action == .resume
      || (tasks[i].action == .revalidate && (tasks[i].bytesToTransfer ?? 0) > 0)
    {
      let t = tasks[i]
      guard let d = facts.disks[Paths.folder(of: t.entry.destinationPath)] else { continue }
      if byDevice[d.device] == nil {
        byDevice[d.device] = DiskCheck(
          path: d.mountPoint, freeBytes: d.freeBytes, neededBytes: 0, tasks: [], unknownSizes: 0)
        order.append(d.device)
      }
      byDevice[d.device]!.neededBytes += t.bytesToTransfer ?? 0
      byDevice[d.device]!.tasks.append(t.id)
      if t.bytesToTransfer == nil { byDevice[d.device]!.unknownSizes += 1 }
    }
    return order.map { byDevice[$0]! }
  }
}
