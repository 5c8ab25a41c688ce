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
      if u[i] == UInt8(ascii: "%"), i + 2 < u.count, let hi = nibble(u[i + 1]), let lo = nibble(u[i + 2]) {
        out.append(hi << 4 | lo)
        i += 3
      } else {
        out.append(u[i])
        i += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  static func nibble(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: return c - 0x30
    case 0x61...0x66: return c - 0x57
    case 0x41...0x46: return c - 0x37
    default: return nil
    }
  }
}
