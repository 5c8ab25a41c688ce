/// CRC-32 (IEEE 802.3, as zlib), for journal record checksums.
public enum CRC32 {
  static let table: [UInt32] = (0..<256).map { n -> UInt32 in
    var c = UInt32(n)
    for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
  }

  public static func checksum<S: Sequence>(_ bytes: S) -> UInt32 where S.Element == UInt8 {
    var c: UInt32 = 0xFFFF_FFFF
    for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
    return c ^ 0xFFFF_FFFF
  }
}
