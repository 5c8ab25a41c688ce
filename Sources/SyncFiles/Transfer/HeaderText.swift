import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// Reading response header text, apart from libcurl so the header fuzz
/// target (Fuzz/HeaderFuzz.swift) can build it alone.

/// The value of the last header `name` (case-insensitive) among raw header lines.
func headerValue(_ name: String, in lines: [String]) -> String? {
  let wanted = Array(name.utf8)
  for line in lines.reversed() where hasHeaderName(line, wanted) {
    return String(decoding: line.utf8.dropFirst(wanted.count + 1), as: UTF8.self).trimmingWhitespace()
  }
  return nil
}

/// `line` starts with `name` (ASCII letters in any case) and a colon. No
/// allocation: the engine looks up several headers per response.
private func hasHeaderName(_ line: String, _ name: [UInt8]) -> Bool {
  var it = line.utf8.makeIterator()
  for c in name {
    guard let l = it.next(), sameIgnoringCase(l, c) else { return false }
  }
  return it.next() == UInt8(ascii: ":")
}

/// Two bytes equal, or the same ASCII letter in either case (header names).
func sameIgnoringCase(_ a: UInt8, _ b: UInt8) -> Bool {
  let letter = (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z")
  return a == b || (letter && a | 0x20 == b | 0x20)
}

/// The response header fields the engine reads, taken in one pass as each
/// line arrives: no String for a line it does not read, and no scan of the
/// lines per lookup. The rule is `headerValue`'s: names in any case, the
/// last field of a name wins, the value trimmed of spaces, tabs, CR and LF.
struct ResponseFields {
  enum Name: Int, CaseIterable {
    case etag, lastModified, date, contentLength, retryAfter, contentRange, contentEncoding, transferEncoding,
      acceptRanges, checksumSHA256

    /// The field's name as lowercase ASCII.
    var text: StaticString {
      switch self {
      case .etag: "etag"
      case .lastModified: "last-modified"
      case .date: "date"
      case .contentLength: "content-length"
      case .retryAfter: "retry-after"
      case .contentRange: "content-range"
      case .contentEncoding: "content-encoding"
      case .transferEncoding: "transfer-encoding"
      case .acceptRanges: "accept-ranges"
      case .checksumSHA256: "x-amz-checksum-sha256"
      }
    }
  }

  // Held inline, not in an array: one allocation (and its release) less per transfer.
  private var etag, lastModified, date, contentLength, retryAfter, contentRange, contentEncoding: String?
  private var transferEncoding, acceptRanges, checksumSHA256: String?

  subscript(_ name: Name) -> String? {
    get {
      switch name {
      case .etag: etag
      case .lastModified: lastModified
      case .date: date
      case .contentLength: contentLength
      case .retryAfter: retryAfter
      case .contentRange: contentRange
      case .contentEncoding: contentEncoding
      case .transferEncoding: transferEncoding
      case .acceptRanges: acceptRanges
      case .checksumSHA256: checksumSHA256
      }
    }
    set {
      switch name {
      case .etag: etag = newValue
      case .lastModified: lastModified = newValue
      case .date: date = newValue
      case .contentLength: contentLength = newValue
      case .retryAfter: retryAfter = newValue
      case .contentRange: contentRange = newValue
      case .contentEncoding: contentEncoding = newValue
      case .transferEncoding: transferEncoding = newValue
      case .acceptRanges: acceptRanges = newValue
      case .checksumSHA256: checksumSHA256 = newValue
      }
    }
  }

  mutating func removeAll() { self = ResponseFields() }

  /// Takes one raw header line (with or without its CRLF); a line that is
  /// not one of the fields above is passed over.
  mutating func take(_ line: UnsafeRawBufferPointer) {
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")), let name = Self.name(line[..<colon]) else { return }
    var start = colon + 1
    var end = line.count
    while start < end, Self.isSpace(line[start]) { start += 1 }
    while end > start, Self.isSpace(line[end - 1]) { end -= 1 }
    self[name] = String(decoding: line[start..<end], as: UTF8.self)
  }

  private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }

  /// The fields by the length of their names: a line's name is compared
  /// only with those as long (most lines a server sends name none).
  private static let byLength: [[Name]] = {
    var table = [[Name]](repeating: [], count: 1 + Name.allCases.map(\.text.utf8CodeUnitCount).max()!)
    for name in Name.allCases { table[name.text.utf8CodeUnitCount].append(name) }
    return table
  }()

  /// Which field `bytes` names (ASCII letters in any case), if any.
  private static func name(_ bytes: Slice<UnsafeRawBufferPointer>) -> Name? {
    guard bytes.count < byLength.count else { return nil }
    for candidate in byLength[bytes.count] where equalsIgnoringCase(bytes, candidate.text) { return candidate }
    return nil
  }

  private static func equalsIgnoringCase(_ bytes: Slice<UnsafeRawBufferPointer>, _ lower: StaticString) -> Bool {
    var i = bytes.startIndex
    for k in 0..<lower.utf8CodeUnitCount {
      guard sameIgnoringCase(bytes[i], lower.utf8Start[k]) else { return false }
      i += 1
    }
    return true
  }
}

/// The status code of an `HTTP/...` status line, or nil when `line` is not one.
func statusLineCode(_ line: UnsafeRawBufferPointer) -> Int? {
  guard line.count >= 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
    line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/")
  else { return nil }
  guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return 0 }
  var code = 0
  var digits = 0
  var i = space + 1
  while i < line.count, line[i] == UInt8(ascii: " ") { i += 1 }
  while i < line.count, line[i] != UInt8(ascii: " "), line[i] != 0x0D, line[i] != 0x0A {
    guard line[i] >= UInt8(ascii: "0"), line[i] <= UInt8(ascii: "9"), digits < 9 else { return 0 }
    code = code * 10 + Int(line[i] - UInt8(ascii: "0"))
    digits += 1
    i += 1
  }
  return digits > 0 ? code : 0
}

/// `Content-Range: bytes START-END/TOTAL` (TOTAL may be `*`), or `bytes */TOTAL` on a 416.
enum ContentRange {
  static func parse(_ text: String) -> (start: Int64, end: Int64?, total: Int64?)? {
    let t = text.trimmingWhitespace()
    guard t.lowercased().hasPrefix("bytes ") else { return nil }
    let spec = t.dropFirst(6).trimmingWhitespace()
    let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    guard halves.count == 2 else { return nil }
    let total = halves[1] == "*" ? nil : Int64(halves[1])
    if halves[1] != "*" && total == nil { return nil }
    if halves[0] == "*" { return (0, nil, total) }
    let ends = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard ends.count == 2, let start = Int64(ends[0]), let end = Int64(ends[1]), start >= 0, end >= start else {
      return nil
    }
    return (start, end, total)
  }
}
