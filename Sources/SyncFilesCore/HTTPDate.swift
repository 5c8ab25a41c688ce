/// HTTP dates (RFC 9110 IMF-fixdate) and `Retry-After`.
public enum HTTPDate {
  package static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  package static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

  public static func format(_ t: Timestamp) -> String {
    let c = t.civil
    func p(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return
      "\(days[c.weekday]), \(p(c.day)) \(months[c.month - 1]) \(c.year) \(p(c.hour)):\(p(c.minute)):\(p(c.second)) GMT"
  }

  /// Parses `Sun, 06 Nov 1994 08:49:37 GMT`.
  public static func parse(_ text: String) -> Timestamp? {
    // The engine parses a date or two per response: the usual form is read
    // in place, with no copy of the text.
    let inPlace = text.utf8.withContiguousStorageIfAvailable(fixed)
    if case .some(let t?) = inPlace { return t }
    let b = Array(text.utf8)
    // Not read in place (not contiguous): the fixed form first, on the copy.
    if inPlace == nil, let t = b.withUnsafeBufferPointer(fixed) { return t }
    let f = b.split(separator: UInt8(ascii: " "))
    guard f.count == 6, f[5].elementsEqual("GMT".utf8), let day = number(f[1]),
      let m = monthBytes.firstIndex(where: { $0.elementsEqual(f[2]) }), let year = number(f[3])
    else { return nil }
    let hms = f[4].split(separator: UInt8(ascii: ":")).compactMap(number)
    // A server's date is text from the network: a year such as 999999999999
    // would overflow the calendar arithmetic, so only four-digit years count.
    guard hms.count == 3, (1...9999).contains(year), (1...Timestamp.daysInMonth(year, m + 1)).contains(day),
      (0...23).contains(hms[0]), (0...59).contains(hms[1]), (0...60).contains(hms[2])
    else { return nil }
    return Timestamp(year: year, month: m + 1, day: day, hour: hms[0], minute: hms[1], second: hms[2])
  }

  /// The IMF-fixdate every current server sends, read at fixed places
  /// (nil sends anything else through the general reading).
  private static func fixed(_ b: UnsafeBufferPointer<UInt8>) -> Timestamp? {
    let space = UInt8(ascii: " ")
    guard b.count == 29, b[3] == UInt8(ascii: ","), b[4] == space, b[7] == space, b[11] == space, b[16] == space,
      b[25] == space, b[26] == UInt8(ascii: "G"), b[27] == UInt8(ascii: "M"), b[28] == UInt8(ascii: "T"),
      b[0] != space, b[1] != space, b[2] != space, b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"),
      let day = digits(b, 5, 2), let m = month(b[8], b[9], b[10]), let year = digits(b, 12, 4),
      let h = digits(b, 17, 2), let mi = digits(b, 20, 2), let sec = digits(b, 23, 2),
      year >= 1, day >= 1, day <= Timestamp.daysInMonth(year, m + 1), h <= 23, mi <= 59, sec <= 60
    else { return nil }
    return Timestamp(year: year, month: m + 1, day: day, hour: h, minute: mi, second: sec)
  }

  /// `count` ASCII digits at `at`.
  private static func digits(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> Int? {
    var v = 0
    for i in at..<(at + count) {
      let d = b[i] &- 0x30
      guard d <= 9 else { return nil }
      v = v * 10 + Int(d)
    }
    return v
  }

  /// A month's three letters, as written in HTTP dates (0 is January).
  private static func month(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> Int? {
    let key = UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)
    for (i, m) in monthKeys.enumerated() where m == key { return i }
    return nil
  }

  private static let monthKeys: [UInt32] = monthBytes.map { UInt32($0[0]) << 16 | UInt32($0[1]) << 8 | UInt32($0[2]) }
  private static let monthBytes = months.map { Array($0.utf8) }

  /// 1 to 9 ASCII digits (a field of a date).
  private static func number(_ b: ArraySlice<UInt8>) -> Int? {
    guard !b.isEmpty, b.count <= 9, b.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return b.reduce(0) { $0 * 10 + Int($1 - 0x30) }
  }

  /// `Retry-After` as seconds from now: delta-seconds or an HTTP date.
  package static func retryAfter(_ text: String, now: Timestamp = Timestamp.current()) -> Int64? {
    if let s = Int64(text), s >= 0 { return s }
    return parse(text).map { max(0, $0.seconds - now.seconds) }
  }
}
