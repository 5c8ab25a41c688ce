internal import CCrypto
import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// A digest of a whole file, read from its start, for the checks that need
/// another than the SHA-256 taken while the bytes arrived.
public enum FileDigest {
  public enum Kind: Sendable {
    case sha512, blake2b512, md5
  }

  /// The raw digest of the file at `path`.
  public static func compute(_ kind: Kind, ofFileAt path: String) -> Result<[UInt8], VerifyError> {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return .failure(.unreadable(path: path, errno: Errno(errno))) }
    defer { close(fd) }
    let made: OpaquePointer?
    switch kind {
    case .sha512: made = sf_sha512_new()
    case .blake2b512: made = sf_blake2b512_new()
    case .md5: made = sf_md5_new()
    }
    guard let ctx = made else { return .failure(.toolFailed(tool: "libcrypto", why: "the digest is unavailable")) }
    defer { sf_sha256_free(ctx) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n >= 0 else { return .failure(.unreadable(path: path, errno: Errno(errno))) }
      if n == 0 { break }
      _ = buffer.withUnsafeBytes { sf_sha256_update(ctx, $0.baseAddress, n) }
    }
    var out = [UInt8](repeating: 0, count: 64)
    let size = out.withUnsafeMutableBufferPointer { sf_digest_final(ctx, $0.baseAddress) }
    guard size > 0 else { return .failure(.toolFailed(tool: "libcrypto", why: "the digest could not be finished")) }
    return .success(Array(out.prefix(Int(size))))
  }

  /// `body` with the whole file's bytes, mapped read-only (Ed25519 signs a
  /// message whole; the mapping costs page cache, not memory of our own).
  public static func withMappedFile<T>(
    _ path: String, _ body: (UnsafeRawBufferPointer) -> T
  ) -> Result<T, VerifyError> {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return .failure(.unreadable(path: path, errno: Errno(errno))) }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else { return .failure(.unreadable(path: path, errno: Errno(errno))) }
    let size = Int(st.st_size)
    if size == 0 { return .success(body(UnsafeRawBufferPointer(start: nil, count: 0))) }
    guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else {
      return .failure(.unreadable(path: path, errno: Errno(errno)))
    }
    defer { munmap(p, size) }
    _ = madvise(p, size, MADV_SEQUENTIAL)
    return .success(body(UnsafeRawBufferPointer(start: p, count: size)))
  }
}
