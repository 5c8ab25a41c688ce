#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Small POSIX file helpers for reading manifests.
public enum FileIO {
  /// A file time (`st_mtim`, `st_ctim`) in nanoseconds since the epoch.
  package static func nanoseconds(_ t: timespec) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec) }

  public struct Failure: Error, Sendable {
    public var message: String
  }

  /// Opens a file to read, refusing a folder; `size` is nil for anything
  /// but a regular file (a pipe can be read only once, from its start).
  public static func openForReading(_ path: String) -> Result<(fd: Int32, size: Int?), Failure> {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(Failure(message: "cannot read: \(String(cString: strerror(errno)))")) }
    var st = stat()
    guard fstat(fd, &st) == 0 else {
      let failure = Failure(message: "cannot read: \(String(cString: strerror(errno)))")
      close(fd)
      return .failure(failure)
    }
    switch st.st_mode & S_IFMT {
    case S_IFDIR:
      close(fd)
      return .failure(Failure(message: "is a folder"))
    case S_IFREG: return .success((fd, Int(st.st_size)))
    default: return .success((fd, nil))
    }
  }

  /// Reads a whole file, refusing one larger than `limit` bytes.
  public static func readAll(_ path: String, limit: Int) -> Result<[UInt8], Failure> {
    let opened: (fd: Int32, size: Int?)
    switch openForReading(path) {
    case .success(let o): opened = o
    case .failure(let f): return .failure(f)
    }
    defer { close(opened.fd) }
    return readAll(fd: opened.fd, size: opened.size, limit: limit)
  }

  package static func tooLarge(limit: Int) -> String {
    "manifest is larger than the \(ByteSize.format(Int64(limit))) limit"
  }

  /// Reads `fd` to its end, refusing more than `limit` bytes.
  public static func readAll(fd: Int32, size: Int?, limit: Int) -> Result<[UInt8], Failure> {
    var out: [UInt8] = []
    // Room for the whole file at once: grown by doubling, a 13 MB manifest
    // held 17 MB (and 26 MB while it was copied).
    if let size, size > 0 && size <= limit { out.reserveCapacity(size + 1) }
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 {
        if errno == EINTR { continue }
        return .failure(Failure(message: "cannot read: \(String(cString: strerror(errno)))"))
      }
      if n == 0 { break }
      out.append(contentsOf: chunk[0..<n])
      if out.count > limit {
        return .failure(Failure(message: tooLarge(limit: limit)))
      }
    }
    return .success(out)
  }

  /// Writes all of `bytes` (at `offset`, or at the file position when nil),
  /// retrying short writes and EINTR. Returns false with errno set on failure.
  @discardableResult
  public static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int? = nil) -> Bool {
    bytes.withUnsafeBytes { writeAll(fd, $0, at: offset) }
  }

  @discardableResult
  public static func writeAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer, at offset: Int? = nil) -> Bool {
    guard let base = buf.baseAddress else { return true }
    var done = 0
    while done < buf.count {
      let n =
        offset.map { pwrite(fd, base + done, buf.count - done, off_t($0 + done)) }
        ?? write(fd, base + done, buf.count - done)
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { return false }
      done += n
    }
    return true
  }

  /// Replaces `path` with `bytes`, whole: a hidden file beside it is written
  /// (and synced, when `durable`), then renamed over it, so a reader sees
  /// the old file or the new one. Nil, or the step that failed (`create`,
  /// `write`, `replace`) with its errno.
  public static func replaceWhole(_ path: String, with bytes: [UInt8], mode: mode_t, durable: Bool) -> (
    step: String, errno: Errno
  )? {
    let temp = Paths.folder(of: path) + "/." + Paths.fileName(of: path) + ".\(getpid()).tmp"
    let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
    guard fd >= 0 else { return ("create", Errno(errno)) }
    fchmod(fd, mode)
    let written = writeAll(fd, bytes) && (!durable || fsync(fd) == 0)
    let e = Errno(errno)
    close(fd)
    guard written else {
      unlink(temp)
      return ("write", e)
    }
    guard rename(temp, path) == 0 else {
      let e = Errno(errno)
      unlink(temp)
      return ("replace", e)
    }
    return nil
  }

  /// A new file at `path` (mode 0600, replacing none) holding `bytes`, for a
  /// scratch folder of our own. False, with errno set, on failure.
  public static func writeNew(_ bytes: [UInt8], to path: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return writeAll(fd, bytes)
  }

  /// Removes a folder of files (no subfolders) that this process made.
  public static func removeTree(_ path: String) {
    for name in listFolder(path) ?? [] { unlink(path + "/" + name) }
    rmdir(path)
  }

  /// Creates `path` and any missing folders above it (mode 0755), like
  /// `mkdir -p`. Returns false with errno set on failure.
  @discardableResult
  public static func makeFolders(_ path: String) -> Bool {
    var partial = ""
    for c in path.split(separator: "/") {
      partial += "/" + c
      if mkdir(partial, 0o755) != 0 && errno != EEXIST { return false }
    }
    return true
  }

  /// Names in a folder, without `.` and `..`; nil when it cannot be listed.
  public static func listFolder(_ path: String) -> [String]? {
    names(in: path) { n in !(n.count <= 2 && n.allSatisfy { $0 == UInt8(ascii: ".") }) }  // not "." or ".."
  }

  /// Names in a folder that end with `suffix` (a partial's); nil when it
  /// cannot be listed. The other names are passed over on their bytes, never
  /// made into strings: the facts list a crowded destination folder for its
  /// partials, and on a steady run it holds none among thousands of files.
  public static func listFolder(_ path: String, endingWith suffix: String) -> [String]? {
    if suffix.isEmpty { return listFolder(path) }
    var suffix = suffix
    return suffix.withUTF8 { tail in
      names(in: path) { $0.count >= tail.count && $0.suffix(tail.count).elementsEqual(tail) }
    }
  }

  /// The names in a folder whose bytes `keep` takes; nil when it cannot be listed.
  private static func names(in path: String, keeping keep: (UnsafeBufferPointer<UInt8>) -> Bool) -> [String]? {
    guard let dir = opendir(path) else { return nil }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = nameBytes(entry)
      if keep(name) { names.append(String(decoding: name, as: UTF8.self)) }
    }
    return names
  }

  /// The bytes of an entry's name, read up to its NUL and no further. The
  /// kernel's record ends a few bytes after the name, not at the end of
  /// `d_name`'s 256: copying the whole field (as this did until the fix)
  /// read past the buffer's last record, and crashed where the buffer ended
  /// a mapping (a new thread's heap: the facts' second half).
  package static func nameBytes(_ entry: UnsafePointer<dirent>) -> UnsafeBufferPointer<UInt8> {
    let name = (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
      .assumingMemoryBound(to: UInt8.self)
    return UnsafeBufferPointer(start: name, count: strlen(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self)))
  }
}

