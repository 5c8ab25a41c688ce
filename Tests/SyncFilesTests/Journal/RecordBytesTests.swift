import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Task records written and read without a JSON tree (issue 15) agree with
/// `TaskState.json` and `TaskState(json:)`, which define the format.
@Suite struct RecordBytesTests {
  /// States that use every key, each optional both present and absent, and
  /// strings that need escapes.
  static func states() -> [TaskState] {
    var out: [TaskState] = [TaskState(id: "m/only-id")]
    for n in 0..<48 {
      var t = TaskState(id: n % 5 == 0 ? "m/é \"q\" \\ /\(n)" : "m/f\(n)")
      if n % 2 == 0 { t.fingerprint = "0123456789abcdef" }
      if n % 3 != 0 { t.lastCheck = Timestamp(seconds: 1_800_000_000 + Int64(n)) }
      if n % 4 != 1 { t.lastSuccess = Timestamp(seconds: 1_700_000_000 - Int64(n)) }
      t.lastOutcome = [nil, .installed, .unchanged, .failed, .interrupted][n % 5]
      if n % 6 == 1 { t.lastError = "HTTP 503 \"busy\"\n\tsecond line \u{1}\u{7F}\u{2028} \\ end" }
      if n % 7 != 0 { t.lastBytes = n % 2 == 0 ? Int64(n) * 1_000_003 : 0 }
      if n % 3 == 2 { t.httpStatus = [200, 304, 206][n % 3] }
      if n % 4 == 0 {
        t.installed = .init(
          size: Int64(n) << 20, mtimeNs: 1_795_490_122_105_097_403 - Int64(n),
          etag: n % 8 == 0 ? "\"6b050148-4000\"" : nil,
          lastModified: n % 3 == 0 ? "Tue, 24 Nov 2026 03:15:20 GMT" : nil,
          sha256: n % 5 == 0 ? nil : String(repeating: "4f", count: 32), dateIsStrong: n % 2 == 0)
      }
      if n % 5 == 3 {
        t.partial = .init(
          path: "/srv/d/.f\(n).syncfiles-partial", offset: Int64(n) * 4096, totalBytes: n % 2 == 0 ? nil : 1 << 30,
          etag: n % 3 == 0 ? nil : "W/\"w\"", lastModified: "Tue, 24 Nov 2026 03:15:20 GMT", dateIsStrong: n % 2 == 1)
      }
      t.failures = n % 4
      if n % 9 == 4 { t.backoffUntil = Timestamp(seconds: 1_900_000_000) }
      t.changeHookPending = n % 2 == 1
      t.completeHookPending = n % 3 == 1
      out.append(t)
    }
    return out
  }

  static func fast(_ bytes: [UInt8]) -> TaskState? { bytes.withUnsafeBufferPointer(TaskState.fastRecord) }

  @Test func writtenBytesAreTheTreesBytes() {
    for t in Self.states() {
      #expect(t.recordBytes() == t.json.bytes(), "\(t.id)")
    }
  }

  @Test func theWritersShapeIsReadWithoutATreeAsTheTreeReadsIt() throws {
    for t in Self.states() {
      let bytes = t.recordBytes()
      let fast = Self.fast(bytes)
      // Only a \u escape (a control character in an error) sends the writer's own shape the general way.
      let escaped = bytes.indices.dropLast().contains { bytes[$0] == 0x5C && bytes[$0 + 1] == UInt8(ascii: "u") }
      #expect((fast == nil) == escaped, "\(String(decoding: bytes, as: UTF8.self))")
      #expect(fast == nil || fast == t)
      #expect(TaskState(json: try JSONValue.parse(bytes: bytes[...])) == t)
    }
  }

  /// Whatever the fast path takes, the general reader takes too, as the same state.
  static func agrees(_ bytes: [UInt8]) -> Bool {
    guard let fast = fast(bytes) else { return true }
    guard let v = try? JSONValue.parse(bytes: bytes[...]) else { return false }
    return TaskState(json: v) == fast
  }

