import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// `syncfiles rollback` (SPEC §10.4): a kept version put back, atomically,
/// the task held until `--release`. The journal says "held" before the file
/// moves, so that an apply after a crash at any point leaves the task
/// alone; the file is whole at every instant (links and a rename).
public enum Rollback {
  /// Puts version `to` (1: the one before the current file) of `entry` back,
  /// journals it, and runs `on_change`. The words to say, or why not.
  public static func run(
    _ entry: FileEntry, manifest: Manifest, to: Int, journal: SessionJournal, hookTimeout: Double = 600
  ) -> Result<String, RunError> {
    let versions = KeptVersions.list(entry.destinationPath)
    guard to >= 1, to <= versions.count else {
      return .failure(
        .noKeptVersion(id: entry.qualifiedID, kept: versions.count, asked: to, keepVersions: entry.keepVersions))
    }
    let v = versions[to - 1]
    let now = Timestamp.current()
    journal.update(entry.qualifiedID) { $0.rolledBack = now }
    journal.sync()
    do throws(InstallError) {
      try KeptVersions.restore(v, destination: entry.destinationPath, keeping: max(entry.keepVersions, versions.count))
    } catch {
      return .failure(.install(error))
    }
    record(entry, journal: journal, hookOwed: entry.onChange != nil)
    var said = "rolled back \(entry.qualifiedID) to the version replaced at \(v.replaced.rfc3339) ("
    said += "\(ByteSize.format(v.size))); held until syncfiles rollback --release \(entry.qualifiedID)"
    if let hook = CommandHook.onChange.run(.fileChanged(entry, manifest: manifest), timeout: hookTimeout) {
      if let failure = hook.error { return .success(said + "\nwarning: " + failure) }
      journal.update(entry.qualifiedID) { $0.changeHookPending = false }
      journal.sync()
    }
    return .success(said)
  }

  /// Ends the hold: the next apply follows the source again, unconditionally
  /// (the installed file is no version the source can name).
  public static func release(_ entry: FileEntry, journal: SessionJournal) -> Result<String, RunError> {
    guard journal.state(entry.qualifiedID).rolledBack != nil else {
      return .failure(.notRolledBack(id: entry.qualifiedID))
    }
    journal.update(entry.qualifiedID) { $0.rolledBack = nil }
    record(entry, journal: journal, hookOwed: journal.state(entry.qualifiedID).changeHookPending)
    return .success("released \(entry.qualifiedID): the next apply follows its source again")
  }

  /// The file now at the destination, as installed: its size, time and
  /// digest, and no validator (the next check asks unconditionally).
  static func record(_ entry: FileEntry, journal: SessionJournal, hookOwed: Bool) {
    var st = stat()
    let fact = stat(entry.destinationPath, &st) == 0 ? (Int64(st.st_size), FileIO.nanoseconds(st.st_mtim)) : nil
    let digest = fact.flatMap { SHA256Hasher.digest(ofFileAt: entry.destinationPath, size: $0.0) }
    journal.update(entry.qualifiedID) { s in
      s.installed = fact.map { TaskState.Installed(size: $0.0, mtimeNs: $0.1, sha256: digest) }
      s.changeHookPending = hookOwed
    }
    journal.sync()
  }
}
