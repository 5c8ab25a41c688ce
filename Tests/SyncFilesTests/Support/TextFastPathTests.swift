import Foundation
import Testing

@testable import SyncFiles

/// The byte-level readers and writers on the steady-state path (issue 15)
/// give the same answers as the general rules they shortcut.
@Suite struct TextFastPathTests {
  @Test func httpDatesAtFixedPlacesAndOtherwise() {
    let t = Timestamp(year: 1994, month: 11, day: 6, hour: 8, minute: 49, second: 37)
    #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == t)
    // Not the 29-byte form: read by the general rule, the same instant.
    #expect(HTTPDate.parse("Sun, 6 Nov 1994 08:49:37 GMT") == t)
    #expect(HTTPDate.parse("Sunday, 06 Nov 1994 08:49:37 GMT") == t)
    #expect(HTTPDate.parse(HTTPDate.format(Timestamp(seconds: 1_795_461_263))) == Timestamp(seconds: 1_795_461_263))
    for bad in [
      "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:49:37 GMT",
      "Sun, 06 Xyz 1994 08:49:37 GMT", "Sun, 06 Nov 0000 08:49:37 GMT", "Sun, 06 Nov 1994 08-49-37 GMT",
      "Sun, +6 Nov 1994 08:49:37 GMT", "Sun,x06 Nov 1994 08:49:37 GMT", "",
    ] {
      #expect(HTTPDate.parse(bad) == nil, "\(bad)")
    }
  }

  @Test func rfc3339WritesAndReadsBack() {
    for s: Int64 in [0, 59, 86_399, 951_782_400, 1_795_461_263, 253_402_300_799] {
      let t = Timestamp(seconds: s)
      #expect(Timestamp.parseRFC3339(t.rfc3339) == t, "\(t.rfc3339)")
    }
    #expect(Timestamp(seconds: 0).rfc3339 == "1970-01-01T00:00:00Z")
    #expect(Timestamp(year: 2026, month: 3, day: 4, hour: 5, minute: 6, second: 7).rfc3339 == "2026-03-04T05:06:07Z")
    #expect(Timestamp.parseRFC3339("2026-03-04t05:06:07+01:30")?.rfc3339 == "2026-03-04T03:36:07Z")
    // Years outside 0...9999 as Swift prints them, the rest as always.
    #expect(Timestamp(seconds: 253_402_300_800).rfc3339 == "10000-01-01T00:00:00Z")
    #expect(Timestamp(seconds: -62_167_219_201).rfc3339 == "-1-12-31T23:59:59Z")
    #expect(Timestamp(seconds: -62_135_596_800).rfc3339 == "0001-01-01T00:00:00Z")
  }

  @Test func jsonNumbersAndStringsTakeTheShortWayCorrectly() throws {
    for i: Int64 in [0, 7, -7, 999_999_999_999_999_999, -999_999_999_999_999_999, .max, .min] {
      #expect(JSONValue.int(i).serialized() == String(i))
      #expect(try JSONValue.parse(String(i)) == .int(i))
    }
    // Past Int64: a double, as before.
    #expect(try JSONValue.parse("92233720368547758070") == .double(9.223_372_036_854_775_807e19))
    #expect(try JSONValue.parse(#""plain/path?x=1""#) == .string("plain/path?x=1"))
    #expect(try JSONValue.parse(#""a\"b""#) == .string("a\"b"))
    #expect(JSONValue.string("line\u{2028}sep\u{7F}").serialized() == #""line\u2028sep\u007f""#)
    // The escaping way, byte by byte (an ETag's quotes take it), against the
    // rule character by character: other 0xE2 characters pass as they are.
    // Each character that takes an escape (or a look: 0xE2, any byte past
    // 0x7F) at every offset around the eight bytes scanned at a time.
    let awkward = ["\"", "\\", "\n", "\u{1}", "\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}", "\u{2027}", "é", "🎉"]
    let shifted = awkward.flatMap { c in
      (0..<18).map { k in String(repeating: "a", count: k) + c + String(repeating: "0123456789abcdef", count: 2) }
    }
    for s in [
      #""6543a1b2-4000""#, "W/\"x\"", "a\\b\n\r\t\u{1}\u{1F}\u{7F}", "€ \u{2029} \u{2027} 🎉\"", "\u{E2}\"", "\"",
      String(repeating: "f", count: 64), "",
    ] + shifted {
      var expected = "\""
      for c in s.unicodeScalars {
        switch c {
        case "\"": expected += "\\\""
        case "\\": expected += "\\\\"
        case "\n": expected += "\\n"
        case "\r": expected += "\\r"
        case "\t": expected += "\\t"
        case _ where c.value < 0x20 || c.value == 0x7F || c.value == 0x2028 || c.value == 0x2029:
          expected +=
            "\\u" + String(repeating: "0", count: 4 - String(c.value, radix: 16).count) + String(c.value, radix: 16)
        default: expected.unicodeScalars.append(c)
        }
      }
      #expect(JSONValue.string(s).serialized() == expected + "\"", "\(s)")
      // Through a cursor into room sized beforehand, the same bytes.
      let viaCursor = [UInt8](unsafeUninitializedCapacity: 6 * s.utf8.count + 2) { room, count in
        var cursor = ByteCursor(room)
        JSONValue.writeString(s, to: &cursor)
        count = cursor.count
      }
      #expect(String(decoding: viaCursor, as: UTF8.self) == expected + "\"", "\(s)")
      #expect(try JSONValue.parse(JSONValue.string(s).serialized()) == .string(s))
    }
    #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse("\"a\u{1}b\"") }
    let nested = JSONValue.object([("a", .array([])), ("o", .object([("k", .int(-1))]))])
    #expect(nested.serialized(pretty: true) == "{\n  \"a\": [],\n  \"o\": {\n    \"k\": -1\n  }\n}")
  }

