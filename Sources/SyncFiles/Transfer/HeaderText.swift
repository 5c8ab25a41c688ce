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
    guard let l = it.next() else { return false }
    let letter = (l | 0x20) >= UInt8(ascii: "a") && (l | 0x20) <= UInt8(ascii: "z")
    guard l == c || (letter && l | 0x20 == c | 0x20) else { return false }
  }
  return it.next() == UInt8(ascii: ":")
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
