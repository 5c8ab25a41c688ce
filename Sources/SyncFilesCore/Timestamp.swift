#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An instant in UTC, whole seconds since the Unix epoch. All schedule
/// arithmetic in syncfiles is done in UTC with proleptic Gregorian dates.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
  public var seconds: Int64

  public init(seconds: Int64) { self.seconds = seconds }

  public static func < (a: Timestamp, b: Timestamp) -> Bool { a.seconds < b.seconds }

  /// Saturates: a schedule of `every 15250284452000w` is due at the end of
  /// time, not (wrapped around) in the distant past.
  public static func + (t: Timestamp, d: TimeSpan) -> Timestamp {
    let (sum, overflow) = t.seconds.addingReportingOverflow(d.seconds)
    return Timestamp(seconds: overflow ? (d.seconds > 0 ? .max : .min) : sum)
  }

  /// RFC 3339 in UTC, `2026-11-22T03:00:00Z`.
  public var description: String { rfc3339 }

  public var rfc3339: String {
    var out: [UInt8] = []
    out.reserveCapacity(20)
    appendRFC3339(to: &out)
    return String(decoding: out, as: UTF8.self)
  }

  /// `rfc3339`'s bytes, appended (the journal writes a few per record).
  package func appendRFC3339<S: ByteSink>(to out: inout S) {
    let c = civil
    // Digits by hand into 20 bytes on the stack, handed over in one piece.
    var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &bytes) { b in
      func two(_ v: Int, at n: Int, then sep: UInt8) {
        b[n] = UInt8(ascii: "0") + UInt8(v / 10)
        b[n + 1] = UInt8(ascii: "0") + UInt8(v % 10)
        b[n + 2] = sep
      }
      let inRange = (0...9999).contains(c.year)
      if inRange {
        two(c.year / 100, at: 0, then: 0)
        two(c.year % 100, at: 2, then: UInt8(ascii: "-"))
      } else {
        // A year outside 0...9999 as Swift prints it.
        var year = "\(c.year)"
        year.withUTF8 { out.put($0) }
        b[4] = UInt8(ascii: "-")
      }
      two(c.month, at: 5, then: UInt8(ascii: "-"))
      two(c.day, at: 8, then: UInt8(ascii: "T"))
      two(c.hour, at: 11, then: UInt8(ascii: ":"))
      two(c.minute, at: 14, then: UInt8(ascii: ":"))
      two(c.second, at: 17, then: UInt8(ascii: "Z"))
      out.put(UnsafeBufferPointer(rebasing: b.bindMemory(to: UInt8.self)[(inRange ? 0 : 4)..<20]))
    }
  }

  public struct Civil: Sendable, Hashable {
    public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    /// 0 = Sunday … 6 = Saturday.
    public var weekday: Int
  }

  public var civil: Civil {
    let days = Int(floorDiv(seconds, 86_400))
    let secs = Int(seconds - Int64(days) * 86_400)
    let (y, m, d) = Timestamp.civilFromDays(days)
    return Civil(
      year: y, month: m, day: d, hour: secs / 3600, minute: (secs / 60) % 60, second: secs % 60,
      weekday: Timestamp.weekday(days: days))
  }

  public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
    let days = Int64(Timestamp.daysFromCivil(year, month, day))
    seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
  }

  // Howard Hinnant's civil calendar algorithms (public domain descriptions).
  package static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let mp = (m + 9) % 12
    let doy = (153 * mp + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  package static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
  }

  package static func weekday(days: Int) -> Int {
    // 1970-01-01 was a Thursday (4).
    let w = (days + 4) % 7
    return w < 0 ? w + 7 : w
  }

  public static func isLeapYear(_ y: Int) -> Bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
  }

  public static func daysInMonth(_ y: Int, _ m: Int) -> Int {
    switch m {
    case 2: return isLeapYear(y) ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Parses an RFC 3339 date-time (`2026-12-01T00:00:00Z`, `…T01:00:00.5+01:00`).
  /// Fractions of a second are dropped. Returns nil when malformed.
  public static func parseRFC3339(_ text: String) -> Timestamp? {
    // Over the bytes in place, with no array made: a manifest may give a
    // `not_before` in each of its entries.
    text.withUTF8Bytes(parseRFC3339)
  }

  /// `parseRFC3339` over bytes in place (the journal reads its times this way).
  package static func parseRFC3339(_ b: UnsafeBufferPointer<UInt8>) -> Timestamp? {
    var c = DateCursor(b: b)
    guard let year = c.digits(4), c.expect(45), let month = c.digits(2), c.expect(45),
      let day = c.digits(2), c.expect(84, 116, 32),  // T t space
      let hour = c.digits(2), c.expect(58), let minute = c.digits(2), c.expect(58),
      let second = c.digits(2)
    else { return nil }
    if c.expect(46) {  // a fraction, dropped
      guard c.digits(1) != nil else { return nil }
      while c.digits(1) != nil {}
    }
    var offset = 0
    if !c.expect(90, 122) {  // Z z
      guard c.i < b.count, b[c.i] == 43 || b[c.i] == 45 else { return nil }  // + -
      let sign = b[c.i] == 43 ? 1 : -1
      c.i += 1
      guard let oh = c.digits(2), c.expect(58), let om = c.digits(2), oh <= 23, om <= 59 else { return nil }
      offset = sign * (oh * 3600 + om * 60)
    }
    guard c.i == b.count else { return nil }
    guard (1...12).contains(month), day >= 1, day <= daysInMonth(year, month), hour <= 23, minute <= 59,
      second <= 60
    else { return nil }
    // A leap second is read as the next second's start.
    let t = Timestamp(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    return Timestamp(seconds: t.seconds - Int64(offset))
  }
}

@inline(__always)
package func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
  let q = a / b
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

extension Timestamp {
  /// The system clock, whole seconds.
  public static func current() -> Timestamp {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Timestamp(seconds: Int64(ts.tv_sec))
  }

  /// The system clock in nanoseconds since the epoch (to compare with file times).
  package static func currentNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }
}

/// A position in the bytes of a date being read (`Timestamp.parseRFC3339`).
private struct DateCursor {
  package let b: UnsafeBufferPointer<UInt8>
  package var i = 0

  /// The next `n` bytes as a decimal number, when all are digits.
  package mutating func digits(_ n: Int) -> Int? {
    guard n <= b.count - i else { return nil }
    var v = 0
    for k in i..<(i + n) {
      let d = b[k] &- 48
      guard d <= 9 else { return nil }
      v = v * 10 + Int(d)
    }
    i += n
    return v
  }

  /// Steps over the next byte when it is `a` or `b` (or `c`).
  package mutating func expect(_ a: UInt8, _ b2: UInt8? = nil, _ c: UInt8? = nil) -> Bool {
    guard i < b.count, b[i] == a || b[i] == b2 || b[i] == c else { return false }
    i += 1
    return true
  }
}
