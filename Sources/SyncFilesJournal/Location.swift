import SyncFilesCore
import SyncFilesManifest

/// Where the journal is (SPEC §2): `--journal`, else `SYNCFILES_JOURNAL`,
/// else the manifests' `journal` key, else `$XDG_STATE_HOME/syncfiles/journal`
/// (`~/.local/state/syncfiles/journal`), or `/var/lib/syncfiles/journal` for root.
public enum JournalLocation {
  public static func resolve(
    flag: String?, environment: [String: String], manifests: [Manifest], isRoot: Bool, workingDirectory: String
  ) -> String {
    if let flag, !flag.isEmpty { return Paths.normalize(flag, relativeTo: workingDirectory) }
    if let env = environment["SYNCFILES_JOURNAL"], !env.isEmpty {
      return Paths.normalize(env, relativeTo: workingDirectory)
    }
    if let j = manifests.lazy.compactMap(\.journal).first { return j }
    if isRoot { return "/var/lib/syncfiles/journal" }
    if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
      return Paths.normalize("syncfiles/journal", relativeTo: state)
    }
    let home = environment["HOME"] ?? "/"
    return Paths.normalize(".local/state/syncfiles/journal", relativeTo: home)
  }
}
