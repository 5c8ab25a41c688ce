/// Percent-encoding (RFC 3986 §2.1), decoded: a URL's path segment as the
/// name a checksum list gives the file (`os%20image.iso` is `os image.iso`).
public enum PercentText {
  /// `text` with each `%XX` decoded; a `%` not followed by two hex digits
  /// stays, and bytes that do not form UTF-8 are replaced.
  public static func decode(_ text: String) -> String {
    guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
    let u = Array(text.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(u.count)
    var i = 0
    while i < u.count {
      if u[i] == UInt8(ascii: "%"), i + 2 < u.count, let hi = Hex.value(of: u[i + 1]), let lo = Hex.value(of: u[i + 2])
      {
        out.append(hi << 4 | lo)
        i += 3
      } else {
        out.append(u[i])
        i += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

}