  @Test func originsOfURLs() {
    #expect(RemoteProbe.origin(of: "HTTP://Example.COM:8080/x?y") == "http://example.com:8080")
    #expect(RemoteProbe.origin(of: "https://user:pw@Host.example/x") == "https://host.example:443")
    #expect(RemoteProbe.origin(of: "http://h.example#frag") == "http://h.example:80")
    #expect(RemoteProbe.origin(of: "http://[::1]/a") == "http://[::1]:80")
    #expect(RemoteProbe.origin(of: "http://[::1]:81/a") == "http://[::1]:81")
    #expect(RemoteProbe.origin(of: "not a url") == "")
  }

  @Test func headerLookupIgnoresCaseAndTakesTheLast() {
    let lines = ["ETags: no\r\n", "etag: \"a\"\r\n", "Content-Length:  12 \r\n", "ETAG:\t\"b\"\r\n", "X-Ünï: v\r\n"]
    #expect(headerValue("ETag", in: lines) == "\"b\"")
    #expect(headerValue("content-length", in: lines) == "12")
    #expect(headerValue("Date", in: lines) == nil)
    #expect(headerValue("ETa", in: lines) == nil)
    #expect(headerValue("X-Ünï", in: lines) == "v")
    #expect("  \t a b \r\n".trimmingWhitespace() == "a b")
    #expect(" \r\n".trimmingWhitespace() == "")
  }

