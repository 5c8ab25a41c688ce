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
    let f = text.split(separator: " ")
    guard f.count == 6, f[5] == "GMT", let day = Int(f[1]), let m = months.firstIndex(of: String(f[2])),
      let year = Int(f[3])
    else { return nil }
    let hms = f[4].split(separator: ":").compactMap { Int($0) }
    // A server's date is text from the network: a year such as 999999999999
    // would overflow the calendar arithmetic, so only four-digit years count.
    guard hms.count == 3, (1...9999).contains(year), (1...Timestamp.daysInMonth(year, m + 1)).contains(day),
      (0...23).contains(hms[0]), (0...59).contains(hms[1]), (0...60).contains(hms[2])
    else { return nil }
    return Timestamp(year: year, month: m + 1, day: day, hour: hms[0], minute: hms[1], second: hms[2])
  }

  /// `Retry-After` as seconds from now: delta-seconds or an HTTP date.
  static func retryAfter(_ text: String, now: Timestamp = Timestamp.current()) -> Int64? {
    if let s = Int64(text), s >= 0 { return s }
    return parse(text).map { max(0, $0.seconds - now.seconds) }
  }
}
