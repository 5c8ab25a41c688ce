/// A length of time in whole seconds.
public struct TimeSpan: Sendable, Hashable, Comparable, CustomStringConvertible {
  public var seconds: Int64

  public init(seconds: Int64) { self.seconds = seconds }
  public static func seconds(_ s: Int64) -> TimeSpan { TimeSpan(seconds: s) }
  public static func minutes(_ m: Int64) -> TimeSpan { TimeSpan(seconds: m * 60) }
  public static func hours(_ h: Int64) -> TimeSpan { TimeSpan(seconds: h * 3600) }

  public static func < (a: TimeSpan, b: TimeSpan) -> Bool { a.seconds < b.seconds }

  /// Canonical text in the manifest's own syntax, e.g. `1h30m`, `0s`.
  public var description: String {
    if seconds == 0 { return "0s" }
    var rest = seconds
    var out = ""
    for (unit, size) in TimeSpan.units where rest >= size {
      out += "\(rest / size)\(unit)"
      rest %= size
    }
    return out
  }

  package static let units: [(String, Int64)] = [("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]

  /// Parses `30s`, `15m`, `6h`, `1d`, `1w` and combinations such as `1h30m`.
  public static func parse(_ text: String) -> Result<TimeSpan, UnitError> {
    let s = text.trimmingSpaces()
    if s.isEmpty { return .failure(.init("empty duration")) }
    if s.hasPrefix("-") { return .failure(.init("negative duration '\(s)'")) }
    if s.allSatisfy(\.isASCIIDigit) {
      return .failure(.init("duration '\(s)' needs a unit (s, m, h, d or w): did you mean '\(s)s'?"))
    }
    var total: Int64 = 0
    var number: Int64? = nil
    var seenUnits = Set<Character>()
    var lastRank = -1
    for ch in s {
      if let d = ch.asciiDigitValue {
        let (m, o1) = (number ?? 0).multipliedReportingOverflow(by: 10)
        let (a, o2) = m.addingReportingOverflow(Int64(d))
        if o1 || o2 { return .failure(.init("duration '\(s)' is too large")) }
        number = a
        continue
      }
      let unit = Character(ch.lowercased())
      guard let rank = units.firstIndex(where: { Character($0.0) == unit }) else {
        return .failure(
          .init("malformed duration '\(s)': expected a number and a unit (s, m, h, d, w), as in 30s or 1h30m"))
      }
      guard let n = number else {
        return .failure(.init("malformed duration '\(s)': unit '\(ch)' has no number before it"))
      }
      if seenUnits.contains(unit) || rank < lastRank {
        return .failure(.init("malformed duration '\(s)': give units once, largest first, as in 1h30m"))
      }
      seenUnits.insert(unit)
      lastRank = rank
      let (p, o1) = n.multipliedReportingOverflow(by: units[rank].1)
      let (t, o2) = total.addingReportingOverflow(p)
      if o1 || o2 { return .failure(.init("duration '\(s)' is too large")) }
      total = t
      number = nil
    }
    if number != nil {
      return .failure(.init("malformed duration '\(s)': the last number has no unit (s, m, h, d or w)"))
    }
    return .success(TimeSpan(seconds: total))
  }
}

public struct UnitError: Error, Sendable, Hashable {
  public var message: String
  public init(_ message: String) { self.message = message }
}

public enum ByteSize {
  package static let units: [(String, Int64)] = [
    ("b", 1),
    ("kb", 1000), ("mb", 1_000_000), ("gb", 1_000_000_000), ("tb", 1_000_000_000_000),
    ("pb", 1_000_000_000_000_000),
    ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("tib", 1 << 40), ("pib", 1 << 50),
    // Single letters as curl (`--limit-rate 10M`), wget and aria2c read them: 1024-based (SPEC §9.5).
    ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("t", 1 << 40),
  ]

  /// Parses `500`, `4.5KiB`, `10MiB`, `4.7GB` (SI and IEC, units case-insensitive).
  /// Fractions are exact; a result that is not a whole number of bytes is rounded down.
  public static func parse(_ text: String) -> Result<Int64, UnitError> {
    var s = text.trimmingSpaces()
    if s.isEmpty { return .failure(.init("empty size")) }
    if s.hasPrefix("-") { return .failure(.init("negative size '\(s)'")) }
    let shown = s
    // By bytes: a manifest can give a size in each of 100,000 entries.
    return s.withUTF8 { b in
      var i = 0
      var whole: Int64 = 0
      var frac: Int64 = 0
      var fracScale: Int64 = 1
      while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
        let (m, o1) = whole.multipliedReportingOverflow(by: 10)
        let (a, o2) = m.addingReportingOverflow(Int64(b[i] - 0x30))
        if o1 || o2 { return .failure(.init("size '\(shown)' is too large")) }
        whole = a
        i += 1
      }
      let sawDigit = i > 0
      if i < b.count && b[i] == 0x2E {
        i += 1
        let start = i
        while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
          if fracScale < 1_000_000_000_000 {
            frac = frac * 10 + Int64(b[i] - 0x30)
            fracScale *= 10
          }
          i += 1
        }
        if i == start { return .failure(.init("malformed size '\(shown)'")) }
      }
      if !sawDigit {
        return .failure(
          .init("malformed size '\(shown)': expected a number and a unit, as in 500, 4.5KiB, 10MiB or 4.7GB"))
      }
      guard let multiplier = multiplier(UnsafeBufferPointer(rebasing: b[i...])) else {
        let unit = String(decoding: UnsafeBufferPointer(rebasing: b[i...]), as: UTF8.self).trimmingSpaces()
        return .failure(
          .init(
            "malformed size '\(shown)': unknown unit '\(unit)' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, or K, M, G, T as curl reads them: 1024-based)"
          ))
      }
      let (w, o1) = whole.multipliedReportingOverflow(by: multiplier)
      if o1 { return .failure(.init("size '\(shown)' is too large")) }
      // frac/fracScale * multiplier, exactly, rounded down.
      let fracBytes = Int64((Double(frac) / Double(fracScale) * Double(multiplier)).rounded(.down))
      let exact = multiplier % fracScale == 0 ? frac * (multiplier / fracScale) : fracBytes
      let (t, o2) = w.addingReportingOverflow(exact)
      if o2 { return .failure(.init("size '\(shown)' is too large")) }
      return .success(t)
    }
  }

