/// HTTP dates (RFC 9110 IMF-fixdate) and `Retry-After`.
public enum HTTPDate {
  static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

  public static func format(_ t: Timestamp) -> String {
    let c = t.civil
    func p(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return
      "\(days[c.weekday]), \(p(c.day)) \(months[c.month - 1]) \(c.year) \(p(c.hour)):\(p(c.minute)):\(p(c.second)) GMT"
  }

  /// Parses `Sun, 06 Nov 1994 08:49:37 GMT`.
  public static func parse(_ text: String) -> Timestamp? {
    // Bytes, not Characters: the engine parses a date or two per response.
    let b = Array(text.utf8)
    if let t = fixed(b) { return t }
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
  private static func fixed(_ b: [UInt8]) -> Timestamp? {
    let space = UInt8(ascii: " ")
    guard b.count == 29, b[3] == UInt8(ascii: ","), [4, 7, 11, 16, 25].allSatisfy({ b[$0] == space }),
      b[26...].elementsEqual("GMT".utf8), b[0...2].allSatisfy({ $0 != space }),
      let day = number(b[5..<7]), let m = monthBytes.firstIndex(where: { $0.elementsEqual(b[8..<11]) }),
      let year = number(b[12..<16]), let h = number(b[17..<19]), let mi = number(b[20..<22]),
      let sec = number(b[23..<25]), b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"),
      (1...Timestamp.daysInMonth(year, m + 1)).contains(day), year >= 1, h <= 23, mi <= 59, sec <= 60
    else { return nil }
    return Timestamp(year: year, month: m + 1, day: day, hour: h, minute: mi, second: sec)
  }

  private static let monthBytes = months.map { Array($0.utf8) }

  /// 1 to 9 ASCII digits (a field of a date).
  private static func number(_ b: ArraySlice<UInt8>) -> Int? {
    guard !b.isEmpty, b.count <= 9, b.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return b.reduce(0) { $0 * 10 + Int($1 - 0x30) }
  }

  /// `Retry-After` as seconds from now: delta-seconds or an HTTP date.
  static func retryAfter(_ text: String, now: Timestamp = Timestamp.current()) -> Int64? {
    if let s = Int64(text), s >= 0 { return s }
    return parse(text).map { max(0, $0.seconds - now.seconds) }
  }
}
