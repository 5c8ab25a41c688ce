import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// One task of a run that transfers, from its first try to its outcome: its
/// planned task, its life cycle, what its tries leave behind (the partial,
/// the versions, the digest) and its report. Made when the task first needs
/// it and let go when it ends (`RunningTasks`); a task that does not run (a
/// skip, a wait) has a report and no `RunningTask`. Only the run loop's
/// thread touches one.
final class RunningTask {
  /// The task's number among those the run transfers (`RunningTasks`): the
  /// tag its transfer's and its install's results come back with.
  let number: Int
  /// Where the task stands in the plan, and so in the run's report.
  let position: Int
  let planned: PlannedTask
  /// The session's manifest the task belongs to (its root, secrets, hooks).
  let manifest: Int
  var life: TaskLifecycle
  var report: TaskReport
  /// The host slot (`HostQueues`) of the try in flight.
  var hostSlot = 0
  /// Made on first use: most tasks of a steady run never hash a byte.
  lazy var hasher = SHA256Hasher()

  // What the tries leave behind, nil until a try runs.
  var partial: PartialFile?
  /// Validators the partial was written under (a resume continues only that version).
  var partialValidators: Validators?
  /// A segmented partial's bytes (SPEC §8.3): the next try asks for the rest.
  var held: HeldRanges?
  /// The last try's response, for the verifiers.
  var head: ResponseHead?
  /// Validators of the version this task ends with, for the journal.
  var pendingValidators: Validators?
  /// SHA-256 of the bytes this run verified, for the journal.
  var verifiedDigest: String?
  /// What the installer said (the installed file's size and mtime).
  var install: InstallQueue.Done?

  init(
    number: Int, position: Int, planned: PlannedTask, manifest: Int, life: TaskLifecycle, report: TaskReport
  ) {
    self.number = number
    self.position = position
    self.planned = planned
    self.manifest = manifest
    self.life = life
    self.report = report
  }

  var id: String { planned.id }
  var entry: FileEntry { planned.entry }

  /// What the partial file holds now, for the life cycle to decide whether
  /// it is kept.
  var partialHeld: TaskLifecycle.PartialHeld {
    guard let p = partial else { return .none }
    return p.size > 0 && partialValidators?.ifRange != nil ? .resumable : .unresumable
  }

  /// The source the current try uses: the url, then the mirrors.
  var source: SourceURL { current { $0 } }

  /// `source.host` and `source.scheme` without a copy of the whole URL (both
  /// are asked for several times a try).
  var host: String { current { $0.host } }
  var scheme: String { current { $0.scheme } }

  private func current<R>(_ part: (SourceURL) -> R) -> R {
    let k = life.source
    return k == 0 ? part(entry.url) : part(entry.mirrors[k - 1])
  }
}
