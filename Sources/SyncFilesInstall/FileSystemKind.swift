internal import CLinux
import SyncFilesCore
import SyncFilesVerify

/// Whether one `syncfs(2)` makes every file written on a file system
/// durable. The kernel asks the file system's own `sync_fs`, and many have
/// none or an empty one: FUSE (unless the daemon implements it; most do
/// not), NFS, overlay's upper layer in older kernels, 9p. There `syncfs`
/// returns 0 having flushed nothing, and a file reported installed was lost
/// by a power cut. So a group is flushed with one `syncfs` only on the file
/// systems known to implement it, and with one `fsync` per file elsewhere.
package enum FileSystemKind {
  /// `statfs` magic numbers (linux/magic.h) whose `sync_fs` writes back and
  /// commits every dirty file.
  package static let flushedBySyncfs: Set<Int> = [
    0xEF53,  // ext2, ext3, ext4
    0x5846_5342,  // xfs
    0x9123_683E,  // btrfs
    0xF2F5_2010,  // f2fs
    0xCA45_1A4E,  // bcachefs
    0x0102_1994,  // tmpfs: nothing to write back
    0x8584_58F6,  // ramfs: nothing to write back
  ]

  /// The `statfs` type of the file system holding `fd`; nil when unknown.
  package static func type(of fd: Int32) -> Int? {
    let t = sf_fs_type(fd)
    return t < 0 ? nil : Int(t)
  }

  /// Whether `syncfs` on `fd` makes every file of its file system durable.
  package static func syncfsFlushesAll(_ fd: Int32) -> Bool {
    type(of: fd).map { flushedBySyncfs.contains($0) } ?? false
  }
}