  @Test func mutatedRecordsAreTakenOnlyWhenTheTreeAgrees() {
    var rng = SplitMix(seed: 15)
    let records = Self.states().map { $0.recordBytes() }
    var taken = 0
    for k in 0..<3000 {
      var b = records[k % records.count]
      for _ in 0...(k % 3) where !b.isEmpty {
        let at = Int(rng.next() % UInt64(b.count))
        switch rng.next() % 4 {
        case 0: b[at] = UInt8(truncatingIfNeeded: rng.next())
        case 1: b.remove(at: at)
        case 2: b.insert(Array(#"0123456789",:{}[]"\-.e tu"#.utf8)[Int(rng.next() % 23)], at: at)
        default: b = Array(b[..<at])
        }
      }
      #expect(Self.agrees(b), "\(String(decoding: b, as: UTF8.self))")
      if Self.fast(b) != nil { taken += 1 }
    }
    #expect(taken > 100)  // the mutations reach the fast path, not only its refusals
  }

  /// Strings are scanned eight bytes at a time, and copied in runs between
  /// their escapes both ways: an escape (or a byte past 0x7F) at every
  /// offset around those eight bytes, in every string field, and times
  /// read from the bytes in place.
  @Test func escapesAtEveryOffsetRoundTrip() throws {
    for c in ["\"", "\\", "\n", "/", "é", "\"\""] {
      for k in 0..<18 {
        let s = String(repeating: "a", count: k) + c + "0123456789abcdef" + c + "z"
        var t = TaskState(id: "m/" + s)
        t.fingerprint = s
        t.lastError = s
        t.lastCheck = Timestamp(seconds: 1_800_000_000 + Int64(k))
        t.backoffUntil = Timestamp(seconds: 253_402_300_799)
        t.installed = .init(size: 1, mtimeNs: 2, etag: s, lastModified: s, sha256: s, dateIsStrong: true)
        t.partial = .init(path: "/p/" + s, offset: 3, totalBytes: 4, etag: s, lastModified: s, dateIsStrong: false)
        let bytes = t.recordBytes()
        #expect(bytes == t.json.bytes(), "\(s)")
        #expect(Self.fast(bytes) == t, "\(s)")
      }
    }
  }

  /// Lines appended one after another through one scratch room, records
  /// long and short in turn and a segmented one among them, are each the
  /// line of its tree's bytes, and read back as the states written.
  @Test func linesThroughOneScratchAreEachTheirRecordsLine() {
    var states = Self.states()
    var long = TaskState(id: "m/long")
    long.lastError = String(repeating: "\"quoted\" \\ ", count: 400)
    var segmented = TaskState(id: "m/seg")
    segmented.partial = .init(path: "/p", offset: 0, totalBytes: 100)
    segmented.partial?.ranges = ByteRanges([0..<10, 50..<60])
    states.insert(long, at: 3)
    states.insert(segmented, at: 10)
    states.append(TaskState(id: "m/short"))
    var out: [UInt8] = []
    var scratch = RecordScratch()
    var expected: [UInt8] = []
    for t in states {
      JournalFormat.appendLine(t, to: &out, scratch: &scratch)
      let body = t.json.bytes()
      let crc = String(CRC32.checksum(body), radix: 16)
      expected += Array("\(body.count) \(String(repeating: "0", count: 8 - crc.count))\(crc) ".utf8) + body + [0x0A]
    }
    #expect(out == expected)
    let read = JournalFormat.decode(Array(JournalFormat.header.utf8) + out)
    #expect(read?.records == states.count && read?.dropped == 0)
    for t in states { #expect(read?.tasks[t.id] == t, "\(t.id)") }
  }

  /// Records written in turn through one scratch, whose times repeat,
  /// change, come back, and leave the years the kept text serves (before
  /// 1970, after 9999), each hold their own times (the writer keeps the last
  /// time's text for the next record).
  @Test func timesThroughOneScratchAreEachTheirRecordsOwn() {
    let seconds: [Int64] = [
      1_800_000_000, 1_800_000_000, 1_800_000_001, 1_800_000_000, 0, -1, 253_402_300_799, 253_402_300_800,
      -62_167_219_200, -62_167_219_201, 1_800_000_000, 1_800_086_400, 1_800_086_400,
    ]
    var scratch = RecordScratch()
    for (k, s) in seconds.enumerated() {
      var t = TaskState(id: "m/t\(k)")
      t.lastCheck = Timestamp(seconds: s)
      t.lastSuccess = Timestamp(seconds: seconds[(k + 1) % seconds.count])
      t.backoffUntil = Timestamp(seconds: s)
      var out: [UInt8] = []
      JournalFormat.appendLine(t, to: &out, scratch: &scratch)
      #expect(out == JournalFormat.line(t.json), "\(k): \(s)")
    }
  }

  /// A journal whose records' times repeat, change, come back, and include
  /// a date that does not exist (20 bytes, like a valid one) reads back each
  /// record's own times (the reader keeps the last time it parsed).
  @Test func timesReadInTurnAreEachTheirRecordsOwn() throws {
    let seconds: [Int64] = [
      1_800_000_000, 1_800_000_000, 1_800_000_001, 1_800_000_000, 0, 1_700_000_000, 1_800_000_000,
    ]
    var lines = Array(JournalFormat.header.utf8)
    var written: [TaskState] = []
    for (k, s) in seconds.enumerated() {
      var t = TaskState(id: "m/t\(k)")
      t.lastCheck = Timestamp(seconds: s)
      t.lastSuccess = Timestamp(seconds: seconds[(k + 3) % seconds.count])
      written.append(t)
      lines += JournalFormat.line(t)
      // A record whose date does not exist, between each two: not read as the time before it.
      let bad = #"{"t":"task","id":"m/bad\#(k)","last_check":"2026-02-30T00:00:00Z"}"#
      lines += JournalFormat.line(try JSONValue.parse(bytes: Array(bad.utf8)[...]))
      // And one whose time differs from the record's before only in its last byte.
      let near = #"{"t":"task","id":"m/near\#(k)","last_check":"\#(String(t.lastCheck!.rfc3339.dropLast()))X"}"#
      lines += JournalFormat.line(try JSONValue.parse(bytes: Array(near.utf8)[...]))
    }
    let read = try #require(JournalFormat.decode(lines))
    for t in written { #expect(read.tasks[t.id] == t, "\(t.id)") }
    for k in seconds.indices {
      #expect(read.tasks["m/bad\(k)"]?.lastCheck == nil, "bad \(k)")
      #expect(read.tasks["m/near\(k)"]?.lastCheck == nil, "near \(k)")
    }
  }

  /// A segmented partial's ranges take the tree both ways.
  @Test func segmentedRangesTakeTheTree() {
    var t = TaskState(id: "m/seg")
    t.partial = .init(path: "/p", offset: 0, totalBytes: 100)
    t.partial?.ranges = ByteRanges([0..<10, 50..<60])
    #expect(t.recordBytes() == t.json.bytes())
    #expect(Self.fast(t.recordBytes()) == nil)
    let lines = Array(JournalFormat.header.utf8) + JournalFormat.line(t)
    #expect(JournalFormat.decode(lines)?.tasks["m/seg"] == t)
  }

  /// Valid JSON of another shape is left to the general reader, which reads it
  /// as before; invalid JSON is never taken by the fast path.
  @Test func otherShapesAreLeftToTheGeneralReader() throws {
    let valid = [
      #"{"t":"task","id":"a", "bytes":1}"#,  // white space
      #"{"t":"task","id":"a","bytes":1,"fp":"x"}"#,  // keys out of order
      #"{"t":"task","id":"a","fp":"x","fp":"y"}"#,  // a key twice: the first wins in the tree
      #"{"t":"task","id":"\u0041"}"#,  // \u escape
      #"{"t":"task","id":"a","bytes":1.0}"#,  // an integral double
      #"{"t":"task","id":"a","bytes":"1"}"#,  // another type
      #"{"t":"task","id":"a","bytes":12345678901234567890}"#,  // past Int64
      #"{"t":"task","id":"a","bytes":-9223372036854775808}"#,  // Int64.min: its magnitude is read the general way
      #"{"t":"task","id":"a","extra":[1,{"b":null}]}"#,  // an unknown key
      #"{"t":"task","id":"a","installed":{"mtime_ns":1,"size":2}}"#,
      #"{"t":"task","id":"a","installed":{"size":2}}"#,  // not installed, in the tree
      #"{"t":"note","id":"a"}"#,
    ]
    for text in valid {
      let bytes = Array(text.utf8)
      #expect(Self.fast(bytes) == nil, "\(text)")
      let lines = Array(JournalFormat.header.utf8) + JournalFormat.line(try JSONValue.parse(bytes: bytes[...]))
      let c = try #require(JournalFormat.decode(lines))
      #expect(c.records == 1 && c.dropped == 0, "\(text)")
    }
    let invalid = [
      #"{"t":"task","id":"a","fp":"x"#, #"{"t":"task","id":"a","fp":"a"#,
      "{\"t\":\"task\",\"id\":\"a\",\"fp\":\"a\u{1}\"}",
      #"{"t":"task","id":"a","bytes":01}"#, #"{"t":"task","id":"a","bytes":-}"#, #"{"t":"task","id":"a",}"#,
      #"{"t":"task","id":"a"}x"#, #"{"t":"task","id":"a","on_change_pending":tru}"#,
      #"{"t":"task","id":"a\x"}"#, #"{"t":"task","id":"a","installed":{"size":1,"mtime_ns":2}"#,
    ]
    for text in invalid {
      #expect(Self.fast(Array(text.utf8)) == nil, "\(text)")
    }
  }
}
