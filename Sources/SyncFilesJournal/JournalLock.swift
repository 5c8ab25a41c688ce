internal import CLinux
import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An exclusive flock on `JOURNAL.lock`, opened with O_CLOEXEC so hooks and
/// plugins never inherit it. The holder's pid is written inside.
package final class JournalLock {
  private let fd: Int32

  private init(fd: Int32) { self.fd = fd }

  static func acquire(journal: String) throws(JournalError) -> JournalLock {
    let path = journal + ".lock"
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .system(doing: "cannot open lock", path: path, errno: Errno(errno)) }
    if flock(fd, LOCK_EX | LOCK_NB) != 0 {
      let pid = holder(fd: fd, path: path)
      close(fd)
      throw .locked(journal: journal, holder: pid)
    }
    ftruncate(fd, 0)
    let text = Array("\(getpid())\n".utf8)
    _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    return JournalLock(fd: fd)
  }

  /// Who holds the lock: the kernel's word (`/proc/locks`, by the lock
  /// file's device and inode), else the pid the holder wrote in the file,
  /// which is stale when another program took the lock.
  private static func holder(fd: Int32, path: String) -> String {
    var st = stat()
    if fstat(fd, &st) == 0, case .success(let b) = FileIO.readAll("/proc/locks", limit: 1 << 20),
      let pid = flockHolder(in: String(decoding: b, as: UTF8.self), device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    {
      return String(pid)
    }
    let written = FileIO.readAll(path, limit: 64).map { String(decoding: $0, as: UTF8.self) }
    return (try? written.get())?.split(separator: "\n").first.map(String.init) ?? "?"
  }

  /// The pid holding a flock on the file (`device`, `inode`) in the text of
  /// `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 22522 fe:00:16220245 0 EOF`:
  /// the device's major and minor in hex, the inode in decimal). Waiters
  /// (`->` lines) hold nothing.
  static func flockHolder(in text: String, device: UInt64, inode: UInt64) -> Int? {
    let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
    let minor = (device & 0xff) | ((device >> 12) & ~0xff)
    for line in text.split(separator: "\n") where !line.contains("->") {
      let f = line.split(separator: " ", omittingEmptySubsequences: true)
      guard f.count >= 6, f[1] == "FLOCK", let pid = Int(f[4]) else { continue }
      let id = f[5].split(separator: ":")
      guard id.count == 3, UInt64(id[0], radix: 16) == major, UInt64(id[1], radix: 16) == minor,
        UInt64(id[2]) == inode
      else { continue }
      return pid
    }
    return nil
  }

  deinit {
    flock(fd, LOCK_UN)
    close(fd)
  }
}
