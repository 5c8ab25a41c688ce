/// Lower-case hexadecimal digits, written as bytes (digests, fingerprints,
/// the journal's CRCs).
package enum Hex {
  /// The last `digits` hex digits of `value`, most significant first.
  package static func append<S: ByteSink>(_ value: UInt64, digits: Int, to out: inout S) {
    for i in stride(from: digits - 1, through: 0, by: -1) {
      let d = UInt8((value >> UInt64(4 * i)) & 0xF)
      out.put(d < 10 ? 0x30 + d : 0x57 + d)
    }
  }

  /// `bytes` as lower-case hex.
  package static func string(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
      out.append(b >> 4 < 10 ? 0x30 + b >> 4 : 0x57 + b >> 4)
      out.append(b & 15 < 10 ? 0x30 + b & 15 : 0x57 + b & 15)
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// The bytes hex digits (either case) spell; nil for an odd count or another character.
  package static func bytes(_ hex: String) -> [UInt8]? {
    let u = Array(hex.utf8)
    guard u.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(u.count / 2)
    for i in stride(from: 0, to: u.count, by: 2) {
      guard let hi = value(of: u[i]), let lo = value(of: u[i + 1]) else { return nil }
      out.append(hi << 4 | lo)
    }
    return out
  }

  /// The value of one hex digit (either case).
  package static func value(of c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: return c - 0x30
    case 0x61...0x66: return c - 0x57
    case 0x41...0x46: return c - 0x37
    default: return nil
    }
  }
}
