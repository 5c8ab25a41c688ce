internal import CLinux
import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A journal opened for writing by the one `apply` that holds its lock.
public final class JournalWriter {
  public let path: String
  public private(set) var contents: JournalFormat.Contents
  private var fd: Int32
  private let lock: JournalLock
  private var size: Int
  /// Compact when the file is this many times larger than one record per task.
  public var compactionFactor = 4
  /// …and at least this large.
  public var compactionFloor = 256 * 1024

  /// The contents came from a `JournalPrefetch` (the file was as it read it).
  public private(set) var usedPrefetch = false
  /// The file was read again under the lock (no settled prefetch vouched for it).
  public private(set) var readAgain = true

  /// What was skipped when the journal was opened, said once (the damage is
  /// repaired by then); nil when the journal was whole.
  public private(set) var recovered: String?

  /// Takes the lock (failing at once if another process holds it), reads the
  /// journal, and cuts off any torn tail so appends start on a clean line.
  /// Damage inside the file is rewritten away at once (a compaction), so it
  /// is reported by this run only.
  /// `prefetched`: a decoding made while the manifests loaded, used when
  /// the bytes read under the lock are the ones it decoded.
  public init(path: String, prefetched: JournalPrefetch? = nil) throws(JournalError) {
    self.path = path
    try JournalWriter.makeFolder(of: path)
    lock = try JournalLock.acquire(journal: path)
    // A compaction killed before its rename leaves this behind: it is not the journal.
    unlink(path + ".compact")
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .system(doing: "cannot open journal", path: path, errno: Errno(errno)) }
    self.fd = fd
    let (c, fileSize) = try Self.read(path, fd: fd, prefetched: prefetched)
    usedPrefetch = c.usedPrefetch
    readAgain = c.readAgain
    contents = c.contents
    size = contents.validLength
    if contents.validLength == 0 {
      size = 0
      ftruncate(fd, 0)
      try append(Array(JournalFormat.header.utf8))
    } else if contents.validLength < fileSize {
      unsynced = true
      guard ftruncate(fd, off_t(contents.validLength)) == 0 else {
        throw .system(doing: "cannot cut the torn tail of", path: path, errno: Errno(errno))
      }
    }
    recovered = contents.damageNote(path: path, rewritten: true)
    if contents.damagedInside > 0 || contents.headerDamaged { try compact() }
    keepReserve()
  }

  /// Room for `count` tasks' states before the run's records come: on a
  /// first run the table doubled as they came, on the runner's thread.
  public func reserveStates(_ count: Int) {
    contents.tasks.reserveCapacity(count)
  }

  /// The journal's contents and its size: a settled prefetch's decoding when
  /// the file is unchanged since (not read again), else the file's bytes,
  /// decoded here unless the prefetch read exactly them.
  private static func read(_ path: String, fd: Int32, prefetched: JournalPrefetch?) throws(JournalError) -> (
    (contents: JournalFormat.Contents, usedPrefetch: Bool, readAgain: Bool), Int
  ) {
    let now = FileIdentity(fd: fd)
    if let now, let c = prefetched?.contents(path: path, unchangedSince: now) {
      return ((c, true, false), Int(now.size))
    }
    let bytes: [UInt8]
    switch FileIO.readAll(fd: fd, size: now.map { Int($0.size) }, limit: Int.max) {
    case .success(let b): bytes = b
    case .failure(let e):
      close(fd)
      throw .unreadable(path: path, why: e.message)
    }
    let early = prefetched?.contents(path: path, matching: bytes)
    guard let c = early ?? JournalFormat.decode(bytes) else {
      close(fd)
      throw .notAJournal(path: path, refusing: true)
    }
    return ((c, early != nil, true), bytes.count)
  }

  deinit {
    try? flush()
    close(fd)
  }

  /// Records not yet written (`record(_:flush: false)`), in order.
  private var pending: [UInt8] = []

  public var holdsRecords: Bool { !pending.isEmpty }

  /// Writes the records held back, in one write.
  public func flush() throws(JournalError) {
    guard !pending.isEmpty else { return }
    let bytes = pending
    pending.removeAll(keepingCapacity: true)
    try append(bytes)
  }

  private func append(_ bytes: [UInt8]) throws(JournalError) {
    unsynced = true
    guard FileIO.writeAll(fd, bytes, at: size) else {
      throw .system(doing: "cannot write journal", path: path, errno: Errno(errno))
    }
    size += bytes.count
    if reservedTo - size < Self.reserve / 2 { keepReserve() }
  }

  /// Blocks kept past the journal's end (`fallocate` keeping its size), so
  /// that a run's records still go in when the disk fills under it: a full
  /// disk used to cut the journal short and lose the run's failures, which
  /// the next `status --check` and metrics then did not see. Best effort:
  /// file systems without `fallocate` get none.
  static let reserve = 64 << 10
  private var reservedTo = 0

  private func keepReserve() {
    reservedTo = sf_reserve(fd, Int64(size), Int64(Self.reserve)) == 0 ? size + Self.reserve : size
  }

  /// Written (or cut) since the last `fdatasync`. A sync with nothing new
  /// skips the call: on ext4 it still costs a flush of the disk's cache
  /// (as at the end of a run, when hooks that did not run left nothing
  /// between the run's two syncs).
  private var unsynced = false
  /// `fdatasync` calls made, for tests.
  private(set) var datasyncs = 0

  /// Records a task's new state (appended; call `sync` to make it durable).
  /// `flush: false` holds the line back until the next `flush`, `sync` or
  /// a record that flushes (one write for a batch of records; order is kept).
  public func record(_ state: TaskState, flush now: Bool = true) throws(JournalError) {
    try update(state.id, flush: now) { $0 = state }
  }

  /// Applies `change` to a task's latest state where the journal holds it
  /// (no copy of the state out and back) and records the result, as `record`.
  public func update(_ id: String, flush now: Bool = true, _ change: (inout TaskState) -> Void) throws(JournalError) {
    Self.change(&contents.tasks[id, default: TaskState(id: id)], by: change, line: &pending, scratch: &scratch)
    contents.records += 1
    if now || pending.count >= 64 * 1024 { try flush() }
  }

  /// Records a prefix entry's listing, in place of the last one (appended,
  /// flushed; `sync` makes it durable).
  public func record(listing: PrefixListing, of id: String) throws(JournalError) {
    contents.listings[id] = listing
    contents.records += 1
    pending += JournalFormat.line(listing.record(id: id))
    try flush()
  }

  /// Room for writing one record before its line is framed (`JournalFormat.appendLine`).
  private var scratch = RecordScratch()

  /// Changes `state` where it is held, and appends its record's line to `line`.
  private static func change(
    _ state: inout TaskState, by change: (inout TaskState) -> Void, line: inout [UInt8], scratch: inout RecordScratch
  ) {
    change(&state)
    JournalFormat.appendLine(state, to: &line, scratch: &scratch)
  }

  /// Makes every record so far durable.
  public func sync() throws(JournalError) {
    try flush()
    guard unsynced else { return }
    datasyncs += 1
    try Syscall.check({ fdatasync(fd) }) { e in JournalError.system(doing: "cannot sync journal", path: path, errno: e)
    }
    unsynced = false
  }

  public var needsCompaction: Bool {
    size > compactionFloor && contents.records > compactionFactor * max(1, contents.tasks.count)
  }

  /// Rewrites the journal with one record per task: write a new file, fsync
  /// it, rename it over the journal, fsync the folder. A kill at any point
  /// leaves either the old journal or the new one.
  public func compact() throws(JournalError) {
    // The new file holds every state, those held back included.
    pending.removeAll()
    let tmp = path + ".compact"
    let nfd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard nfd >= 0 else { throw .system(doing: "cannot create", path: tmp, errno: Errno(errno)) }
    var out = Array(JournalFormat.header.utf8)
    for id in contents.tasks.keys.sorted() {
      JournalFormat.appendLine(contents.tasks[id]!, to: &out, scratch: &scratch)
    }
    for id in contents.listings.keys.sorted() { out += JournalFormat.line(contents.listings[id]!.record(id: id)) }
    guard FileIO.writeAll(nfd, out) else {
      let e = Errno(errno)
      close(nfd)
      unlink(tmp)
      throw .system(doing: "cannot write", path: tmp, errno: e)
    }
    // After a failed fsync the pages may be dropped: never retry, discard the file.
    try Syscall.check({ fsync(nfd) }) { e in
      close(nfd)
      unlink(tmp)
      return JournalError.system(doing: "cannot sync", path: tmp, errno: e)
    }
    try Syscall.check({ rename(tmp, path) }) { e in
      close(nfd)
      unlink(tmp)
      return JournalError.system(doing: "cannot replace", path: path, errno: e)
    }
    JournalWriter.syncFolder(of: path)
    close(fd)
    fd = nfd
    size = out.count
    keepReserve()
    unsynced = false  // fsynced above, renamed, its folder synced
    contents.records = contents.tasks.count + contents.listings.count
    contents.dropped = 0
    contents.damagedInside = 0
    contents.headerDamaged = false
  }

  static func makeFolder(of path: String) throws(JournalError) {
    let folder = Paths.folder(of: path)
    guard FileIO.makeFolders(folder) else {
      throw .system(doing: "cannot create folder", path: folder, errno: Errno(errno), detail: " for the journal")
    }
  }

  package static func syncFolder(of path: String) {
    let dfd = open(Paths.folder(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if dfd >= 0 {
      fsync(dfd)
      close(dfd)
    }
  }
}

/// Reads a journal without taking its lock (for `plan` and `status`).
public enum JournalReader {
  public static func read(path: String) throws(JournalError) -> JournalFormat.Contents {
    var st = stat()
    if stat(path, &st) != 0 && errno == ENOENT { return JournalFormat.Contents() }
    switch FileIO.readAll(path, limit: Int.max) {
    case .success(let bytes):
      guard let c = JournalFormat.decode(bytes) else {
        throw .notAJournal(path: path, refusing: false)
      }
      return c
    case .failure(let e):
      throw .unreadable(path: path, why: e.message)
    }
  }
}
