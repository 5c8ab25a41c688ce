internal import CLinux
import SyncFilesCore
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A partial file being written for one destination, and its atomic install.
///
/// Every path is opened relative to a folder descriptor, walking down from
/// `root` one component at a time with `O_NOFOLLOW`, so no symlink inside
/// root can steer a write outside it. The partial file is hidden in the
/// destination's own folder (`.NAME.syncfiles-partial`), created with
/// `O_EXCL` and mode 0600. `commit` makes the bytes durable, renames the
/// partial over the destination and makes the rename durable: the
/// destination is at every instant the old complete file or the new one.
/// Its folders are walked in `PartialFile+Folders.swift`, and the bytes of
/// a segmented transfer written at their offsets in `PartialFile+Ranges.swift`.
public final class PartialFile: @unchecked Sendable {
  // Handed from thread to thread (runner, transfer engine, installer), used by one at a time.
  public let destination: String
  /// The destination's folder, shared with the other partials in it (nil while the bytes are held).
  private(set) var folder: Folder?
  package var folderFD: Int32 { folder?.fd ?? -1 }
  var fd: Int32
  let name: String
  let partialName: String
  /// Bytes in the partial (in the file, or held).
  public internal(set) var size: Int64
  /// A small body held in memory, no file made yet (see `init(holding:relative:capacity:)`).
  var held: [UInt8]?
  /// Where the file of held bytes is to be made.
  let root: String
  let relative: String
  /// True while the bytes are held in memory and no file exists.
  public var isHeld: Bool { held != nil }
  /// The held bytes went to a hasher (`hashHeld`).
  var heldHashed = false

  /// Feeds the bytes held in memory to `hasher`, once; nothing for a
  /// partial in a file (its bytes are hashed as they are written). A held
  /// body is hashed by the thread that verifies it or writes it out, not by
  /// the transfer thread as it arrives: that thread takes every request of
  /// the session in turn.
  public func hashHeld(into hasher: SHA256Hasher) {
    guard let held, !heldHashed else { return }
    heldHashed = true
    hasher.update(held)
  }

  public static func partialName(for name: String) -> String { Paths.decorated(name, prefix: ".", suffix: suffix) }
  /// How every partial's name ends.
  public static let suffix = ".syncfiles-partial"

  /// Where partial data of a destination lives: hidden, in the destination's own folder.
  public static func path(for destination: String) -> String {
    Paths.sibling(of: destination, prefix: ".", suffix: suffix)
  }

  /// Opens the partial for `relative` (normalized, inside `root`): appended to
  /// when `resume` and it exists, else started afresh (any stale one removed).
  public convenience init(root: String, relative: String, resume: Bool) throws(InstallError) {
    try self.init(naming: root, relative)
    size = try openFile(resume: resume)
  }

  /// A partial whose bytes are held in memory as they arrive and written to
  /// its file only by `materialize` (on the install thread, as a rule): a
  /// small body costs the transfer thread no file, no write and no journal
  /// record. No file exists until then, so nothing is left
  /// to resume after a kill; the transfer writes it out when it must be kept.
  public convenience init(holding root: String, relative: String, capacity: Int) throws(InstallError) {
    try self.init(naming: root, relative)
    held = []
    held?.reserveCapacity(capacity)
  }

  init(naming root: String, _ relative: String) throws(InstallError) {
    destination = String(root, UInt8(ascii: "/"), relative)
    name = try Self.lastName(of: relative)
    partialName = PartialFile.partialName(for: name)
    self.root = root
    self.relative = relative
    fd = -1
    size = 0
  }

  /// The last component of `relative`, which has no `.` or `..` component.
  /// Checked byte by byte when it is plain (as destinations are): splitting
  /// it cost the transfer thread time for every file.
  static func lastName(of relative: String) throws(InstallError) -> String {
    if Paths.isPlainRelative(relative) { return Paths.fileName(of: relative) }
    let parts = relative.split(separator: "/")
    guard let last = parts.last, !parts.contains(where: { $0 == ".." || $0 == "." }) else {
      throw .notNormalized(relative: relative)
    }
    return String(last)
  }

  /// Opens (or creates) the file in its folder; returns the bytes it holds.
  func openFile(resume: Bool) throws(InstallError) -> Int64 {
    var dir = try Folder.of(root: root, fileAt: relative, create: true, for: destination)
    var (opened, created) = Self.openPartial(partialName, in: dir.fd, resume: resume)
    if opened < 0 && errno == ENOENT {
      // The folder held open was removed meanwhile: walked to (and made) again.
      dir = try Folder.of(root: root, fileAt: relative, create: true, fresh: true, for: destination)
      (opened, created) = Self.openPartial(partialName, in: dir.fd, resume: resume)
    }
    guard opened >= 0 else {
      throw .system(doing: "cannot create the partial file for", path: destination, errno: Errno(errno))
    }
    folder = dir
    fd = opened
    var st = stat()
    return created || fstat(fd, &st) != 0 ? 0 : Int64(st.st_size)
  }

