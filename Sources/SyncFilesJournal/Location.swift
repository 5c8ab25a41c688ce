import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#endif

/// Where the journal is (SPEC §2, §10.4): `--journal`, else
/// `SYNCFILES_JOURNAL`, else the manifests' `journal` key, else
/// `$STATE_DIRECTORY/journal` (a systemd service's `StateDirectory=`), else
/// `/var/lib/syncfiles/journal` for root, else
/// `$XDG_STATE_HOME/syncfiles/journal`, else
/// `~/.local/state/syncfiles/journal`, the home from `HOME` or, unset, from
/// the password database.
public enum JournalLocation {
  public static func resolve(
    flag: String?, environment: [String: String], manifests: [Manifest], isRoot: Bool, workingDirectory: String,
    home: () -> String? = passwordHome
  ) throws(JournalError) -> String {
    if let flag, !flag.isEmpty { return Paths.normalize(flag, relativeTo: workingDirectory) }
    if let env = environment["SYNCFILES_JOURNAL"], !env.isEmpty {
      return Paths.normalize(env, relativeTo: workingDirectory)
    }
    if let j = manifests.lazy.compactMap(\.journal).first { return j }
    // systemd may list several folders, colon-separated: the first is the service's own.
    if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first, state.hasPrefix("/") {
      return Paths.normalize("journal", relativeTo: String(state))
    }
    if isRoot { return "/var/lib/syncfiles/journal" }
    if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
      return Paths.normalize("syncfiles/journal", relativeTo: state)
    }
    guard let h = environment["HOME"].flatMap({ $0.hasPrefix("/") ? $0 : nil }) ?? home() else {
      throw .noHome(uid: getuid())
    }
    return Paths.normalize(".local/state/syncfiles/journal", relativeTo: h)
  }

  /// The user's home in the password database, when it is a folder that exists
  /// (`nobody`'s `/nonexistent` is not a home to write to).
  public static func passwordHome() -> String? {
    guard let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir else { return nil }
    let path = String(cString: dir)
    var st = stat()
    guard path.hasPrefix("/"), path != "/", stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return nil }
    return path
  }
}
