import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#endif

/// The journal shared by the runner and the transfer engine's thread: a
/// change to a task's state is appended at once (a kill loses nothing that
/// was recorded), or with `flush: false` held until the next `flush` (the
/// runner writes a batch of outcomes in one write); `sync` makes them
/// durable in groups.
public final class SessionJournal: @unchecked Sendable {
  private let lock = Lock()
  private let writer: JournalWriter
  private var error: JournalError?

  public init(_ writer: JournalWriter) { self.writer = writer }

  public var path: String { writer.path }
  public var tasks: [String: TaskState] { lock.locked { writer.contents.tasks } }

  public func state(_ id: String) -> TaskState {
    lock.locked { writer.contents.tasks[id] ?? TaskState(id: id) }
  }

  /// The last complete listing recorded for a prefix entry.
  public func listing(_ id: String) -> PrefixListing? { lock.locked { writer.contents.listings[id] } }

  /// Records a prefix entry's listing when its objects differ from the last one recorded.
  public func record(listing: PrefixListing, of id: String) {
    lock.locked {
      guard !listing.sameObjects(as: writer.contents.listings[id]) else { return }
      do throws(JournalError) { try writer.record(listing: listing, of: id) } catch { self.error = self.error ?? error }
    }
  }

  /// The hooks a task is owed, read in place: the end of every run asks this
  /// of every task, and a copy of its whole state was most of the cost.
  public func owedHooks(_ id: String) -> (change: Bool, complete: Bool) {
    lock.locked {
      let tasks = writer.contents.tasks
      guard let i = tasks.index(forKey: id) else { return (false, false) }
      return (tasks.values[i].changeHookPending, tasks.values[i].completeHookPending)
    }
  }

  /// Applies `change` to the task's latest state and appends the result
  /// (`flush: false`: at the next `flush`).
  public func update(_ id: String, flush: Bool = true, _ change: (inout TaskState) -> Void) {
    lock.locked {
      do throws(JournalError) { try writer.update(id, flush: flush, change) } catch { self.error = self.error ?? error }
    }
  }

  /// Records are held back, not yet written.
  public var holdsRecords: Bool { lock.locked { writer.holdsRecords } }

  /// Writes the records held back.
  public func flush() {
    lock.locked {
      do throws(JournalError) { try writer.flush() } catch { self.error = self.error ?? error }
    }
  }

  public func sync() {
    lock.locked {
      do throws(JournalError) { try writer.sync() } catch { self.error = self.error ?? error }
    }
  }

  /// The journal stops claiming the partial of task `id`, durably, before
  /// its bytes are dropped or written over: otherwise a power cut could
  /// leave a journal that calls them held beside a file that no longer
  /// holds them (SPEC §9.2). Nothing is written when nothing is claimed.
  public func retractPartial(_ id: String) {
    lock.locked {
      guard writer.contents.tasks[id]?.partial != nil else { return }
      do throws(JournalError) {
        try writer.update(id, flush: true) { $0.partial = nil }
        try writer.sync()
      } catch { self.error = self.error ?? error }
    }
  }

  /// Compacts when the journal has grown well past one record per task.
  public func compactIfNeeded() {
    lock.locked {
      guard writer.needsCompaction else { return }
      do throws(JournalError) { try writer.compact() } catch { self.error = self.error ?? error }
    }
  }

  /// The first write error, if any (the run reports it; outcomes stay true on disk).
  public var firstError: JournalError? { lock.locked { error } }
}
