internal import CLinux
import SyncFilesCore
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The folders of destinations, walked from root without following a symlink.
extension PartialFile {
  /// The folder of a destination, opened from `root` one component at a
  /// time with `O_NOFOLLOW` (created on the way when `create`).
  package static func openFolder(root: String, parts: ArraySlice<String>, create: Bool, for destination: String)
    throws(InstallError) -> Int32
  {
    // Root itself is the user's choice and may be a symlink; below it, nothing may be.
    var dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if dir < 0 && errno == ENOENT && create {
      // Created on first use only: no mkdir calls for every file of a run.
      guard FileIO.makeFolders(root) else {
        throw .system(doing: "cannot create root", path: root, errno: Errno(errno))
      }
      dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }
    guard dir >= 0 else { throw .system(doing: "cannot open root", path: root, errno: Errno(errno)) }
    for component in parts {
      if create && mkdirat(dir, component, 0o755) != 0 && errno != EEXIST {
        let e = Errno(errno)
        close(dir)
        throw .system(doing: "cannot create folder '\(component)' for", path: destination, errno: e)
      }
      let next = openat(dir, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      let err = errno
      close(dir)
      guard next >= 0 else {
        if err == ELOOP || err == ENOTDIR { throw .unsafeFolder(component: component, destination: destination) }
        throw .system(doing: "cannot open '\(component)' on the way to", path: destination, errno: Errno(err))
      }
      dir = next
    }
    return dir
  }

  /// Sets the mode of an installed destination (`relative` inside `root`)
  /// without a transfer (SPEC §8.2); never follows a symlink, touches only a
  /// regular file.
  public static func correctMode(root: String, relative: String, mode: UInt32) throws(InstallError) {
    let destination = root + "/" + relative
    let parts = relative.split(separator: "/").map(String.init)
    guard let last = parts.last else { return }
    let dir = try openFolder(root: root, parts: parts.dropLast(), create: false, for: destination)
    defer { close(dir) }
    let fd = openat(dir, last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
      throw .system(doing: "cannot open", path: destination, errno: Errno(errno), detail: " to set its mode")
    }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
      throw .notRegularFile(path: destination, consequence: "is not a regular file; its mode is left alone")
    }
    guard fchmod(fd, mode_t(mode)) == 0 else {
      throw .system(
        doing: "cannot set the mode of", path: destination, errno: Errno(errno), detail: " to \(String(mode, radix: 8))"
      )
    }
  }

  /// Removes partial data left beside a destination that is now up to date
  /// (a kill can leave one the journal never heard of). Never follows a
  /// symlink on the way; a missing partial is not an error.
  public static func removeLeftover(root: String, relative: String) throws(InstallError) {
    let parts = relative.split(separator: "/").map(String.init)
    guard let last = parts.last else { return }
    let dir = try openFolder(root: root, parts: parts.dropLast(), create: false, for: root + "/" + relative)
    defer { close(dir) }
    let name = partialName(for: last)
    guard unlinkat(dir, name, 0) == 0 || errno == ENOENT else {
      throw .system(doing: "cannot remove the stale partial file of", path: root + "/" + relative, errno: Errno(errno))
    }
  }
}
