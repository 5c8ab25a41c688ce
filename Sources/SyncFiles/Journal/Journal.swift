internal import CLinux

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The journal: one append-only file of records, each one line
/// `LENGTH CRC32 JSON\n` after a header line `syncfiles-journal 1`.
/// A record holds the whole latest state of one task, so the last record
/// of a task wins and compaction keeps one record per task.
///
/// A torn or damaged line (bad length, bad checksum, no newline at the end)
/// is skipped when reading; a writer first cuts a torn tail off.
public enum JournalFormat {
  public static let header = "syncfiles-journal 1\n"

  /// The encoded line for one task's record.
  static func line(_ state: TaskState) -> [UInt8] {
    var out: [UInt8] = []
    var scratch = RecordScratch()
    appendLine(state, to: &out, scratch: &scratch)
    return out
  }

  /// The encoded line for one record.
  static func line(_ payload: JSONValue) -> [UInt8] {
    var out: [UInt8] = []
    payload.bytes().withUnsafeBufferPointer { appendLine(body: $0, to: &out) }
    return out
  }

  /// Appends the line of `state`'s record to `out`. The record is written
  /// into `scratch` first, whose room is kept from one record to the next:
  /// a line costs no allocation of its own and one copy (a steady run
  /// writes one for every task; issue 15, W4).
  static func appendLine(_ state: TaskState, to out: inout [UInt8], scratch: inout RecordScratch) {
    guard state.hasCursorRecord else {
      return state.recordBytes().withUnsafeBufferPointer { appendLine(body: $0, to: &out) }
    }
    let room = state.recordRoom
    if scratch.room.count < room { scratch.room = [UInt8](repeating: 0, count: max(room, 2 * scratch.room.count)) }
    scratch.room.withUnsafeMutableBufferPointer { b in
      let n = state.writeRecord(into: b, times: &scratch.times)
      appendLine(body: UnsafeBufferPointer(rebasing: b[..<n]), to: &out)
    }
  }

  /// Appends `LENGTH CRC32 BODY\n`.
  private static func appendLine(body: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
    let crc = CRC32.checksum(UnsafeRawBufferPointer(body))
    JSONValue.writeInt(Int64(body.count), to: &out)
    out.append(0x20)
    Hex.append(UInt64(crc), digits: 8, to: &out)
    out.append(0x20)
    out.append(contentsOf: body)
    out.append(0x0A)
  }

  public struct Contents: Sendable {
    public var tasks: [String: TaskState] = [:]
    /// Records that could not be read (torn tail, damage), skipped.
    public var dropped = 0
    /// Of those, lines with good records after them: damage inside the
    /// file, not a write cut short at its end.
    public var damagedInside = 0
    /// Lines after the last good record: a write cut short (a crash, a full disk).
    public var tornTail: Int { dropped - damagedInside }
    /// The first line was not the header, but records after it checked out.
    public var headerDamaged = false
    /// Records read, including superseded ones.
    public var records = 0
    /// Bytes up to the end of the last good line (where a writer appends).
    public var validLength = 0
  }

  /// Decodes a journal's bytes. Nil when they are not a syncfiles journal.
  public static func decode(_ bytes: [UInt8]) -> Contents? {
    var c = Contents()
    if bytes.isEmpty { return c }
    let h = Array(header.utf8)
    guard bytes.count >= h.count, Array(bytes[0..<h.count]) == h else {
      // A torn header (a crash while creating the file) is an empty journal.
      if bytes.count < h.count, Array(h[0..<bytes.count]) == bytes { return c }
      return decodeUnderDamagedHeader(bytes)
    }
    decodeRecords(bytes, from: h.count, into: &c)
    return c
  }

  /// A first line that is not the header, followed by records whose
  /// checksums hold: our journal with its header damaged (a disk error, a
  /// stray write). Nil when no record checks out: then the file is not
  /// ours, and is never touched.
  static func decodeUnderDamagedHeader(_ bytes: [UInt8]) -> Contents? {
    // A block the disk zeroed (a power cut, a lost write) may cover the
    // header, its end of line and the start of the records after it: the
    // records are read from the first byte past the zeros, the first of
    // them most likely torn.
    var zeros = 0
    while zeros < bytes.count && bytes[zeros] == 0 { zeros += 1 }
    var c = Contents()
    if zeros > 0 {
      decodeRecords(bytes, from: zeros, into: &c)
      guard c.records > 0 else { return nil }
      c.headerDamaged = true
      return c
    }
    guard let nl = bytes.firstIndex(of: 0x0A), nl < 256 else { return nil }
    // Another version's header is intact, not damaged: never rewrite it as this one.
    if bytes[0..<nl].starts(with: Array("syncfiles-journal ".utf8)) { return nil }
    decodeRecords(bytes, from: nl + 1, into: &c)
    guard c.records > 0 else { return nil }
    c.headerDamaged = true
    return c
  }

