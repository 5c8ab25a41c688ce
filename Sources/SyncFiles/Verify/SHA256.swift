import CCrypto

#if canImport(Glibc)
  import Glibc
#endif

/// Streaming SHA-256 over libcrypto. Feed bytes as they arrive; `hex`
/// finishes. Not thread-safe: one owner at a time.
public final class SHA256Hasher {
  private let ctx: OpaquePointer

  public init() {
    guard let c = sf_sha256_new() else { fatalError("libcrypto cannot create a SHA-256 context") }
    ctx = c
  }

  deinit { sf_sha256_free(ctx) }

  public func update(_ buffer: UnsafeRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    _ = sf_sha256_update(ctx, base, buffer.count)
  }

  public func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// Starts over (a server that ignored Range sends the whole body again).
  public func reset() { _ = sf_sha256_reset(ctx) }

  /// The digest as lower-case hex; the hasher is reset afterwards.
  public func finish() -> String {
    var out = [UInt8](repeating: 0, count: 32)
    _ = sf_sha256_final(ctx, &out)
    reset()
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var hex = [UInt8]()
    hex.reserveCapacity(64)
    for b in out {
      hex.append(digits[Int(b >> 4)])
      hex.append(digits[Int(b & 15)])
    }
    return String(decoding: hex, as: UTF8.self)
  }

  /// Feeds the first `length` bytes of an open file (a partial being resumed).
  /// Returns false on a read error or when the file is shorter.
  public func update(fd: Int32, length: Int64) -> Bool {
    var buf = [UInt8](repeating: 0, count: 1 << 20)
    var done: Int64 = 0
    while done < length {
      let want = Int(min(Int64(buf.count), length - done))
      let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(done)) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { return false }
      buf.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      done += Int64(n)
    }
    return true
  }
}
