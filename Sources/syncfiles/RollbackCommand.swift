import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesJournal
import SyncFilesManifest

struct RollbackCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "rollback",
    abstract: "Put a kept version back (keep_versions) and hold the task, or release it.",
    discussion: """
      Puts the K-th version before the current file back (default 1, the one \
      it replaced), atomically: the current file becomes the newest kept \
      version, nothing is lost. on_change runs. The task is then held: later \
      applies, --force included, leave it alone, and plan and status say \
      "rolled back", until `syncfiles rollback --release ID PATH...`; the next \
      apply after that follows the source again. status lists the versions \
      kept. With no version kept, rollback is an error (exit 1).

      Examples:
        syncfiles rollback images/disk /etc/syncfiles.d
        syncfiles rollback --to 2 images/disk /etc/syncfiles.d
        syncfiles rollback --release images/disk /etc/syncfiles.d
      """)

  @Option(name: .long, help: "Which version back: 1 is the one the current file replaced.") var to: Int = 1
  @Flag(help: "End the hold: later applies follow the source again.") var release = false
  @Option(help: "The journal file (as for apply).", completion: .file()) var journal: String?
  @Argument(help: "The task: NAME/ID, as apply and status name it.", completion: TaskCompletion.kind) var id: String
  @Argument(help: "Manifest files or folders of manifests.", completion: .file()) var paths: [String]

  func validate() throws {
    if to < 1 { throw ValidationError("--to counts versions back from 1 (the one the current file replaced)") }
    if release && to != 1 { throw ValidationError("--release ends a hold; it takes no --to") }
  }

  func run() throws {
    let (set, journalPath) = try LoadedSession.manifests(
      paths: paths, options: SessionSettings(journal: journal))
    guard let (entry, manifest) = find(id, in: set.manifests) else {
      Output.error("syncfiles: no task \(id) in these manifests")
      throw ExitCode(ExitStatus.usage.rawValue)
    }
    let sessionJournal: SessionJournal
    do throws(JournalError) { sessionJournal = SessionJournal(try JournalWriter(path: journalPath)) } catch {
      Output.error("syncfiles: \(error.message)")
      if case .locked = error { throw ExitCode(ExitStatus.locked.rawValue) }
      throw ExitCode(ExitStatus.usage.rawValue)
    }
    let done =
      release
      ? Rollback.release(entry, journal: sessionJournal)
      : Rollback.run(entry, manifest: manifest, to: to, journal: sessionJournal)
    switch done {
    case .success(let said): Output.error("syncfiles: \(said)")
    case .failure(let e):
      Output.error("syncfiles: \(e.message)")
      throw ExitCode(ExitStatus.failed.rawValue)
    }
  }

  func find(_ id: String, in manifests: [Manifest]) -> (FileEntry, Manifest)? {
    for m in manifests {
      if let e = m.files.first(where: { $0.qualifiedID == id }) { return (e, m) }
    }
    return nil
  }
}
