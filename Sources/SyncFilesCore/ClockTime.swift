/// A time of the local day written `HH:MM` (a window's ends, a rate
/// timetable's entries), as minutes after midnight.
public enum ClockTime {
  /// Nil unless one or two digits of hour, a colon and two of minute;
  /// `24:00` only where `endOfDay` allows it (a window that ends at midnight).
  public static func minute(_ text: Substring, endOfDay: Bool = false) -> Int? {
    let hm = text.trimmingSpaces().split(separator: ":", omittingEmptySubsequences: false)
    guard hm.count == 2, (1...2).contains(hm[0].count), hm[1].count == 2, let h = Int(hm[0]), let m = Int(hm[1]),
      (0...59).contains(m), (0..<24).contains(h) || (endOfDay && h == 24 && m == 0)
    else { return nil }
    return h * 60 + m
  }
}
