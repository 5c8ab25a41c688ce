import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the file system says about one path itself (`lstat`: a symlink is
/// described, never followed).
public struct FileFact: Sendable, Hashable {
  public var size: Int64
  public var mtimeNs: Int64
  public var isRegular: Bool
  public var isSymlink: Bool
  /// Permission bits (`st_mode & 0o7777`).
  public var mode: UInt32
  public init(size: Int64, mtimeNs: Int64, isRegular: Bool = true, isSymlink: Bool = false, mode: UInt32 = 0o644) {
    self.size = size
    self.mtimeNs = mtimeNs
    self.isRegular = isRegular
    self.isSymlink = isSymlink
    self.mode = mode
  }
}

/// The file system holding a folder.
public struct DiskFact: Sendable, Hashable {
  public var device: UInt64
  public var mountPoint: String
  public var freeBytes: Int64
  public init(device: UInt64, mountPoint: String, freeBytes: Int64) {
    self.device = device
    self.mountPoint = mountPoint
    self.freeBytes = freeBytes
  }
}

/// Everything the planner needs from outside: gathered once, then the
/// planner is a pure function of it.
public struct Facts: Sendable {
  /// Keyed by absolute path; absent = the path does not exist.
  public var files: [String: FileFact] = [:]
  /// Keyed by destination folder.
  public var disks: [String: DiskFact] = [:]
  /// SHA-256 of destinations that may already hold their declared `sha256`
  /// (a file the journal does not vouch for); keyed by destination path.
  public var digests: [String: String] = [:]
  public var now: Timestamp
  /// Local wall-clock minute of the day (0…1439), for `conditions.window`.
  public var localMinuteOfDay: Int
  /// Seconds past the local minute, so a window's start can be given exactly.
  public var localSecond: Int = 0
  public var onACPower: Bool
  /// Which requests go through a proxy (the environment's variables).
  public var proxies = ProxyRoute(environment: [:])
  /// How many partials beside their destinations `files` holds, when the
  /// gatherer counted them (nil: not counted, look each one up). With none,
  /// the planner does not make each task's partial path to look it up (a
  /// path made for nothing per entry).
  public var siblingPartials: Int? = nil
  /// What a listing said of the objects of prefix entries, by task id
  /// (`PrefixExpansion`): an object listed with its installed ETag and size
  /// needs no request.
  public var listed: [String: ListedObject] = [:]

  public init(now: Timestamp, localMinuteOfDay: Int, onACPower: Bool) {
    self.now = now
    self.localMinuteOfDay = localMinuteOfDay
    self.onACPower = onACPower
  }
}

/// Reads the facts from this machine.
public enum FactGatherer {
  /// Seconds east of UTC in the local time zone at `t` (for windows in a forecast).
  public static func utcOffset(at t: Timestamp) -> Int64 {
    var time = time_t(t.seconds)
    var tmv = tm()
    localtime_r(&time, &tmv)
    return Int64(tmv.tm_gmtoff)
  }

  /// `digests`: hash destinations that may already hold their sha256
  /// (plan and apply); `status` only reports, and reads no file's bytes.
  ///
  /// From `splitFrom` destinations on, the second half is looked at on a
  /// thread of its own: the `lstat`s are system calls that wait on nothing
  /// but the kernel, and while the facts are gathered the other core is idle.
  public static func gather(
    for manifests: [Manifest], journal: [String: TaskState], now: Timestamp, digests: Bool = true
  ) -> Facts {
    var t = time_t(now.seconds)
    var tmv = tm()
    localtime_r(&t, &tmv)
    var facts = Facts(
      now: now, localMinuteOfDay: Int(tmv.tm_hour) * 60 + Int(tmv.tm_min), onACPower: onACPower())
    facts.localSecond = Int(tmv.tm_sec)
    facts.proxies = ProxyRoute(environment: Runtime.environment)
    let total = manifests.reduce(0) { $0 + $1.files.count }
    let half = total >= splitFrom ? total / 2 : total
    let second = half < total ? Background { Part(manifests, journal, half..<total, digests: digests) } : nil
    var part = Part(manifests, journal, 0..<half, digests: digests)
    if let second { part.merge(second.wait()) }
    facts.files = part.files
    facts.disks = part.disks
    facts.digests = part.digests
    facts.siblingPartials = part.siblingPartials
    return facts
  }

  /// Destinations from which the facts are gathered on two threads.
  static let splitFrom = 512

  /// The facts of the destinations numbered `range` across the manifests, in order.
  struct Part: Sendable {
    var files: [String: FileFact] = [:]
    var disks: [String: DiskFact] = [:]
    var digests: [String: String] = [:]
    var siblingPartials = 0

    init(_ manifests: [Manifest], _ journal: [String: TaskState], _ range: Range<Int>, digests: Bool) {
      var disksByFolder: [String: DiskFact] = [:]
      // Folders that do not exist: nothing in them needs a stat of its own.
      var missingFolders = Set<String>()
      var partials = PartialLookup(manifests)
      var folders = FolderTable()
      files.reserveCapacity(range.count)  // one fact a destination, as a steady run has: no rehash as it grows
      var first = 0  // the number of the manifest's first destination
      for m in manifests {
        defer { first += m.files.count }
        let from = min(max(range.lowerBound - first, 0), m.files.count)
        for e in m.files[from..<max(min(range.upperBound - first, m.files.count), from)] {
          let (folder, inMissingFolder) = folders.folder(of: e.destinationPath) { folder in
            disks[folder] = disk(for: folder, cache: &disksByFolder, missing: &missingFolders)
            return missingFolders.contains(folder)
          }
          let state = journal.isEmpty ? nil : journal[e.qualifiedID]
          look(e, folder, inMissingFolder, state, &partials, hashing: digests)
        }
      }
    }

    /// One destination: its file, the partial beside it, and its digest when it may be adopted.
    private mutating func look(
      _ e: FileEntry, _ folder: String, _ inMissingFolder: Bool, _ state: TaskState?, _ partials: inout PartialLookup,
      hashing: Bool
    ) {
      if !inMissingFolder, let f = fact(at: e.destinationPath) {
        files[e.destinationPath] = f
        if hashing, mayAdopt(e, f, state), let d = SHA256Hasher.digest(ofFileAt: e.destinationPath, size: f.size) {
          digests[e.destinationPath] = d
        }
      }
      if let held = state?.partial?.path {
        if let f = fact(at: held) { files[held] = f }
      } else if !inMissingFolder, partials.mayExist(partialOf: e.destinationPath, in: folder) {
        let partial = PartialFile.path(for: e.destinationPath)
        if let f = fact(at: partial) {
          files[partial] = f
          siblingPartials += 1
        }
      }
    }

    /// Adds the facts of the destinations after these. The halves share no
    /// file; a folder both reach has the same disk in each.
    mutating func merge(_ later: Part) {
      files.reserveCapacity(files.count + later.files.count)
      files.merge(later.files) { mine, _ in mine }
      disks.merge(later.disks) { mine, _ in mine }
      digests.merge(later.digests) { mine, _ in mine }
      siblingPartials += later.siblingPartials
    }
  }

  /// Each destination folder once, found by its bytes: most destinations
  /// share their folder, and a string made for each one and hashed twice
  /// costs more than the `stat`.
  struct FolderTable {
    private var table = ByteKeyTable()
    private var folders: [(path: String, missing: Bool)] = []

    /// The folder of `path` and whether it is missing; `new` looks at a
    /// folder not seen before and says whether it is missing.
    mutating func folder(of path: String, new: (String) -> Bool) -> (String, Bool) {
      path.withUTF8Bytes { bytes in
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else {
          let folder = Paths.folder(of: path)
          return (folder, new(folder))
        }
        let key = UnsafeBufferPointer(rebasing: bytes[..<max(slash, 1)])  // "/a": the root
        let hash = ByteKeyTable.hash(key)
        if let i = table.findOrInsert(hash: hash, number: folders.count, isKey: { folders[$0].path.hasBytes(key) }) {
          return folders[i]
        }
        let folder = String(decoding: key, as: UTF8.self)
        let missing = new(folder)
        folders.append((folder, missing))
        return (folder, missing)
      }
    }
  }

  /// Whether a partial may lie beside a destination. A folder with many
  /// destinations is listed once, instead of a failed stat for each.
  struct PartialLookup {
    static let listFrom = 64
    let manifests: [Manifest]
    /// Counted when first needed: a plan whose folders do not exist yet asks
    /// for none.
    var crowdedFolders: Set<String>? = nil
    var listed: [String: Set<String>] = [:]

    init(_ manifests: [Manifest]) { self.manifests = manifests }

    /// The folders that hold at least `listFrom` destinations. Destinations
    /// come folder by folder as a rule: one in the folder of the destination
    /// before it is counted by comparing bytes, and a folder's name is made
    /// and hashed only where the folder changes (it was both for every
    /// destination, in each half of the facts).
    static func crowded(_ manifests: [Manifest]) -> Set<String> {
      var count: [String: Int] = [:]
      var run: (folder: String, n: Int)? = nil
      for m in manifests {
        for e in m.files {
          if let r = run, isIn(e.destinationPath, folder: r.folder) {
            run = (r.folder, r.n + 1)
            continue
          }
          if let r = run { count[r.folder, default: 0] += r.n }
          run = (Paths.folder(of: e.destinationPath), 1)
        }
      }
      if let r = run { count[r.folder, default: 0] += r.n }
      return Set(count.filter { $0.value >= Self.listFrom }.keys)
    }

    /// Whether `Paths.folder(of: path)` is `folder`, by bytes (no string made).
    static func isIn(_ path: String, folder: String) -> Bool {
      path.withUTF8Bytes { p in
        guard let slash = p.lastIndex(of: UInt8(ascii: "/")) else { return folder == "." }
        return folder.hasBytes(UnsafeBufferPointer(rebasing: p[..<max(slash, 1)]))
      }
    }

    /// The last folder asked about and its listed partials (nil: look each
    /// partial up): destinations come folder by folder, and each one's
    /// folder would be hashed three times.
    private var last: (folder: String, partials: Set<String>?)? = nil

    /// Whether the partial of `destination` may lie in `folder`, its folder.
    mutating func mayExist(partialOf destination: String, in folder: String) -> Bool {
      let partials: Set<String>?
      if let last, last.folder == folder {
        partials = last.partials
      } else {
        partials = listing(of: folder)
        last = (folder, partials)
      }
      guard let partials else { return true }
      return !partials.isEmpty && partials.contains(PartialFile.partialName(for: Paths.fileName(of: destination)))
    }

    /// The partials a crowded folder holds; nil for a folder that is not
    /// crowded, or that cannot be listed (each partial is then looked up by
    /// its own stat).
    private mutating func listing(of folder: String) -> Set<String>? {
      let crowded = crowdedFolders ?? Self.crowded(manifests)
      crowdedFolders = crowded
      guard crowded.contains(folder) else { return nil }
      if let partials = listed[folder] { return partials }
      guard let names = FileIO.listFolder(folder, endingWith: PartialFile.suffix) else {
        crowdedFolders?.remove(folder)
        return nil
      }
      let partials = Set(names)
      listed[folder] = partials
      return partials
    }
  }

  /// A destination worth hashing (SPEC §8.3 adoption): the entry declares
  /// a sha256, the file is regular and of a size the entry allows, and the
  /// journal does not already vouch for its bytes.
  static func mayAdopt(_ e: FileEntry, _ f: FileFact, _ state: TaskState?) -> Bool {
    guard e.sha256 != nil, f.isRegular else { return false }
    if let x = e.expectedBytes, x != f.size { return false }
    if let m = e.maxBytes, f.size > m { return false }
    return !Planner.vouches(state, for: e, fact: f)
  }

  public static func fact(at path: String) -> FileFact? {
    var st = stat()
    guard lstat(path, &st) == 0 else { return nil }
    let ns = st.modifiedNs
    let kind = st.st_mode & S_IFMT
    return FileFact(
      size: Int64(st.st_size), mtimeNs: ns, isRegular: kind == S_IFREG, isSymlink: kind == S_IFLNK,
      mode: UInt32(st.st_mode & 0o7777))
  }

  /// The file system of the nearest existing folder at or above `folder`;
  /// folders found not to exist on the way go into `missing`.
  static func disk(for folder: String, cache: inout [String: DiskFact], missing found: inout Set<String>)
    -> DiskFact?
  {
    var p = folder
    var missing: [String] = []
    var st = stat()
    while stat(p, &st) != 0 {
      found.insert(p)
      if let c = cache[p] { return c }
      missing.append(p)
      if p == "/" { return nil }
      p = Paths.folder(of: p)
    }
    if let c = cache[p] {
      for m in missing { cache[m] = c }
      return c
    }
    var vfs = statvfs()
    guard statvfs(p, &vfs) == 0 else { return nil }
    let device = UInt64(st.st_dev)
    // The mount point: climb while the parent is on the same device.
    var mount = p
    while mount != "/" {
      let parent = Paths.folder(of: mount)
      var ps = stat()
      guard stat(parent, &ps) == 0, UInt64(ps.st_dev) == device else { break }
      mount = parent
    }
    let d = DiskFact(device: device, mountPoint: mount, freeBytes: Int64(vfs.f_bavail) * Int64(vfs.f_frsize))
    for m in missing + [p] { cache[m] = d }
    return d
  }

  /// On mains power, per /sys/class/power_supply; a machine with no mains
  /// supply listed (a server, a container) counts as on mains.
  public static func onACPower(root: String = "/sys/class/power_supply") -> Bool {
    guard let names = FileIO.listFolder(root) else { return true }
    var sawMains = false
    for n in names {
      let type = (try? FileIO.readAll(root + "/" + n + "/type", limit: 64).get()).map {
        String(decoding: $0, as: UTF8.self).trimmingWhitespace()
      }
      guard type == "Mains" else { continue }
      sawMains = true
      let online = (try? FileIO.readAll(root + "/" + n + "/online", limit: 16).get()).map {
        String(decoding: $0, as: UTF8.self).trimmingWhitespace()
      }
      if online == "1" { return true }
    }
    return !sawMains
  }
}
