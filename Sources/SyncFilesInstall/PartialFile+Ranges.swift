internal import CLinux
import SyncFilesCore
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension PartialFile {
  // MARK: - Segmented transfers (SPEC §8.3): bytes written at their offsets

  package func positional() throws(InstallError) -> Int32 {
    if positionalFD >= 0 { return positionalFD }
    try materialize()
    positionalFD = openat(folderFD, partialName, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
    guard positionalFD >= 0 else {
      throw .system(doing: "cannot open the partial file of", path: destination, errno: Errno(errno))
    }
    return positionalFD
  }

  /// Makes the partial `length` bytes long for ranges written at their
  /// offsets: its blocks reserved where the file system allows (a full disk
  /// fails here, before any range is asked for), else extended sparse.
  public func preallocate(_ length: Int64) throws(InstallError) {
    let out = try positional()
    if length > size && sf_preallocate(out, length) != 0 {
      guard errno == EOPNOTSUPP || errno == ENOSYS, ftruncate(out, off_t(length)) == 0 else {
        throw .system(
          doing: "cannot make room for", path: destination, errno: Errno(errno),
          detail: " (\(ByteSize.format(length)))")
      }
    }
    size = max(size, length)
  }

  /// Writes a range's bytes at their offset (the partial was preallocated).
  /// Every `writebackStep` bytes written so, the kernel is asked to start
  /// writing the file's dirty pages, as for one stream: without it the fsync
  /// at commit found the whole file still to write (a 1 GiB file in 4 ranges:
  /// 0.45 s after the last byte arrived).
  public func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(InstallError) {
    let out = try positional()
    guard FileIO.writeAll(out, buffer, at: Int(offset)) else {
      throw .system(doing: "cannot write the partial file of", path: destination, errno: Errno(errno))
    }
    positionalUnflushed += Int64(buffer.count)
    if positionalUnflushed >= Self.writebackStep {
      _ = sf_start_writeback(out, 0, 0)  // 0 bytes: to the end of the file
      positionalUnflushed = 0
    }
  }

  /// Makes the bytes written so far durable (`fdatasync`), before the
  /// journal may claim them (SPEC §9.2: after a power cut, a preallocated
  /// range the journal calls held must not be a hole of zeros). False when
  /// the flush failed: nothing may be claimed then.
  public func syncWritten() -> Bool {
    let out = positionalFD >= 0 ? positionalFD : fd
    return out >= 0 && fdatasync(out) == 0
  }

  /// Hashes `range` of the partial, read back (from the page cache, as a rule).
  public func hash(_ range: Range<Int64>, into hasher: SHA256Hasher) -> Bool {
    hasher.update(fd: fd, from: range.lowerBound, length: range.upperBound - range.lowerBound)
  }

  /// Cuts the partial back to `length` bytes (what one stream can continue
  /// from a segmented partial: its held prefix).
  public func truncate(to length: Int64) throws(InstallError) {
    if held != nil {
      held?.removeLast(Int(max(0, size - length)))
      size = min(size, length)
      // The caller starts its hasher over; what is held now is to be hashed afresh.
      heldHashed = false
      return
    }
    try Syscall.check({ ftruncate(fd, off_t(length)) }) { e in
      InstallError.system(doing: "cannot truncate the partial file of", path: destination, errno: e)
    }
    size = length
    writebackFrom = min(writebackFrom, length)
  }

  /// Bytes in the partial file now (another process may be appending to it).
  public func currentSize() -> Int64 {
    var st = stat()
    return fstat(fd, &st) == 0 ? Int64(st.st_size) : size
  }

  /// Takes in what another process (a source plugin) appended through the
  /// partial's path: the name must still lead to the very file this object
  /// holds open, a regular file, not a symlink or a replacement.
  public func adoptExternalWrites() throws(InstallError) {
    var mine = stat()
    var named = stat()
    guard fd >= 0, fstat(fd, &mine) == 0 else {
      throw .partialLost(destination: destination, how: .gone)
    }
    guard fstatat(folderFD, partialName, &named, AT_SYMLINK_NOFOLLOW) == 0 else {
      throw .partialLost(destination: destination, how: .moved)
    }
    guard (named.st_mode & S_IFMT) == S_IFREG, named.st_dev == mine.st_dev, named.st_ino == mine.st_ino else {
      throw .partialLost(destination: destination, how: .replaced)
    }
    size = Int64(mine.st_size)
  }
}
