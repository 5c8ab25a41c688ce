import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// What a task will do in this run.
public enum Action: String, Sendable, Hashable, CaseIterable {
  case download, resume, revalidate, skip, wait

  /// The task sends a request this run.
  public var runs: Bool { self == .download || self == .resume || self == .revalidate }

  /// Its place in `allCases`.
  var ordinal: Int {
    switch self {
    case .download: 0
    case .resume: 1
    case .revalidate: 2
    case .skip: 3
    case .wait: 4
    }
  }
}

/// A plan holds one per entry, so what most tasks leave at its default sits
/// in a box of its own or none, optional numbers are kept without an
/// optional's padding, and the small fields sit together.
public struct PlannedTask: Sendable, Hashable {
  public var entry: FileEntry
  /// Why, in words a person understands.
  public var reason: String
  public var resumeOffset: Int64 = 0
  /// Bytes this run is expected to move (nil when unknown).
  public var bytesToTransfer: Int64? {
    get { storedBytes == Self.none64 ? nil : storedBytes }
    set { storedBytes = newValue ?? Self.none64 }
  }
  /// When the task is (or next becomes) due; nil for "every apply" and `once`.
  public var nextDue: Timestamp? {
    get { dueSeconds == Self.none64 ? nil : Timestamp(seconds: dueSeconds) }
    set { dueSeconds = newValue?.seconds ?? Self.none64 }
  }
  /// At most this many byte ranges at once (SPEC §8.3); nil: one stream.
  public var segments: Int? {
    get { storedSegments == Int32.min ? nil : Int(storedSegments) }
    set { storedSegments = newValue.map { Int32(clamping: $0) } ?? Int32.min }
  }
  /// The mode an installed destination is set to without a transfer, when
  /// the manifest's `mode` changed or the file's drifted (SPEC §8.2).
  public var correctMode: UInt32? {
    get { storedMode == UInt32.max ? nil : storedMode }
    set { storedMode = newValue ?? UInt32.max }
  }
  /// The journal's record of the partial a resume continues (its path, its
  /// version, its ranges), read by the planner so the runner does not read
  /// it again.
  public var heldPartial: TaskState.Partial? {
    get { held?.value }
    set { held = newValue.map(SharedValue.init) }
  }
  var held: SharedValue<TaskState.Partial>?
  /// The request a first try sends (resume, conditional or whole).
  public var request: RequestPolicy {
    get { requestBox?.value ?? .whole }
    set { requestBox = newValue == .whole ? nil : SharedValue(newValue) }
  }
  private var requestBox: SharedValue<RequestPolicy>?
  /// The destination found to hold the declared sha256 without the journal
  /// knowing it (SPEC §8.3): apply records it as installed, with no transfer,
  /// if the file is still as this fact describes it.
  public var adopt: FileFact? {
    get { adoptBox?.value }
    set { adoptBox = newValue.map(SharedValue.init) }
  }
  private var adoptBox: SharedValue<FileFact>?
  // Absent values: no byte count, due time, range count or mode takes these.
  private static var none64: Int64 { .min }
  private var storedBytes = none64
  private var dueSeconds = none64
  private var storedSegments = Int32.min
  private var storedMode = UInt32.max
  public var action: Action
  /// Something other than a regular file or symlink stands at the
  /// destination: apply refuses to replace it (the installer checks again).
  public var destinationNotAFile = false
  /// Partial data lies beside the destination and this run does not resume
  /// it: removed once the destination is found up to date.
  public var leftoverPartial = false
  /// False when `--only` leaves this task out.
  public var selected = true
  /// Nothing stood at the destination when the plan looked: the bytes a
  /// transfer brings cannot already be there (no second look before install).
  public var destinationMissing = false
  /// The destination was changed on disk since syncfiles installed it: an
  /// install over it changes its bytes, even when they are those installed before.
  public var destinationEdited = false
  /// Its URL is fetched through a proxy (SPEC §9.3): a cache may answer,
  /// and without an explicit `segments` it is fetched as one stream.
  public var throughProxy = false

  init(entry: FileEntry, action: Action, reason: String) {
    self.entry = entry
    self.action = action
    self.reason = reason
  }

  public var id: String { entry.qualifiedID }
  public var runs: Bool { action.runs }
}

public struct DiskCheck: Sendable, Hashable {
  /// The mount point (or nearest existing folder) of the destinations.
  public var path: String
  public var freeBytes: Int64
  public var neededBytes: Int64
  /// Tasks that need room here.
  public var tasks: [String]
  /// Of those, how many have no expected_bytes (counted as 0).
  public var unknownSizes: Int
  public var ok: Bool { neededBytes <= freeBytes }
}

public struct SessionPlan: Sendable {
  public var session: String
  public var now: Timestamp
  public var journal: String
  public var tasks: [PlannedTask]
  public var disk: [DiskCheck]
  public var limits: Limits
  /// Each prefix entry: where its objects came from, and the files it prunes.
  public var prefixes: [PrefixSummary] = []

  // These walk the tasks by index: a `for` or `reduce` over them would copy
  // each task, entry and all, which costs more than the counting.
  public func count(_ a: Action) -> Int { counts[a] ?? 0 }
  /// How many tasks take each action.
  public var counts: [Action: Int] {
    var out: [Action: Int] = [:]
    for i in tasks.indices { out[tasks[i].action, default: 0] += 1 }
    return out
  }
  public var expectedBytes: Int64 {
    var sum: Int64 = 0
    for i in tasks.indices where tasks[i].runs { sum += tasks[i].bytesToTransfer ?? 0 }
    return sum
  }
}
