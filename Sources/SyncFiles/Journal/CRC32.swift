internal import CFold

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

  /// Whether this CPU folds 16 bytes at a time (`CFold`): a buffer of 64
  /// bytes or more is then folded to 16, and only those and the bytes after
  /// the last whole block go through the tables (a steady run reads and
  /// writes every record).
  static let folds = sf_crc_fold_available() != 0

  public static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
    checksum(buffer, folding: folds)
  }

  /// `folding: false` takes the tables whatever the CPU (tests compare the two).
  static func checksum(_ buffer: UnsafeRawBufferPointer, folding: Bool) -> UInt32 {
    guard folding && folds, let base = buffer.baseAddress, buffer.count >= 64 else {
      return update(0xFFFF_FFFF, buffer) ^ 0xFFFF_FFFF
    }
    let blocks = buffer.count / 16
    var folded: (UInt64, UInt64) = (0, 0)
    let c = withUnsafeMutableBytes(of: &folded) { f in
      sf_crc32_fold(
        0xFFFF_FFFF, base.assumingMemoryBound(to: UInt8.self), blocks,
        f.baseAddress!.assumingMemoryBound(to: UInt8.self))
      return update(0, UnsafeRawBufferPointer(f))
    }
    return update(c, UnsafeRawBufferPointer(rebasing: buffer[(blocks * 16)...])) ^ 0xFFFF_FFFF
  }

  /// The CRC register `c` (not inverted) after `buffer`, through the tables.
  static func update(_ c: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 {
    tables.withUnsafeBufferPointer { t in
      var c = c
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
      return c
    }
  }
}