extension stat {
  /// The modification time in nanoseconds since the epoch, as the journal and the facts keep it.
  package var modifiedNs: Int64 { FileIO.nanoseconds(st_mtim) }
  /// The inode's last change (a write, a truncation, a rename onto it, its mode) in nanoseconds.
  package var changedNs: Int64 { FileIO.nanoseconds(st_ctim) }
}

/// Which file, how large, and when its data and its inode last changed.
/// Equal identities of a file taken apart in time mean no write in between
/// when the first was taken well after the file's last change
/// (`JournalPrefetch`); `sameData` notices a plugin that wrote where it
/// must not (`ExternalSource`).
package struct FileIdentity: Equatable, Sendable {
  package var device: UInt64 = 0
  package var inode: UInt64 = 0
  package var size: Int64 = 0
  package var mtimeNs: Int64 = 0
  /// The inode's last change (a write, a truncation, its mode), never before `mtimeNs`.
  package var changedNs: Int64 = 0
  package var exists = false
  package var isRegular = false

  /// The path itself (`lstat`); `exists` false when there is nothing.
  package init(path: String) {
    var st = stat()
    guard lstat(path, &st) == 0 else {
      self.init()
      return
    }
    self.init(st)
  }

  private init() {}

  package init?(fd: Int32) {
    var st = stat()
    guard fstat(fd, &st) == 0 else { return nil }
    self.init(st)
  }

  private init(_ st: stat) {
    exists = true
    device = UInt64(st.st_dev)
    inode = UInt64(st.st_ino)
    size = Int64(st.st_size)
    mtimeNs = st.modifiedNs
    changedNs = max(st.changedNs, st.modifiedNs)
    isRegular = (st.st_mode & S_IFMT) == S_IFREG
  }

  /// The same file with the same size and modification time (its mode or owner may differ).
  package func sameData(as o: FileIdentity) -> Bool {
    exists == o.exists && device == o.device && inode == o.inode && size == o.size && mtimeNs == o.mtimeNs
  }
}