  /// The byte scans the decoder uses on each entry (Support/Bytes.swift)
  /// answer as the character rules they replace, on strings and substrings.
  @Test func byteScansAgreeWithTheCharacterRules() {
    for s in ["", "a", "https://h/${X}", "ünï ${", "x\u{7F}", "tab\there", String(repeating: "é", count: 40)] {
      #expect(s.containsByte(where: { $0 == 0x24 }) == s.contains("$"), "\(s)")
      #expect(
        s.containsByte(where: { $0 <= 0x20 || $0 == 0x7F })
          == s.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F })
      let sub = s.dropFirst()
      #expect(sub.containsByte(where: { $0 == 0x24 }) == sub.contains("$"))
      for other in ["", "a", s, s + "x", String(s.dropLast())] {
        let equal = Array(other.utf8).withUnsafeBufferPointer { s.hasBytes($0) }
        #expect(equal == (s == other), "\(s) \(other)")
      }
    }
    #expect("Data.Example.ORG".lowercasedIfNeeded() == "data.example.org")
    #expect("data.example.org".lowercasedIfNeeded() == "data.example.org")
    #expect("ÜNÏ".lowercasedIfNeeded() == "ünï")
    for (text, trimmed) in [
      ("4KiB", "4KiB"), (" 4KiB", "4KiB"), ("4KiB\t", "4KiB"), (" \t ", ""), ("", ""), ("a b", "a b"),
    ] {
      #expect(text.trimmingSpaces() == trimmed, "'\(text)'")
      #expect(text[...].trimmingSpaces() == trimmed)
    }
    #expect(ByteSize.parse(" 4.5KiB\t") == .success(4608))
  }

  /// A partial's path made in one allocation is the one folder and name make.
  @Test func aSiblingPathIsFolderSlashPrefixNameSuffix() {
    for path in ["", "/", "x", "/x", "//x", "a/", "/a/b.bin", "a/b", "/var/tmp/w5/dest/d000/f0.bin", "/dé/ünï.txt"] {
      let old = Paths.folder(of: path) + "/" + "." + Paths.fileName(of: path) + ".syncfiles-partial"
      #expect(Paths.sibling(of: path, prefix: ".", suffix: ".syncfiles-partial") == old, "\(path)")
      #expect(
        Paths.sibling(of: path, prefix: "", suffix: "") == Paths.folder(of: path) + "/" + Paths.fileName(of: path))
    }
    #expect(PartialFile.path(for: "/srv/data/f.csv") == "/srv/data/.f.csv.syncfiles-partial")
  }

  /// A partial's name made in one allocation is the text `+` made.
  @Test func aDecoratedNameIsPrefixNameSuffix() {
    for name in ["", "x", "f.bin", "dé ünï.txt", String(repeating: "n", count: 255)] {
      #expect(Paths.decorated(name, prefix: ".", suffix: ".syncfiles-partial") == "." + name + ".syncfiles-partial")
      #expect(Paths.decorated(name, prefix: "", suffix: "") == name)
      #expect(PartialFile.partialName(for: name) == "." + name + PartialFile.suffix)
    }
    #expect(PartialFile.suffix == ".syncfiles-partial")
  }

  /// A path or id joined in one allocation is the same text as `+` makes.
  @Test func joinedInOneAllocationAsPlusJoins() {
    let parts = ["", "/", "a", "/var/tmp/w5/dest", "dést/ünï", String(repeating: "x", count: 300)]
    for a in parts {
      for b in parts {
        #expect(String(a, UInt8(ascii: "/"), b) == a + "/" + b)
        #expect(String(a, nil, b) == a + b)
        #expect(String(a, nil, b).utf8.count == a.utf8.count + b.utf8.count)
      }
    }
  }

  /// The engine's one-pass fields give what `headerValue` gives for every
  /// name it reads: any case, the last field wins, the value trimmed.
  /// Keys are found by hash and by the owner's comparison: equal hashes
  /// (forced here) do not confuse keys, and the table keeps every key as it grows.
  @Test func byteKeyTableFindsEachKeyThroughCollisionsAndGrowth() {
    let keys = (0..<300).map { "/srv/d\($0 % 7)/f\($0)" }
    var table = ByteKeyTable()
    var colliding = ByteKeyTable()
    for (n, k) in keys.enumerated() {
      k.withUTF8Bytes { bytes in
        let h = ByteKeyTable.hash(bytes)
        #expect(table.find(hash: h) { keys[$0].hasBytes(bytes) } == nil)
        table.insert(hash: h, number: n)
        // Every key under one hash: only the comparison tells them apart.
        #expect(colliding.find(hash: 3) { keys[$0].hasBytes(bytes) } == nil)
        colliding.insert(hash: 3, number: n)
      }
    }
    #expect(table.count == 300 && colliding.count == 300)
    for (n, k) in keys.enumerated() {
      k.withUTF8Bytes { bytes in
        #expect(table.find(hash: ByteKeyTable.hash(bytes)) { keys[$0].hasBytes(bytes) } == n)
        #expect(colliding.find(hash: 3) { keys[$0].hasBytes(bytes) } == n)
      }
    }
    "/srv/d1".withUTF8Bytes { bytes in
      #expect(table.find(hash: ByteKeyTable.hash(bytes)) { keys[$0].hasBytes(bytes) } == nil)
    }
  }

  @Test func responseFieldsAgreeWithHeaderLookup() {
    let blocks: [[String]] = [
      ["ETags: no\r\n", "etag: \"a\"\r\n", "Content-Length:  12 \r\n", "ETAG:\t\"b\"\r\n"],
      ["Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n", "LAST-modified:Sun, 06 Nov 1994 08:49:37 GMT\n"],
      ["Content-Range: bytes 0-9/10\r\n", "Retry-After: 5\r\n", "Transfer-Encoding: chunked\r\n"],
      ["Accept-Ranges: \r\n", "Content-Encoding:gzip", "X-Date: 1\r\n", "Date : 2\r\n", ": v\r\n", "no colon\r\n"],
      ["Content-Length: 1\r\n", "Content-Length: 2\r\n", "content-length:\u{FF}3 \r\n", "retry-after: \u{E9}\r\n"],
    ]
    for lines in blocks {
      var fields = ResponseFields()
      for line in lines { Array(line.utf8).withUnsafeBytes { fields.take($0) } }
      for name in ResponseFields.Name.allCases {
        let text = name.text.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        #expect(fields[name] == headerValue(text, in: lines), "\(text) in \(lines)")
      }
      fields.removeAll()
      #expect(ResponseFields.Name.allCases.allSatisfy { fields[$0] == nil })
    }
  }

  /// Each field is found by its own name, in any case, and sets only itself.
  @Test func everyFieldIsFoundByItsName() {
    for name in ResponseFields.Name.allCases {
      let text = name.text.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
      for written in [text, text.uppercased(), text.prefix(1).uppercased() + text.dropFirst()] {
        var fields = ResponseFields()
        Array("\(written): v\r\n".utf8).withUnsafeBytes { fields.take($0) }
        #expect(ResponseFields.Name.allCases.allSatisfy { fields[$0] == ($0 == name ? "v" : nil) }, "\(written)")
      }
    }
    // Names one byte longer or shorter than every field's, and a long one.
    var fields = ResponseFields()
    for line in ["E: 1\r\n", "Transfer-Encodings: 2\r\n", String(repeating: "x", count: 300) + ": 3\r\n"] {
      Array(line.utf8).withUnsafeBytes { fields.take($0) }
    }
    #expect(ResponseFields.Name.allCases.allSatisfy { fields[$0] == nil })
  }

  @Test func statusLinesGiveTheirCode() {
    let cases: [(String, Int?)] = [
      ("HTTP/1.1 304 Not Modified\r\n", 304), ("HTTP/2 200 \r\n", 200), ("HTTP/1.0  206 Partial\r\n", 206),
      ("HTTP/1.1 abc\r\n", 0), ("HTTP/1.1\r\n", 0), ("HTTP/1.1 \r\n", 0), ("ETag: x\r\n", nil), ("HTTP", nil),
      ("http/1.1 200 OK\r\n", nil),
    ]
    for (line, code) in cases {
      #expect(Array(line.utf8).withUnsafeBytes { statusLineCode($0) } == code, "\(line)")
    }
  }
}

