import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// `keep_versions` (SPEC §10.4): the versions a destination had before the
/// current one, kept whole in `.syncfiles-versions/NAME/` beside it, on the
/// same file system. A version is the replaced file itself, hard-linked in
/// before the new one is renamed over it: no copy is ever in flight, and
/// each is named by when it was replaced (nanoseconds, zero-padded, so that
/// names sort by age). The oldest go first.
public enum KeptVersions {
  public static let folderName = ".syncfiles-versions"

  public struct Version: Sendable, Hashable {
    public var path: String
    public var name: String
    public var size: Int64
    /// When it was replaced.
    public var replaced: Timestamp
  }

  /// The folder of `destination`'s versions (absolute paths).
  public static func folder(of destination: String) -> String {
    Paths.folder(of: destination) + "/" + folderName + "/" + Paths.fileName(of: destination)
  }

  /// `destination`'s kept versions, the newest first.
  public static func list(_ destination: String) -> [Version] {
    let dir = folder(of: destination)
    var out: [Version] = []
    for name in FileIO.listFolder(dir) ?? [] {
      guard name.utf8.count == 20, let ns = Int64(name) else { continue }
      var st = stat()
      guard lstat(dir + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
      out.append(
        Version(
          path: dir + "/" + name, name: name, size: Int64(st.st_size), replaced: Timestamp(seconds: ns / 1_000_000_000))
      )
    }
    return out.sorted { $0.name > $1.name }
  }

  static func stamp() -> String {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    let digits = String(FileIO.nanoseconds(ts))
    return String(repeating: "0", count: max(0, 20 - digits.utf8.count)) + digits
  }

  /// Hard-links the file `name` of `folderFD` (the destination about to be
  /// replaced) into its versions folder, then removes the oldest beyond
  /// `count`. Durable: the versions folder is flushed.
  static func keep(folderFD: Int32, name: String, destination: String, count: Int) throws(InstallError) {
    let fd = try openFolder(folderFD: folderFD, name: name, destination: destination)
    defer { close(fd) }
    var made = stamp()
    while linkat(folderFD, name, fd, made, 0) != 0 {
      guard errno == EEXIST else {
        throw .system(
          doing: "cannot keep the old version of", path: destination, errno: Errno(errno),
          consequence: "; the old file is kept")
      }
      made = stamp()
    }
    prune(fd, destination: destination, keeping: count)
    fsync(fd)
  }

  /// The versions folder of `name` in `folderFD`, made if missing (0755).
  static func openFolder(folderFD: Int32, name: String, destination: String) throws(InstallError) -> Int32 {
    if mkdirat(folderFD, folderName, 0o755) != 0 && errno != EEXIST {
      throw .system(
        doing: "cannot make the versions folder of", path: destination, errno: Errno(errno),
        consequence: "; the old file is kept")
    }
    let top = openat(folderFD, folderName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard top >= 0 else {
      throw .unsafeFolder(component: folderName, destination: destination)
    }
    defer { close(top) }
    if mkdirat(top, name, 0o755) != 0 && errno != EEXIST {
      throw .system(
        doing: "cannot make the versions folder of", path: destination, errno: Errno(errno),
        consequence: "; the old file is kept")
    }
    let fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { throw .unsafeFolder(component: folderName + "/" + name, destination: destination) }
    return fd
  }

  /// Removes the oldest versions beyond `count` (names sort by age).
  static func prune(_ fd: Int32, destination: String, keeping count: Int) {
    let dir = folder(of: destination)
    let names = (FileIO.listFolder(dir) ?? []).filter { $0.utf8.count == 20 && Int64($0) != nil }.sorted()
    for name in names.dropLast(count) { unlinkat(fd, name, 0) }
  }

  /// `syncfiles rollback`: version `v` becomes the destination, atomically
  /// (a link beside it renamed over it), and the file it replaces becomes
  /// the newest version, so nothing is lost. Durable when it returns.
  public static func restore(_ v: Version, destination: String, keeping count: Int) throws(InstallError) {
    let folderPath = Paths.folder(of: destination)
    let name = Paths.fileName(of: destination)
    let folderFD = open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard folderFD >= 0 else {
      throw .system(doing: "cannot open the folder of", path: destination, errno: Errno(errno))
    }
    defer { close(folderFD) }
    let versions = try openFolder(folderFD: folderFD, name: name, destination: destination)
    defer { close(versions) }
    let temp = "." + name + ".syncfiles-rollback"
    unlinkat(folderFD, temp, 0)  // a rollback a crash cut short
    guard linkat(versions, v.name, folderFD, temp, 0) == 0 else {
      throw .system(doing: "cannot put back the version \(v.name) of", path: destination, errno: Errno(errno))
    }
    var st = stat()
    if fstatat(folderFD, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == S_IFREG {
      var made = stamp()
      while linkat(folderFD, name, versions, made, 0) != 0 && errno == EEXIST { made = stamp() }
    }
    guard renameat(folderFD, temp, folderFD, name) == 0 else {
      let e = Errno(errno)
      unlinkat(folderFD, temp, 0)
      throw .system(doing: "cannot put back the version \(v.name) of", path: destination, errno: e)
    }
    fsync(folderFD)
    unlinkat(versions, v.name, 0)
    prune(versions, destination: destination, keeping: count)
    fsync(versions)
  }
}
