/// CRC-32 (IEEE 802.3, as zlib), for journal record checksums.
public enum CRC32 {
  /// Eight tables of 256 entries: table 0 is the bytewise one; table k
  /// advances an entry of table k-1 by one more zero byte, so eight bytes
  /// are taken per step (slicing-by-8).
  static let tables: [UInt32] = {
    var t = [UInt32](repeating: 0, count: 8 * 256)
    for n in 0..<256 {
      var c = UInt32(n)
      for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
      t[n] = c
    }
    for k in 1..<8 {
      for n in 0..<256 {
        let prev = t[(k - 1) * 256 + n]
        t[k * 256 + n] = (prev >> 8) ^ t[Int(prev & 0xFF)]
      }
    }
    return t
  }()

  public static func checksum<S: Sequence>(_ bytes: S) -> UInt32 where S.Element == UInt8 {
    if let c = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) { return c }
    return Array(bytes).withUnsafeBytes { checksum($0) }
  }

  public static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
    tables.withUnsafeBufferPointer { t in
      var c: UInt32 = 0xFFFF_FFFF
      var i = 0
      let n = buffer.count
      while n - i >= 8 {
        let lo = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: i, as: UInt32.self)) ^ c
        let hi = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self))
        c =
          t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
          ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
          ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
          ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
        i += 8
      }
      while i < n {
        c = t[Int((c ^ UInt32(buffer[i])) & 0xFF)] ^ (c >> 8)
        i += 1
      }
      return c ^ 0xFFFF_FFFF
    }
  }
}