@Suite final class JournalBatchTests {
  let dir = makeTempDir()
  var path: String { dir + "/journal" }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func state(_ id: String, _ bytes: Int64) -> TaskState {
    var s = TaskState(id: id)
    s.lastBytes = bytes
    return s
  }

  @Test func heldBackRecordsReachTheFileAtFlushInOrder() throws {
    let w = try JournalWriter(path: path)
    try w.record(state("m/a", 1), flush: false)
    try w.record(state("m/b", 2), flush: false)
    // Not yet written: a reader sees nothing of them.
    #expect(try JournalReader.read(path: path).tasks.isEmpty)
    // A record that flushes writes the held ones first: the last of a task still wins.
    try w.record(state("m/a", 3))
    let c = try JournalReader.read(path: path)
    #expect(c.records == 3)
    #expect(c.tasks["m/a"]?.lastBytes == 3)
    #expect(c.tasks["m/b"]?.lastBytes == 2)
    try w.record(state("m/b", 4), flush: false)
    try w.sync()
    #expect(try JournalReader.read(path: path).tasks["m/b"]?.lastBytes == 4)
  }

  @Test func aWriterGoneWritesWhatItHeld() throws {
    do {
      let w = try JournalWriter(path: path)
      try w.record(state("m/a", 5), flush: false)
    }
    #expect(try JournalReader.read(path: path).tasks["m/a"]?.lastBytes == 5)
  }

