#if canImport(Glibc)
  import Glibc
#endif

/// Scans of a string's UTF-8 bytes in place. A native string keeps its bytes
/// contiguous, and a loop over a buffer costs about a tenth of what the
/// generic `utf8` view costs a byte, and the decoder checks every URL and
/// path of a manifest this way.
extension StringProtocol {
  /// Runs `body` on the bytes in place, or on a copy where they are not contiguous.
  @inline(__always)
  package func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
    if let r = try utf8.withContiguousStorageIfAvailable(body) { return r }
    return try Array(utf8).withUnsafeBufferPointer(body)
  }

  /// Whether any byte satisfies `test`.
  @inline(__always)
  package func containsByte(where test: (UInt8) -> Bool) -> Bool {
    withUTF8Bytes { bytes in
      for b in bytes where test(b) { return true }
      return false
    }
  }

  /// Whether the bytes are exactly `other`.
  package func hasBytes(_ other: UnsafeBufferPointer<UInt8>) -> Bool {
    withUTF8Bytes { bytes in
      guard bytes.count == other.count else { return false }
      guard let a = bytes.baseAddress, let b = other.baseAddress else { return true }
      return memcmp(a, b, bytes.count) == 0
    }
  }
}

extension String {
  /// `head`, then `separator` (when given), then `tail`, made in one
  /// allocation of the exact size. `a + "/" + b` makes an intermediate
  /// string and grows the result past its size, for every entry of a
  /// manifest.
  package init(_ head: String, _ separator: UInt8?, _ tail: String) {
    var head = head
    var tail = tail
    let count = head.utf8.count + (separator == nil ? 0 : 1) + tail.utf8.count
    self = head.withUTF8 { h in
      tail.withUTF8 { t in
        String(unsafeUninitializedCapacity: count) { out in
          var k = out.initialize(fromContentsOf: h)
          if let separator {
            out[k] = separator
            k += 1
          }
          return out[k...].initialize(fromContentsOf: t)
        }
      }
    }
  }
}

extension [UInt8] {
  /// Appends a string's UTF-8 bytes with one copy (the generic `utf8` view
  /// costs many times more a cell, and a large manifest's plan table has hundreds of thousands).
  package mutating func appendUTF8(_ s: some StringProtocol) {
    s.withUTF8Bytes { append(contentsOf: $0) }
  }

  /// Appends `count` spaces (none when `count` is not positive).
  package mutating func appendSpaces(_ count: Int) {
    for _ in 0..<Swift.max(count, 0) { append(0x20) }
  }
}
