import SyncFilesCore
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// Installs complete partial files on a thread of its own, in groups: the
/// bodies held in memory are written to their files, one `syncfs` per file
/// system makes every partial of the group durable, then each is renamed
/// over its destination, then each folder is flushed once. A group of one
/// is a plain fsync, rename, folder fsync.
package final class InstallQueue: @unchecked Sendable {
  package struct Item: Sendable {
    package var index: Int
    package var partial: PartialFile
    package var mode: UInt32?
    /// `keep_versions`: the file replaced is kept as a version.
    package var keepVersions: Int

    package init(index: Int, partial: PartialFile, mode: UInt32?, keepVersions: Int = 0) {
      self.index = index
      self.partial = partial
      self.mode = mode
      self.keepVersions = keepVersions
    }
  }
  package struct Done: Sendable {
    package var index: Int
    package var error: InstallError?
    package var fact: (size: Int64, mtimeNs: Int64)?
  }

  private let lock = Lock()
  private var queue: [Item] = []
  private var quit = false
  private var running = true
  /// No file is on its way: the group gathering now is installed at once.
  private var closing = false
  package let group: Bool
  /// The most files one group installs.
  package let groupLimit: Int
  /// How long a group waits for more files once the first is ready.
  package let gather: Double
  private let onDone: @Sendable ([Done]) -> Void

  package init(
    group: Bool, gather: Double = 0.005, groupLimit: Int = 512, onDone: @escaping @Sendable ([Done]) -> Void
  ) {
    self.group = group
    self.gather = gather
    self.groupLimit = max(1, groupLimit)
    self.onDone = onDone
    startThread { [self] in loop() }
  }

  /// The thread waits for a first item, then (grouping) for a full group or
  /// the end of the gathering: only those two need it woken. A wake-up for
  /// every item woke it during each gathering to find the group not yet full
  /// (317 sleeps of the install thread for 500 files, each preempting the
  /// runner's thread, which pushed nginx onto the engine thread's core).
  package func add(_ item: Item) {
    lock.locked {
      queue.append(item)
      closing = false
      if waiting || gathered + queue.count >= groupLimit { lock.broadcast() }
    }
  }

  /// No transfer is in flight, so no file can join the group being
  /// gathered: it is installed now instead of at the end of the gathering,
  /// which the last group of every run would wait out. The next `add`
  /// gathers again.
  package func closeGroup() {
    lock.locked {
      guard !closing else { return }
      closing = true
      lock.broadcast()
    }
  }

  /// Finishes what is queued, then ends the thread.
  package func shutdown() {
    lock.locked {
      quit = true
      lock.broadcast()
      while running { lock.wait(until: nil) }
    }
  }

  /// The thread waits for a first item (not gathering): only then does an `add` wake it.
  private var waiting = false
  /// Items the group being gathered holds already.
  private var gathered = 0
  /// How often a gathering group takes in the items queued meanwhile.
  package static let gatherStep = 0.001

  private func loop() {
    while let first = take(adding: 0, until: nil) {
      var g = Group()
      g.writeOut(first)
      if group {
        // Group commit: give other transfers finishing now a moment to join
        // this group (one syncfs for all instead of one fsync each),
        // writing out their held bodies meanwhile.
        let until = monotonicSeconds() + gather
        while g.count < groupLimit, let more = take(adding: g.count, until: until) { g.writeOut(more) }
      }
      onDone(g.failed + install(g.ready))
    }
    lock.locked {
      running = false
      lock.broadcast()
    }
  }

  /// Items queued now, at most what fills a group holding `have`. With no
  /// `until`, waits for a first one (nil when quitting). Gathering, looks
  /// every `gatherStep` for items (so that their bodies are written out while
  /// the group gathers, not after), and gives nil at `until`, at
  /// `closeGroup` or at `shutdown`.
  private func take(adding have: Int, until: Double?) -> [Item]? {
    lock.locked {
      if let until {
        gathered = have
        while queue.isEmpty && !quit && !closing && monotonicSeconds() < until {
          lock.wait(until: min(until, monotonicSeconds() + Self.gatherStep))
        }
        gathered = 0
      } else {
        waiting = true
        while queue.isEmpty && !quit { lock.wait(until: nil) }
        waiting = false
      }
      if queue.isEmpty { return nil }
      let b = Array(queue.prefix(groupLimit - have))
      queue.removeFirst(b.count)
      return b
    }
  }

  /// A group being gathered: items whose bytes are in their files, and those whose could not be written.
  package struct Group {
    package var ready: [Item] = []
    package var failed: [Done] = []
    package var count: Int { ready.count + failed.count }

    /// Bodies held in memory get their files here, on the install thread, not the transfer's.
    mutating func writeOut(_ items: [Item]) {
      for item in items {
        do {
          try item.partial.materialize()
          ready.append(item)
        } catch {
          failed.append(Done(index: item.index, error: error, fact: nil))
        }
      }
    }
  }

  /// Writes out, makes durable and installs `items` as one group.
  package func commit(_ items: [Item]) -> [Done] {
    var g = Group()
    g.writeOut(items)
    return g.failed + install(g.ready)
  }

  private func install(_ batch: [Item]) -> [Done] {
    var done: [Done] = []
    if batch.count == 1 || !group {
      for item in batch {
        do {
          try item.partial.commit(mode: item.mode, keepVersions: item.keepVersions)
          done.append(Done(index: item.index, error: nil, fact: item.partial.installedFact))
        } catch {
          done.append(Done(index: item.index, error: error, fact: nil))
        }
      }
      return done
    }
    // 1. Durable bytes: one syncfs per file system (fsync each where that fails).
    var flushed: [UInt64: Bool] = [:]
    var ready: [Item] = []
    for item in batch {
      let dev = item.partial.placement.device
      if flushed[dev] == nil { flushed[dev] = item.partial.flushFileSystem() }
      if flushed[dev] == false {
        do { try item.partial.flush() } catch {
          done.append(Done(index: item.index, error: error, fact: nil))
          continue
        }
      }
      ready.append(item)
    }
    // 2. Rename each over its destination; 3. flush each folder once.
    var installed: [(Item, (Int64, Int64)?)] = []
    for item in ready {
      do {
        try item.partial.install(mode: item.mode, keepVersions: item.keepVersions)
        installed.append((item, item.partial.installedFact))
      } catch {
        done.append(Done(index: item.index, error: error, fact: nil))
      }
    }
    // After every rename of the group: each folder flushed once.
    var folderError: [PartialFile.Placement: InstallError?] = [:]
    for (item, _) in installed where folderError[item.partial.placement] == nil {
      do {
        try item.partial.syncFolder()
        folderError[item.partial.placement] = .some(nil)
      } catch {
        folderError[item.partial.placement] = error
      }
    }
    for (item, fact) in installed {
      done.append(Done(index: item.index, error: folderError[item.partial.placement] ?? nil, fact: fact))
    }
    return done
  }
}