  /// The bytes a unit stands for, spaces and tabs around it ignored and
  /// letters in any case (none: 1); nil for an unknown unit.
  package static func multiplier(_ unit: UnsafeBufferPointer<UInt8>) -> Int64? {
    var packed: UInt32 = 0
    var letters = 0
    var ended = false
    for c in unit {
      if c == 0x20 || c == 0x09 {
        ended = letters > 0  // spaces only around the unit: a space after a letter ends it
        continue
      }
      guard !ended, letters < 3, (c | 0x20) >= 0x61, (c | 0x20) <= 0x7A else { return nil }
      packed = packed << 8 | UInt32(c | 0x20)
      letters += 1
    }
    if letters == 0 { return 1 }
    return packedUnits.first { $0.0 == packed }?.1
  }

  /// `units`, each name's letters packed into one integer.
  package static let packedUnits: [(UInt32, Int64)] = units.map { u in
    (u.0.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, u.1)
  }

  /// Parses a bandwidth: a size, optionally followed by `/s` (`500000`, `20MB`, `20MB/s`).
  public static func parseRate(_ text: String) -> Result<Int64, UnitError> {
    var s = text.trimmingSpaces()
    if s.lowercased().hasSuffix("/s") { s = String(s.dropLast(2)) }
    return parse(s)
  }

  /// Two sizes to compare in one message: exact bytes when their rounded
  /// forms would read the same (`3881 B > 3858 B`, not `3.8 KiB > 3.8 KiB`).
  public static func format(_ a: Int64, beside b: Int64) -> (String, String) {
    let (x, y) = (format(a), format(b))
    return x == y && a != b ? ("\(a) B", "\(b) B") : (x, y)
  }

  /// Human-readable IEC size, e.g. `4.5 KiB`, `100 MiB`, `512 B`.
  public static func format(_ bytes: Int64) -> String {
    if bytes < 1024 { return "\(bytes) B" }
    let names = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    var value = Double(bytes)
    var i = -1
    while value >= 1024 && i < names.count - 1 {
      value /= 1024
      i += 1
    }
    let rounded = (value * 10).rounded() / 10
    let text = rounded == rounded.rounded() ? String(Int64(rounded)) : String(rounded)
    return "\(text) \(names[i])"
  }
}

extension StringProtocol {
  package func trimmingSpaces() -> String {
    let padded = withUTF8Bytes { b in
      guard let first = b.first, let last = b.last else { return false }
      return first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09
    }
    if !padded { return String(self) }
    var s = Substring(self)
    while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
    while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
    return String(s)
  }
}

extension String {
  /// Every occurrence of `target` replaced (the library does not use Foundation).
  package func replacingAll(_ target: String, with replacement: String) -> String {
    guard !target.isEmpty else { return self }
    var out = ""
    var rest = Substring(self)
    while let r = rest.firstRange(of: target) {
      out += rest[..<r.lowerBound]
      out += replacement
      rest = rest[r.upperBound...]
    }
    return out + rest
  }

  /// `lowercased()`, without building a new string when there is no
  /// upper-case ASCII letter and nothing beyond ASCII (host names, schemes).
  package func lowercasedIfNeeded() -> String {
    containsByte(where: { $0 >= 0x80 || ($0 >= 0x41 && $0 <= 0x5A) }) ? lowercased() : self
  }
}

extension StringProtocol {
  /// Without leading and trailing spaces, tabs, CRs and LFs (header values, /sys files).
  package func trimmingWhitespace() -> String {
    let u = utf8
    func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }
    guard let first = u.firstIndex(where: { !isSpace($0) }) else { return "" }
    var last = first
    for i in u[first...].indices where !isSpace(u[i]) { last = i }
    return String(decoding: u[first...last], as: UTF8.self)
  }
}

extension Character {
  package var isASCIIDigit: Bool { asciiValue.map { $0 >= 48 && $0 <= 57 } ?? false }
  package var asciiDigitValue: Int? { isASCIIDigit ? Int(asciiValue! - 48) : nil }
}
