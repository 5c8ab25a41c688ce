import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// What the runner writes to the journal as a task's life goes on: the
/// version a partial belongs to before its first byte, the ranges it holds,
/// and each outcome (installed, unchanged, failed, interrupted). Also the
/// steps that need no transfer: adopting a file that already holds its
/// sha256, and correcting a mode.
extension Runner {
  /// The journal hears which bytes a segmented partial holds as they grow,
  /// in this boot, and which of them are flushed (`durable`).
  func journalRanges(_ t: PlannedTask) -> @Sendable (ByteRanges?, Int64, Bool) -> Void {
    let id = t.id
    return { [journal] ranges, total, durable in
      journal.update(id) { s in
        s.partial?.ranges = ranges
        s.partial?.totalBytes = total
        s.partial?.boot = ranges == nil ? nil : BootID.current
        if durable { s.partial?.durable = ranges }
        if let ranges { s.partial?.offset = ranges.count }
      }
    }
  }

  /// Before the partial holds a byte of a version, the journal knows that version.
  func journalPartial(_ t: PlannedTask) -> @Sendable (ResponseHead) -> Void {
    // Worked out only when a body begins: most requests of a steady run are answered 304.
    let entry = t.entry
    let id = t.id
    return { [journal] head in
      let fp = Planner.fingerprint(entry)
      let partialPath = PartialFile.path(for: entry.destinationPath)
      journal.update(id) { s in
        if s.fingerprint == nil { s.fingerprint = fp }
        s.partial = TaskState.Partial(
          path: partialPath, offset: head.offset, totalBytes: head.totalBytes, etag: head.validators.etag,
          lastModified: head.validators.lastModified, dateIsStrong: head.validators.dateIsStrong)
      }
    }
  }

  func discardPartial(_ t: RunningTask) {
    t.partial?.discard()
    t.partial = nil
    t.partialValidators = nil
    t.held = nil
    t.hasher.reset()
    journal.update(t.id, flush: false) { $0.partial = nil }
  }

  /// A body whose end only the closing connection marked (SPEC §8.2): a
  /// warning, or the reason to refuse it when an earlier response for the
  /// same version (same strong ETag, or same strong date) gave another size.
  func closeDelimited(_ t: RunningTask, size: Int64, validators now: Validators?) -> String? {
    let state = journal.state(t.id)
    var known: Int64? = nil
    if let inst = state.installed, let now, inst.validators.isSameVersion(as: now) { known = inst.size }
    if let p = state.partial, let total = p.totalBytes, let now, p.validators.isSameVersion(as: now) { known = total }
    if let known, known != size {
      return
        "the server marked the end of the body only by closing the connection after \(ByteSize.format(size)), but this version is \(ByteSize.format(known)); refused as cut short, nothing installed"
    }
    t.report.warnings.append(
      "the server marked the end of the body only by closing the connection: its length (\(ByteSize.format(size))) could not be checked"
    )
    return nil
  }

  /// Sets an installed file's mode without a transfer (the plan found it differs).
  func correctMode(_ t: PlannedTask, _ report: inout TaskReport) {
    guard let mode = t.correctMode else { return }
    do {
      try PartialFile.correctMode(root: manifest(of: t).root, relative: t.entry.destination, mode: mode)
    } catch {
      report.warnings.append(error.message)
    }
  }

  /// SPEC §8.3: the destination already holds the declared sha256 (hashed by
  /// the plan): record it as installed, unless it changed since.
  func adopt(_ t: PlannedTask, _ report: inout TaskReport) {
    let e = t.entry
    guard let planned = t.adopt, let now = FactGatherer.fact(at: e.destinationPath),
      now.size == planned.size, now.mtimeNs == planned.mtimeNs, now.isRegular
    else {
      report.warnings.append(
        "the destination changed after it was hashed; not recorded, the next apply checks again")
      return
    }
    unchanged(t, &report, validators: nil, digest: e.sha256, replacingRecord: true)
    // No life cycle runs for it: its outcome is set here, a running task's by `.end`.
    report.outcome = .unchanged
    report.sha256 = e.sha256
    options.log?(
      "syncfiles: \(e.qualifiedID) already holds its sha256 (\(ByteSize.format(now.size))): recorded, no transfer")
  }

  /// The destination already holds exactly these bytes: the journal's record
  /// of it still matches the file and its digest is this one; or, with no
  /// record (a lost journal, a file put there by hand), the file's own bytes
  /// hash to it (read only when the sizes agree). Not looked at when the
  /// plan found no destination.
  func sameAsInstalled(_ t: RunningTask, digest: String, size: Int64) -> Bool {
    if t.planned.destinationMissing { return false }
    let e = t.entry
    let recorded = journal.state(e.qualifiedID).installed.flatMap { $0.sha256 == nil ? nil : $0 }
    guard let f = FactGatherer.fact(at: e.destinationPath), f.isRegular, f.size == size else { return false }
    // The journal's digest speaks for the file only while the file is as the
    // journal left it; a file changed since (a record lost to a full disk, a
    // hand copy) is hashed.
    if let inst = recorded, inst.size == f.size, inst.mtimeNs == f.mtimeNs { return inst.sha256 == digest }
    return SHA256Hasher.digest(ofFileAt: e.destinationPath, size: size) == digest
  }