  /// Writes held bytes to the partial's file, created now; nothing when the
  /// bytes are in a file already. On failure the partial is discarded.
  public func materialize() throws(InstallError) {
    guard let bytes = held else { return }
    held = nil
    size = 0
    do {
      _ = try openFile(resume: false)
      try write(bytes)
    } catch {
      discard()
      throw error
    }
  }

  /// The partial `name` in the folder `dir`: opened to append to when
  /// `resume` and it exists, else created empty (`created`); -1 and errno on failure.
  static func openPartial(_ name: String, in dir: Int32, resume: Bool) -> (fd: Int32, created: Bool) {
    if resume {
      let fd = openat(dir, name, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
      if fd >= 0 { return (fd, false) }
    }
    // O_APPEND in both cases: after `truncate` the next write lands at 0, not past a hole.
    let flags = O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
    var fd = openat(dir, name, flags, 0o600)
    if fd < 0 && errno == EEXIST {
      // A stale partial (or whatever stands in its place) goes; usually there is none,
      // so the removal is tried only when the create finds one.
      unlinkat(dir, name, 0)
      fd = openat(dir, name, flags, 0o600)
    }
    return (fd, true)
  }

  /// A second descriptor without O_APPEND (with it, Linux `pwrite` appends
  /// whatever the offset), opened on first use.
  var positionalFD: Int32 = -1

  /// Bytes written at offsets since the last early writeback.
  var positionalUnflushed: Int64 = 0

  /// Size and modification time (ns) of the file `install` renamed into
  /// place, taken from its descriptor; nil before the install.
  public internal(set) var installedFact: (size: Int64, mtimeNs: Int64)?

  deinit {
    closePositional()
    if fd >= 0 { close(fd) }
  }

  func closePositional() {
    if positionalFD >= 0 { close(positionalFD) }
    positionalFD = -1
  }

  /// Appends bytes to the partial file.
  public func write(_ bytes: [UInt8]) throws(InstallError) {
    if held != nil {
      held?.append(contentsOf: bytes)
      size += Int64(bytes.count)
      return
    }
    guard FileIO.writeAll(fd, bytes) else {
      throw .system(doing: "cannot write the partial file of", path: destination, errno: Errno(errno))
    }
    size += Int64(bytes.count)
  }

  /// Appends bytes straight from a transfer's buffer. Every `writebackStep`
  /// bytes the kernel is asked to start writing them to disk, so the disk
  /// works while the network does and the fsync at commit finds little left.
  public func write(_ buffer: UnsafeRawBufferPointer) throws(InstallError) {
    if held != nil {
      held?.append(contentsOf: buffer)
      size += Int64(buffer.count)
      return
    }
    guard FileIO.writeAll(fd, buffer) else {
      throw .system(doing: "cannot write the partial file of", path: destination, errno: Errno(errno))
    }
    size += Int64(buffer.count)
    if size - writebackFrom >= Self.writebackStep {
      _ = sf_start_writeback(fd, writebackFrom, size - writebackFrom)
      writebackFrom = size
    }
  }

  static let writebackStep: Int64 = 1 << 20
  /// Where the next early writeback starts.
  var writebackFrom: Int64 = 0

  /// How `fill(from:)` copied.
  public enum FillMethod: String, Sendable {
    /// The file system shares the extents (FICLONE): no bytes were copied.
    case reflink
    /// The kernel copied the bytes (copy_file_range), or read and write did.
    case copy
  }

  /// Fills the empty partial with the bytes of the regular file at `source`
  /// (SPEC §8.3: a second destination of the same sha256): a reflink where
  /// the file system shares extents, else a copy in the kernel, else read
  /// and write. The caller commits it as any partial.
  public func fill(from source: String) throws(InstallError) -> FillMethod {
    try materialize()
    let src = open(source, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard src >= 0 else {
      throw .system(doing: "cannot read", path: source, errno: Errno(errno), detail: " to copy it")
    }
    defer { close(src) }
    var st = stat()
    guard fstat(src, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
      throw .notRegularFile(path: source, consequence: "is not a regular file; it cannot be copied")
    }
    let length = Int64(st.st_size)
    try truncate()
    // The partial's own descriptor is O_APPEND, which FICLONE and
    // copy_file_range refuse: a second one, without it, does the copy.
    let out = openat(folderFD, partialName, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
    guard out >= 0 else {
      throw .system(doing: "cannot open the partial file of", path: destination, errno: Errno(errno))
    }
    defer { close(out) }
    if sf_clone_file(out, src) == 0 {
      size = length
      return .reflink
    }
    var copied: Int64 = 0
    while copied < length {
      let n = sf_copy_file_range(src, out, UInt(length - copied))
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { break }
      copied += Int64(n)
    }
    // Where the kernel cannot copy between these files: read and write.
    var buf = [UInt8](repeating: 0, count: 1 << 20)
    while copied < length {
      let n = buf.withUnsafeMutableBytes {
        pread(src, $0.baseAddress, min($0.count, Int(length - copied)), off_t(copied))
      }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else {
        if n == 0 { throw .sourceShrank(source: source) }
        throw .system(doing: "cannot read", path: source, errno: Errno(errno), detail: " to copy it")
      }
      let ok = buf.withUnsafeBytes {
        FileIO.writeAll(out, UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: Int(copied))
      }
      guard ok else { throw .system(doing: "cannot write the partial file of", path: destination, errno: Errno(errno)) }
      copied += Int64(n)
    }
    size = length
    return .copy
  }

  /// Cuts the partial back to empty (a server that ignored Range sends the whole body).
  public func truncate() throws(InstallError) { try truncate(to: 0) }

  /// fsync, set `mode`, rename over the destination, fsync the folder. On any
  /// failure the partial is discarded (after a failed fsync its pages may be
  /// gone: it is never retried) and the old destination is left as it was.
  public func commit(mode: UInt32?, keepVersions: Int = 0) throws(InstallError) {
    try flush()
    try install(mode: mode, keepVersions: keepVersions)
    try syncFolder()
  }

  /// Makes the partial's bytes durable (step 1 of `commit`). A failure discards it.
  public func flush() throws(InstallError) {
    try materialize()
    try Syscall.check({ fsync(fd) }) { e in
      discard()
      return InstallError.system(
        doing: "cannot flush", path: destination, errno: e, detail: " to disk", consequence: "; the old file is kept")
    }
  }

  /// Sets the mode and renames the partial over the destination (step 2 of
  /// `commit`, after its bytes are durable). Refuses to replace anything but a
  /// regular file; a symlink at the destination is replaced, never followed.
  /// `keepVersions` > 0: the file replaced is kept as a version first.
  public func install(mode: UInt32?, keepVersions: Int = 0) throws(InstallError) {
    try materialize()
    var st = stat()
    if fstatat(folderFD, name, &st, AT_SYMLINK_NOFOLLOW) == 0 {
      let kind = st.st_mode & S_IFMT
      if kind != S_IFREG && kind != S_IFLNK {
        discard()
        throw .notRegularFile(
          path: destination, consequence: "exists and is not a regular file; refusing to replace it")
      }
      if kind == S_IFREG && keepVersions > 0 {
        do throws(InstallError) {
          try KeptVersions.keep(folderFD: folderFD, name: name, destination: destination, count: keepVersions)
        } catch {
          discard()
          throw error
        }
      }
    }
    try Syscall.check({ fchmod(fd, mode_t(mode ?? 0o644)) }) { e in
      discard()
      return InstallError.system(
        doing: "cannot set the mode of", path: destination, errno: e, consequence: "; the old file is kept")
    }
    try Syscall.check({ renameat(folderFD, partialName, folderFD, name) }) { e in
      discard()
      return InstallError.system(
        doing: "cannot install", path: destination, errno: e, consequence: "; the old file is kept")
    }
    // The file renamed into place, through its own descriptor: no second
    // lookup by name, and never a file someone put there after the rename.
    var placed = stat()
    if fstat(fd, &placed) == 0 { installedFact = (Int64(placed.st_size), FileIO.nanoseconds(placed.st_mtim)) }
    close(fd)
    fd = -1
    madeReader = nil
    closePositional()
  }

  /// Makes the rename durable (step 3 of `commit`).
  public func syncFolder() throws(InstallError) {
    try Syscall.check({ fsync(folderFD) }) { e in
      InstallError.system(doing: "installed", path: destination, errno: e, detail: ", but flushing its folder failed")
    }
  }

  /// The file system and folder a partial lives in (install groups flush each folder once).
  public struct Placement: Hashable, Sendable {
    public var device: UInt64
    public var folder: UInt64
  }
  /// Examined once for all the partials of the folder.
  public var placement: Placement { folder?.placement ?? Placement(device: 0, folder: 0) }

  /// Flushes the whole file system holding this partial (`syncfs`): one call
  /// makes every partial on it durable. True on success; false, having done
  /// nothing, where `syncfs` is not known to flush (`FileSystemKind`): each
  /// partial is then flushed by itself.
  public func flushFileSystem() -> Bool { FileSystemKind.syncfsFlushesAll(fd) && sf_syncfs(fd) == 0 }

  /// A descriptor of its own through which the hashing thread reads written
  /// bytes back (`SHA256Hasher.update(_:writtenAt:in:)`), made on first use;
  /// nil once the partial is closed, or when no descriptor is left.
  public var reader: FileReader? {
    if let madeReader { return madeReader }
    if held != nil { return nil }
    madeReader = fd >= 0 ? FileReader(duplicating: fd) : nil
    return madeReader
  }
  var madeReader: FileReader?

  /// Feeds the bytes already in the partial to `hasher` (once, when resuming).
  public func hashExisting(into hasher: SHA256Hasher) -> Bool { hasher.update(fd: fd, length: size) }

  /// Removes the partial file.
  public func discard() {
    if held != nil {
      // No file was made: there is nothing to remove.
      held = nil
      size = 0
      return
    }
    closePositional()
    madeReader = nil
    if fd >= 0 {
      close(fd)
      fd = -1
    }
    unlinkat(folderFD, partialName, 0)
  }
}