  @Test func compactionKeepsHeldBackStates() throws {
    let w = try JournalWriter(path: path)
    try w.record(state("m/a", 1))
    try w.record(state("m/a", 2), flush: false)
    try w.compact()
    try w.flush()
    let c = try JournalReader.read(path: path)
    #expect(c.records == 1)
    #expect(c.tasks["m/a"]?.lastBytes == 2)
  }
}

@Suite final class PartialLookupTests {
  let dir = makeTempDir()
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// Destinations that alternate between crowded folders (each listed
  /// once) still find each folder's own partials, and only them.
  @Test func alternatingCrowdedFoldersFindTheirOwnPartials() throws {
    let n = FactGatherer.PartialLookup.listFrom + 2
    var yaml = "version: 1\nname: m\nroot: \(dir)/alt\njournal: \(dir)/journal\nfiles:\n"
    for i in 0..<(2 * n) {
      yaml += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: d\(i % 2)/f\(i).bin}\n"
    }
    for d in ["d0", "d1"] {
      try FileManager.default.createDirectory(atPath: dir + "/alt/" + d, withIntermediateDirectories: true)
    }
    try yaml.write(toFile: dir + "/alt.yaml", atomically: true, encoding: .utf8)
    // f4 belongs in d0 and f7 in d1; a partial named for f4 in d1 is nobody's.
    for p in ["d0/.f4.bin", "d1/.f7.bin", "d1/.f4.bin"] {
      try Data("held".utf8).write(to: URL(fileURLWithPath: dir + "/alt/" + p + ".syncfiles-partial"))
    }
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/alt.yaml"])
    let facts = FactGatherer.gather(for: set.manifests, journal: [:], now: Timestamp.current())
    let found = facts.files.keys.filter { $0.hasSuffix(".syncfiles-partial") }.sorted()
    #expect(found == [dir + "/alt/d0/.f4.bin.syncfiles-partial", dir + "/alt/d1/.f7.bin.syncfiles-partial"])
    #expect(facts.siblingPartials == 2)
  }

  /// The crowded folders, counted a run of destinations at a time, are the
  /// ones counted one destination at a time: folders that interleave, come
  /// back later, continue into the next manifest, or hold only a few.
  @Test func crowdedFoldersCountedByRunsAreThoseCountedOneByOne() throws {
    var x: UInt64 = 0x2545_F491_4F6C_DD1D
    func next(_ n: UInt64) -> Int {
      x ^= x << 13
      x ^= x >> 7
      x ^= x << 17
      return Int(x % n)
    }
    let folders = ["a", "a/b", "a/b/c", "ab", "z", ""]
    var paths: [String] = []
    for name in ["m1", "m2"] {
      var yaml = "version: 1\nname: \(name)\nroot: \(dir)/runs\njournal: \(dir)/journal\nfiles:\n"
      var k = 0
      while k < 300 {
        let folder = folders[next(UInt64(folders.count))]
        for _ in 0..<(1 + next(40)) where k < 300 {
          let dest = (folder.isEmpty ? "" : folder + "/") + "\(name)-\(k).bin"
          yaml += "  - {id: f\(k), url: 'https://example.org/\(k)', destination: '\(dest)'}\n"
          paths.append(dir + "/runs/" + dest)
          k += 1
        }
      }
      if name == "m2" {
        // Last, one run of exactly `listFrom` destinations: crowded only if the final run counts.
        for i in 0..<FactGatherer.PartialLookup.listFrom {
          yaml += "  - {id: last\(i), url: 'https://example.org/l\(i)', destination: 'last/\(i).bin'}\n"
          paths.append(dir + "/runs/last/\(i).bin")
        }
      }
      try yaml.write(toFile: dir + "/\(name).yaml", atomically: true, encoding: .utf8)
    }
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/m1.yaml", dir + "/m2.yaml"])
    #expect(!set.hasErrors)
    var count: [String: Int] = [:]
    for p in paths { count[Paths.folder(of: p), default: 0] += 1 }
    let expected = Set(count.filter { $0.value >= FactGatherer.PartialLookup.listFrom }.keys)
    #expect(!expected.isEmpty && expected.count < count.count, "some folders crowded, some not")
    #expect(FactGatherer.PartialLookup.crowded(set.manifests) == expected)
  }

  @Test func aPathIsInTheFolderBeforeItsLastSlash() {
    typealias L = FactGatherer.PartialLookup
    #expect(L.isIn("/a/b/c", folder: "/a/b"))
    #expect(!L.isIn("/a/bc", folder: "/a/b"))
    #expect(!L.isIn("/a/b/c/d", folder: "/a/b"))
    #expect(L.isIn("/x", folder: "/"))
    #expect(!L.isIn("/x", folder: ""))
    #expect(L.isIn("x", folder: "."))
    for p in ["/a/b/c", "/x", "x", "/a/b/"] { #expect(L.isIn(p, folder: Paths.folder(of: p)), "\(p)") }
  }

  /// From `splitFrom` destinations the facts are gathered on two threads:
  /// they are the facts one thread gathers, for destinations on either side
  /// of the split and in either manifest (files, partials beside them and
  /// held by the journal, a folder that does not exist, the disks).
  @Test func factsGatheredOnTwoThreadsAreOneThreadsFacts() throws {
    let n = FactGatherer.splitFrom
    var journal: [String: TaskState] = [:]
    for (name, count) in [("a", n / 2 + 3), ("b", n)] {
      var yaml = "version: 1\nname: \(name)\nroot: \(dir)/two/\(name)\njournal: \(dir)/journal\nfiles:\n"
      for i in 0..<count {
        let folder = i % 7 == 0 ? "gone" : "d\(i % 3)"
        yaml += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: \(folder)/f\(i).bin}\n"
      }
      try yaml.write(toFile: dir + "/\(name).yaml", atomically: true, encoding: .utf8)
      for d in ["d0", "d1", "d2"] {
        try FileManager.default.createDirectory(atPath: dir + "/two/\(name)/\(d)", withIntermediateDirectories: true)
      }
      // Every fifth destination exists; every eleventh has a partial beside it.
      for i in 0..<count where i % 7 != 0 {
        let folder = dir + "/two/\(name)/d\(i % 3)"
        if i % 5 == 0 { try Data(repeating: 1, count: i).write(to: URL(fileURLWithPath: folder + "/f\(i).bin")) }
        if i % 11 == 0 { try Data("p".utf8).write(to: URL(fileURLWithPath: folder + "/.f\(i).bin.syncfiles-partial")) }
      }
      // A partial the journal holds, in a folder of its own.
      let held = dir + "/two/\(name)/held-\(count - 2)"
      try Data("held".utf8).write(to: URL(fileURLWithPath: held))
      var state = TaskState(id: "\(name)/f\(count - 2)")
      state.partial = TaskState.Partial(
        path: held, offset: 4, totalBytes: nil, etag: "\"e\"", lastModified: nil, dateIsStrong: false)
      journal[state.id] = state
    }
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/a.yaml", dir + "/b.yaml"])
    #expect(set.manifests.count == 2 && !set.hasErrors)
    let total = set.manifests.reduce(0) { $0 + $1.files.count }
    // The split falls inside the second manifest; no held task has a partial beside it too.
    #expect(total / 2 > n / 2 + 3 && (n / 2 + 1) % 11 != 0 && (n - 2) % 11 != 0)
    let split = FactGatherer.gather(for: set.manifests, journal: journal, now: Timestamp.current())
    let one = FactGatherer.Part(set.manifests, journal, 0..<total, digests: true)
    #expect(split.files == one.files)
    // The same disk for each folder; its free bytes are read twice, while other tests write to it.
    #expect(
      split.disks.mapValues { "\($0.device) \($0.mountPoint)" }
        == one.disks.mapValues { "\($0.device) \($0.mountPoint)" })
    #expect(split.siblingPartials == one.siblingPartials)
    // What the files are: each existing destination, each partial, the two held ones.
    let existing = [("a", n / 2 + 3), ("b", n)].map { (_, c) in (0..<c).filter { $0 % 7 != 0 && $0 % 5 == 0 }.count }
    let partials = [("a", n / 2 + 3), ("b", n)].map { (_, c) in (0..<c).filter { $0 % 7 != 0 && $0 % 11 == 0 }.count }
    #expect(split.files.count == existing.reduce(0, +) + partials.reduce(0, +) + 2)
    #expect(split.siblingPartials == partials.reduce(0, +))
  }

  /// The gatherer counts the partials it finds beside destinations; with
  /// none counted the planner looks for none, and with one it finds it.
  @Test func aPartialBesideItsDestinationIsCountedAndPlanned() throws {
    try FileManager.default.createDirectory(atPath: dir + "/p", withIntermediateDirectories: true)
    try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/p/a.bin"))
    let yaml =
      "version: 1\nname: m\nroot: \(dir)/p\njournal: \(dir)/journal\nfiles:\n"
      + "  - {id: a, url: 'https://example.org/a', destination: a.bin}\n"
    try yaml.write(toFile: dir + "/p.yaml", atomically: true, encoding: .utf8)
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/p.yaml"])
    func planned() -> (Facts, PlannedTask) {
      let facts = FactGatherer.gather(for: set.manifests, journal: [:], now: Timestamp.current())
      return (facts, Planner.plan(manifests: set.manifests, journal: [:], facts: facts, journalPath: "/j").tasks[0])
    }
    var (facts, task) = planned()
    #expect(facts.siblingPartials == 0 && !task.leftoverPartial)
    try Data("held".utf8).write(to: URL(fileURLWithPath: dir + "/p/.a.bin.syncfiles-partial"))
    (facts, task) = planned()
    #expect(facts.siblingPartials == 1 && task.leftoverPartial)
    // Facts made by hand (not counted) are looked up path by path.
    var byHand = Facts(now: facts.now, localMinuteOfDay: 0, onACPower: true)
    byHand.files = facts.files
    byHand.disks = facts.disks
    let t = Planner.plan(manifests: set.manifests, journal: [:], facts: byHand, journalPath: "/j").tasks[0]
    #expect(byHand.siblingPartials == nil && t.leftoverPartial)
  }

  /// Each folder is looked at once, by its bytes: a folder's first
  /// destination decides whether it is missing, the rest share that answer.
  @Test func eachFolderIsLookedAtOnce() throws {
    var table = FactGatherer.FolderTable()
    var seen: [String] = []
    let paths = ["/a", "/srv/x/1", "/srv/x/2", "/srv/y/1", "/srv/x/3", "/b", "rel"]
    let answers = paths.map { path in
      table.folder(of: path) { folder in
        seen.append(folder)
        return folder.hasSuffix("y")
      }
    }
    #expect(seen == ["/", "/srv/x", "/srv/y", "."])
    #expect(answers.map(\.0) == ["/", "/srv/x", "/srv/x", "/srv/y", "/srv/x", "/", "."])
    #expect(answers.map(\.1) == [false, false, false, true, false, false, false])
    // Gathered facts: a destination present, one absent, one in a missing folder.
    try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
    try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/data/a.bin"))
    var yaml = "version: 1\nname: m\nroot: \(dir)\njournal: \(dir)/journal\nfiles:\n"
    for d in ["data/a.bin", "data/b.bin", "gone/c.bin", "data/d.bin"] {
      yaml += "  - {id: '\(d.prefix(6).suffix(1))', url: 'https://example.org/\(d)', destination: \(d)}\n"
    }
    try yaml.write(toFile: dir + "/m.yaml", atomically: true, encoding: .utf8)
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/m.yaml"])
    #expect(!set.hasErrors, "\(set.diagnostics)")
    let facts = FactGatherer.gather(for: set.manifests, journal: [:], now: Timestamp.current())
    #expect(Set(facts.files.keys) == [dir + "/data/a.bin"])
    #expect(Set(facts.disks.keys) == [dir + "/data", dir + "/gone"])
  }

  /// A folder with many destinations is listed once; a partial in it is still found, and only it.
  @Test func crowdedFolderFindsItsPartials() throws {
    let n = FactGatherer.PartialLookup.listFrom + 6
    var yaml = "version: 1\nname: m\nroot: \(dir)/data\njournal: \(dir)/journal\nfiles:\n"
    for i in 0..<n { yaml += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: f\(i).bin}\n" }
    try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
    try yaml.write(toFile: dir + "/m.yaml", atomically: true, encoding: .utf8)
    try Data("held".utf8).write(to: URL(fileURLWithPath: dir + "/data/.f3.bin.syncfiles-partial"))
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/m.yaml"])
    let facts = FactGatherer.gather(for: set.manifests, journal: [:], now: Timestamp.current())
    #expect(facts.files[dir + "/data/.f3.bin.syncfiles-partial"]?.size == 4)
    #expect(facts.files.keys.filter { $0.hasSuffix(".syncfiles-partial") }.count == 1)
  }
}
