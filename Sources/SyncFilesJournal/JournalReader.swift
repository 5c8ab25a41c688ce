internal import CLinux
import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reading a journal: records checked line by line, the damaged skipped.
extension JournalFormat {
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
  package static func decodeUnderDamagedHeader(_ bytes: [UInt8]) -> Contents? {
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
  package static func decodeRecords(_ bytes: [UInt8], from start: Int, into c: inout Contents) {
    var frames: [Range<Int>] = []
    frame(bytes, from: start, into: &c) { body in
      frames.append(body)
      return true
    }
    // A journal is compacted past about four records a task, so about a
    // quarter of its records or more are tasks' latest: the table starts
    // that large instead of growing from nothing (a steady run reads every record).
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
        var listings: [String: PrefixListing] = [:]
        frame(bytes, from: start, into: &c) { body in
          guard let r = record(bytes[body]) else { return false }
          switch r {
          case .task(let t): tasks[t.id] = t
          case .listing(let id, let l): listings[id] = l
          case .other: break
          }
          return true
        }
        c.tasks = tasks
        c.listings = listings
        return
      }
      switch r {
      case .task(let t) where c.tasks[t.id] == nil: c.tasks[t.id] = t
      case .listing(let id, let l) where c.listings[id] == nil: c.listings[id] = l
      default: break
      }
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
    // array to retain and check (a steady run reads every line).
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
    /// The last listing of a prefix entry (SPEC §9.4), by the entry's id.
    case listing(String, PrefixListing)
    /// Valid JSON that is not a task's record (kept as a record, read as nothing).
    case other
  }

  /// A record's body, or nil when it is not JSON. The writer's own shape is read without a tree.
  private static func record(_ body: ArraySlice<UInt8>) -> Record? {
    if let t = body.withUnsafeBufferPointer(TaskState.fastRecord) { return .task(t) }
    guard let v = try? JSONValue.parse(bytes: body) else { return nil }
    if let t = TaskState(json: v) { return .task(t) }
    if let (id, l) = PrefixListing.record(json: v) { return .listing(id, l) }
    return .other
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
