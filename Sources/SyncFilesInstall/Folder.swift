import SyncFilesCore
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// A destination's folder, opened from root one component at a time with
/// `O_NOFOLLOW`, and shared by the partial files in it while any of them
/// is alive: a run of many files in one folder opens, examines and closes
/// it once, not once per file.
///
/// A folder held open stays the folder that was opened. If someone removes
/// it during a run, the next partial there walks from root again (and
/// makes it again); if someone moves it, the partials that overlap the
/// move are installed where it went, as a partial in flight always was,
/// and the next run finds its destination missing and fetches it again.
package final class Folder: Sendable {
  package let fd: Int32
  /// Where the folder is (install groups flush each file system and each folder once).
  package let placement: PartialFile.Placement

  private init(fd: Int32) {
    self.fd = fd
    var st = stat()
    fstat(fd, &st)
    placement = PartialFile.Placement(device: UInt64(st.st_dev), folder: UInt64(st.st_ino))
  }

  deinit { close(fd) }

  /// The folder of `parts` (the destination's path without its name) inside
  /// `root`: the one already open, or walked to and opened now (created on
  /// the way when `create`). `fresh` walks again whatever is open.
  static func of(
    root: String, parts: ArraySlice<String>, create: Bool, fresh: Bool = false, for destination: String
  ) throws(InstallError) -> Folder {
    let key = key(root: root, folder: parts.joined(separator: "/"))
    if !fresh, let open = shared.lookup(key) { return open }
    let folder = Folder(fd: try PartialFile.openFolder(root: root, parts: parts, create: create, for: destination))
    shared.keep(folder, as: key)
    return folder
  }

  /// The folder of the file at `relative` (a path with a name at its end)
  /// inside `root`, as `of(root:parts:…)` gives it. A plain path's folder
  /// already open is found by its text, without splitting the path into
  /// its components (most of the install thread's work on
  /// a file).
  static func of(
    root: String, fileAt relative: String, create: Bool, fresh: Bool = false, for destination: String
  ) throws(InstallError) -> Folder {
    if !fresh && Paths.isPlainRelative(relative) {
      let folder = Paths.folder(of: relative)
      // A plain path's components are separated by single slashes, none
      // empty: its folder's text is its components but the last, joined.
      if let open = shared.lookup(key(root: root, folder: folder == "." ? "" : folder)) { return open }
    }
    let parts = relative.split(separator: "/").dropLast().map(String.init)[...]
    return try of(root: root, parts: parts, create: create, fresh: fresh, for: destination)
  }

  /// What the table knows a folder by: its root, and its path inside the
  /// root ("" for the root itself).
  private static func key(root: String, folder: String) -> String {
    folder.isEmpty ? root : root + "\u{0}" + folder
  }

  /// The folders open now, by root and path; an entry lives as long as its partials.
  private static let shared = Table()

  private final class Table: Sendable {
    private struct Entry {
      weak var folder: Folder?
    }
    private struct Entries {
      var byKey: [String: Entry] = [:]
      /// The count at which entries whose folder closed are dropped (twice the open ones, at least 256).
      var pruneAt = 256
    }
    private let entries = Locked(Entries())

    func lookup(_ key: String) -> Folder? { entries.withLock { $0.byKey[key]?.folder } }

    func keep(_ folder: Folder, as key: String) {
      entries.withLock { e in
        // Entries whose folder closed are dropped now and then, not one by one.
        if e.byKey.count >= e.pruneAt {
          e.byKey = e.byKey.filter { $0.value.folder != nil }
          e.pruneAt = max(256, 2 * e.byKey.count)
        }
        e.byKey[key] = Entry(folder: folder)
      }
    }
  }
}
