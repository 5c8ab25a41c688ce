import SyncFilesCore
import SyncFilesManifest

/// Why the journal could not be opened, read or written (the Journal
/// module's one error). Code decides on the case (`locked` is exit 3);
/// `message` is for people.
public enum JournalError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Another `syncfiles apply` holds the journal's lock (`holder`: its pid, or "?").
  case locked(journal: String, holder: String)
  /// The file is not a syncfiles journal (or one of another version): left untouched.
  case notAJournal(path: String, refusing: Bool)
  /// A system call failed: "`doing` `path``detail`: errno's text".
  case system(doing: String, path: String, errno: Errno, detail: String = "")
  /// The file could not be read (`why`: the reader's words).
  case unreadable(path: String, why: String)
  /// No journal was named and the user has no home to keep one in.
  case noHome(uid: UInt32)

  public var message: String {
    switch self {
    case .locked(let journal, let holder): return "another syncfiles apply (pid \(holder)) holds the journal \(journal)"
    case .notAJournal(let path, let refusing):
      return "\(path) is not a syncfiles journal" + (refusing ? "; refusing to touch it" : "")
        + ". If it is a journal damaged beyond repair, move it aside (mv \(path) \(path).bad) and run again:"
        + " a fresh journal forgets partial downloads, backoffs and owed hooks, and revalidates every installed file once"
        + " (files already holding their sha256 are adopted without a transfer); or give another with --journal"
    case .system(let doing, let path, let e, let detail): return "\(doing) \(path)\(detail): \(e.text)"
    case .unreadable(let path, let why): return "cannot read journal \(path): \(why)"
    case .noHome(let uid):
      return
        "no place for the journal: HOME is unset and user \(uid) has no home folder in the password database; choose one with --journal PATH, SYNCFILES_JOURNAL=PATH or the manifest's journal key (a systemd service: StateDirectory=syncfiles)"
    }
  }

  public var description: String { message }
}