  /// The new bytes are in place: the journal records them, and the hooks they owe.
  func recordInstalled(_ t: RunningTask) {
    guard let d = t.install else { return }
    let e = t.entry
    let now = Timestamp.current()
    let previous = journal.state(e.qualifiedID).installed?.sha256
    let digest = t.report.sha256
    let v = t.pendingValidators
    // An edited destination is installed over only when its bytes differ
    // from the new ones (`sameAsInstalled`): restoring it changes it.
    let changed = previous == nil || previous != digest || t.planned.destinationEdited
    let manifest = manifests[t.manifest]
    journal.update(e.qualifiedID, flush: false) { s in
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
      s.lastBytes = t.report.bytesTransferred
      s.httpStatus = t.report.httpStatus
      s.partial = nil
      s.failures = 0
      s.backoffUntil = nil
      if let f = d.fact {
        s.installed = TaskState.Installed(
          size: f.size, mtimeNs: f.mtimeNs, etag: v?.etag, lastModified: v?.lastModified, sha256: digest,
          dateIsStrong: v?.dateIsStrong ?? false)
      }
    }
    t.report.changed = changed
    if let err = d.error { t.report.warnings.append(err.message) }
    guard let log = options.log else { return }
    var line = "syncfiles: installed \(e.qualifiedID) (\(ByteSize.format(t.report.bytesTransferred))"
    if let from = t.report.copiedFrom {
      line += ", the same sha256 as \(from): \(t.report.copyMethod ?? "copy")"
    }
    if t.report.resumedFrom > 0 { line += ", resumed at \(ByteSize.format(t.report.resumedFrom))" }
    log(line + ")")
  }

  /// `digest`: the SHA-256 of the destination's bytes, when this run read them.
  /// `replacingRecord`: the journal's record of the destination is stale; describe the file as it is.
  func unchanged(
    _ t: PlannedTask, _ report: inout TaskReport, validators v: Validators?, digest: String? = nil,
    replacingRecord: Bool = false
  ) {
    let e = t.entry
    let status = report.httpStatus
    let now = Timestamp.current()
    journal.update(e.qualifiedID, flush: false) { s in
      let fp = Planner.fingerprint(e)
      if !Planner.isFingerprint(s.fingerprint, of: e, current: fp) || replacingRecord { s.installed = nil }
      s.fingerprint = fp
      s.lastCheck = now
      s.lastSuccess = now
      s.lastOutcome = .unchanged
      s.lastError = nil
      s.lastBytes = 0
      s.httpStatus = status
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
      } else if let f = FactGatherer.fact(at: e.destinationPath) {
        // Only a destination the journal has no record of is looked at again.
        s.installed = TaskState.Installed(
          size: f.size, mtimeNs: f.mtimeNs, etag: v?.etag, lastModified: v?.lastModified, sha256: digest,
          dateIsStrong: v?.dateIsStrong ?? false)
      }
    }
    removeLeftoverPartial(t, &report)
  }

  /// The destination is up to date: partial data beside it (of another
  /// version, or one a kill left unjournaled) will never be resumed.
  func removeLeftoverPartial(_ t: PlannedTask, _ report: inout TaskReport) {
    guard t.leftoverPartial else { return }
    do throws(InstallError) {
      try PartialFile.removeLeftover(root: manifest(of: t).root, relative: t.entry.destination)
    } catch {
      report.warnings.append(error.message)
    }
  }

  /// The task failed. A partial its life cycle kept stays claimed for a resume.
  func fail(_ t: RunningTask, _ reason: String) {
    let e = t.entry
    // A plugin's or server's words may echo a URL or header made from a secret.
    let why = manifests[t.manifest].redacting(reason)
    let now = Timestamp.current()
    let size = t.partial?.size
    journal.update(e.qualifiedID, flush: false) { s in
      s.lastCheck = now
      s.lastOutcome = .failed
      s.lastError = why
      s.lastBytes = t.report.bytesTransferred
      s.httpStatus = t.report.httpStatus
      s.failures += 1
      s.backoffUntil =
        now + TaskLifecycle.hold(afterFailures: s.failures, backoff: e.retry.backoff, maxBackoff: e.retry.maxBackoff)
      if let size { s.partial?.offset = size } else { s.partial = nil }
    }
    t.partial = nil
    t.report.error = why
    options.log?("syncfiles: failed \(e.qualifiedID): \(why)")
  }

  /// The run stopped the task. A partial its life cycle kept stays claimed for a resume.
  func interrupted(_ t: RunningTask, why: String) {
    let e = t.entry
    let size = t.partial?.size
    let now = Timestamp.current()
    journal.update(e.qualifiedID, flush: false) { s in
      // The run that stopped is the last check (status --check names its time).
      s.lastCheck = now
      s.lastOutcome = .interrupted
      s.lastError = why
      if let size { s.partial?.offset = size } else { s.partial = nil }
    }
    t.partial = nil
    t.report.error = why
  }
}
