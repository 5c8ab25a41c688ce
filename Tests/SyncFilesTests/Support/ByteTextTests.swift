import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The byte-level readers and writers of Support (dates, RFC 3339 times,
/// JSON, byte scans, paths, the byte-keyed table) give the same answers as
/// the general rules they shortcut.
@Suite struct ByteTextTests {
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
}
