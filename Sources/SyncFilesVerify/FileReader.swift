internal import CCrypto
import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// A descriptor of its own for reading a file back (a duplicate, so the
/// file's owner may close its own at any time): closed when the last piece
/// and owner let go of it, so a number reused for another file is never
/// read in its place.
public final class FileReader: @unchecked Sendable {
  package let fd: Int32

  /// Nil when no descriptor is left (EMFILE): the caller hashes inline.
  public init?(duplicating fd: Int32) {
    let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
    guard copy >= 0 else { return nil }
    self.fd = copy
  }

  deinit { close(fd) }

  /// Reads `count` bytes at `offset` into `to`, all of them: the errno of a
  /// failed read, `.short` when the file ends first.
  func read(into to: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> HashContext.ReadFailure? {
    Self.read(fd, into: to, count: count, at: offset)
  }

  /// `read(into:count:at:)` on any descriptor.
  static func read(_ fd: Int32, into to: UnsafeMutableRawPointer, count: Int, at offset: Int64)
    -> HashContext.ReadFailure?
  {
    var done = 0
    while done < count {
      let n = pread(fd, to.advanced(by: done), count - done, off_t(offset + Int64(done)))
      if n < 0 && errno == EINTR { continue }
      if n < 0 { return .errno(Errno(errno)) }
      if n == 0 { return .short }
      done += n
    }
    return nil
  }
}