  /// Reads the records after the header. A task's last record wins, so the
  /// records are framed (length, checksum) in order, then read from the
  /// last: a record whose task a later record already gave is not parsed
  /// at all (a steady journal holds up to four records a task). Should a
  /// record that counts fail to parse (its checksum holds, yet it is not
  /// JSON), every record is read in order instead, the earlier record of its
  /// task winning as it always has.
  static func decodeRecords(_ bytes: [UInt8], from start: Int, into c: inout Contents) {
    var frames: [Range<Int>] = []
    frame(bytes, from: start, into: &c) { body in
      frames.append(body)
      return true
    }
    // A journal is compacted past about four records a task, so about a
    // quarter of its records or more are tasks' latest: the table starts
    // that large instead of growing from nothing (W4: 0.9 M instructions).
    c.tasks.reserveCapacity(frames.count / 4)
    var times = RFC3339Parsed()
    for body in frames.reversed() {
      // Its id read and looked up once: a later record gave its task, or the
      // record in the writer's shape is stored as read, in place (false:
      // read it the general way below).
      let done = bytes.withUnsafeBufferPointer { all -> Bool in
        let b = UnsafeBufferPointer(rebasing: all[body])
        guard let id = TaskState.fastID(b) else { return false }
        if c.tasks[id] != nil { return true }
        guard let t = TaskState.fastRecord(b, times: &times) else { return false }
        c.tasks[id] = t
        return true
      }
      if done { continue }
      guard let r = record(bytes[body]) else {
        c = Contents()
        var tasks: [String: TaskState] = [:]
        frame(bytes, from: start, into: &c) { body in
          guard let r = record(bytes[body]) else { return false }
          if case .task(let t) = r { tasks[t.id] = t }
          return true
        }
        c.tasks = tasks
        return
      }
      if case .task(let t) = r, c.tasks[t.id] == nil { c.tasks[t.id] = t }
    }
  }

  /// Walks the lines, checking each one's length and checksum; `take` is
  /// handed each good line's body and says whether its record reads.
  /// Lines that fail are dropped, and counted as damage inside the file when
  /// a good line follows them, else as a torn tail.
  private static func frame(
    _ bytes: [UInt8], from start: Int, into c: inout Contents, _ take: (Range<Int>) -> Bool
  ) {
    var i = start
    c.validLength = i
    var badSinceGood = 0
    // Through a pointer: a line's fields read in place, with no slice of the
    // array to retain and check (W4: about 1,900 instructions a line before).
    bytes.withUnsafeBufferPointer { b in
      while i < b.count {
        guard let nl = newline(in: b, from: i) else {
          c.dropped += 1  // torn tail: no newline
          break
        }
        defer { i = nl + 1 }
        guard let body = lineBody(b, from: i, to: nl), take(body) else {
          c.dropped += 1
          badSinceGood += 1
          continue
        }
        c.records += 1
        c.validLength = nl + 1
        c.damagedInside += badSinceGood
        badSinceGood = 0
      }
    }
  }

  /// The body of the line `b[start..<end]` when its length and checksum
  /// fields (`LENGTH CRC32 body`) hold for it, else nil.
  private static func lineBody(_ b: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Range<Int>? {
    var s1 = start
    while s1 < end, b[s1] != 0x20 { s1 += 1 }
    guard s1 < end, let len = number(b, start..<s1, radix: 10),
      s1 + 10 <= end, b[s1 + 9] == 0x20,
      let crc = number(b, (s1 + 1)..<(s1 + 9), radix: 16).flatMap(UInt32.init(exactly:))
    else { return nil }
    let body = (s1 + 10)..<end
    guard body.count == len, CRC32.checksum(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[body]))) == crc
    else { return nil }
    return body
  }

  /// The index of the next line end at or after `start` (memchr).
  private static func newline(in b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    guard start < b.count, let base = b.baseAddress, let p = memchr(base + start, 0x0A, b.count - start) else {
      return nil
    }
    return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(p))
  }

  /// What one record's body holds.
  private enum Record {
    case task(TaskState)
    /// Valid JSON that is not a task's record (kept as a record, read as nothing).
    case other
  }

  /// A record's body, or nil when it is not JSON. The writer's own shape is read without a tree.
  private static func record(_ body: ArraySlice<UInt8>) -> Record? {
    if let t = body.withUnsafeBufferPointer(TaskState.fastRecord) { return .task(t) }
    guard let v = try? JSONValue.parse(bytes: body) else { return nil }
    return TaskState(json: v).map(Record.task) ?? .other
  }

  /// A length or checksum field: plain digits are read as bytes; anything
  /// else takes Swift's own integer parsing, as it always has.
  private static func number(_ b: UnsafeBufferPointer<UInt8>, _ field: Range<Int>, radix: Int) -> Int? {
    let slow = { Int(String(decoding: UnsafeBufferPointer(rebasing: b[field]), as: UTF8.self), radix: radix) }
    guard !field.isEmpty, field.count <= 15 else { return slow() }
    var v = 0
    for k in field {
      let d: Int
      switch b[k] {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): d = Int(b[k] - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: d = Int(b[k] - UInt8(ascii: "a")) + 10
      default: return slow()
      }
      v = v * radix + d
    }
    return v
  }
}

extension JournalFormat.Contents {
  /// What a reader says of skipped records, or nil when there were none.
  /// `rewritten`: a writer has already rewritten the journal without them.
  public func damageNote(path: String, rewritten: Bool) -> String? {
    guard dropped > 0 || headerDamaged else { return nil }
    var parts: [String] = []
    if headerDamaged {
      parts.append(
        "its first line is not the journal header, but \(records) record(s) after it check out (\(rewritten ? "rewritten with the header" : "the next apply rewrites it with the header"))"
      )
    }
    if damagedInside > 0 {
      let fate = rewritten ? "rewritten without them" : "the next apply rewrites it without them"
      parts.append(
        "skipped \(damagedInside) damaged record(s) inside the file (changed on disk after they were written; \(fate))")
    }
    if tornTail > 0 {
      let fate = rewritten ? "cut off" : "the next apply cuts it off"
      parts.append(
        "skipped an unfinished last record (a write cut short by a crash, a kill or a full disk; \(fate))")
    }
    return "journal \(path): " + parts.joined(separator: "; ")
  }
}

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
  /// (0.07–0.3 ms at the end of a W7 run, where hooks that did not run
  /// left nothing between the run's two syncs).
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
    contents.records = contents.tasks.count
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

  static func syncFolder(of path: String) {
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

/// An exclusive flock on `JOURNAL.lock`, opened with O_CLOEXEC so hooks and
/// plugins never inherit it. The holder's pid is written inside.
final class JournalLock {
  private let fd: Int32

  private init(fd: Int32) { self.fd = fd }

  static func acquire(journal: String) throws(JournalError) -> JournalLock {
    let path = journal + ".lock"
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .system(doing: "cannot open lock", path: path, errno: Errno(errno)) }
    if flock(fd, LOCK_EX | LOCK_NB) != 0 {
      let pid = holder(fd: fd, path: path)
      close(fd)
      throw .locked(journal: journal, holder: pid)
    }
    ftruncate(fd, 0)
    let text = Array("\(getpid())\n".utf8)
    _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    return JournalLock(fd: fd)
  }

  /// Who holds the lock: the kernel's word (`/proc/locks`, by the lock
  /// file's device and inode), else the pid the holder wrote in the file,
  /// which is stale when another program took the lock.
  private static func holder(fd: Int32, path: String) -> String {
    var st = stat()
    if fstat(fd, &st) == 0, case .success(let b) = FileIO.readAll("/proc/locks", limit: 1 << 20),
      let pid = flockHolder(in: String(decoding: b, as: UTF8.self), device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    {
      return String(pid)
    }
    let written = FileIO.readAll(path, limit: 64).map { String(decoding: $0, as: UTF8.self) }
    return (try? written.get())?.split(separator: "\n").first.map(String.init) ?? "?"
  }

  /// The pid holding a flock on the file (`device`, `inode`) in the text of
  /// `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 22522 fe:00:16220245 0 EOF`:
  /// the device's major and minor in hex, the inode in decimal). Waiters
  /// (`->` lines) hold nothing.
  static func flockHolder(in text: String, device: UInt64, inode: UInt64) -> Int? {
    let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
    let minor = (device & 0xff) | ((device >> 12) & ~0xff)
    for line in text.split(separator: "\n") where !line.contains("->") {
      let f = line.split(separator: " ", omittingEmptySubsequences: true)
      guard f.count >= 6, f[1] == "FLOCK", let pid = Int(f[4]) else { continue }
      let id = f[5].split(separator: ":")
      guard id.count == 3, UInt64(id[0], radix: 16) == major, UInt64(id[1], radix: 16) == minor,
        UInt64(id[2]) == inode
      else { continue }
      return pid
    }
    return nil
  }

  deinit {
    flock(fd, LOCK_UN)
    close(fd)
  }
}

func errnoText() -> String { String(cString: strerror(errno)) }
