import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
#if canImport(Glibc)
  import Glibc
#endif

/// `--only`: which tasks and prefixes a run selects (pure).
extension Planner {
  /// `--only`: a pattern selects a task by its id, and a prefix entry's id
  /// (`name/id`) selects every object's task below it (`name/id/KEY`).
  static func matches(_ id: String, patterns: [String]) -> Bool {
    patterns.isEmpty
      || patterns.contains { p in
        p == id || fnmatch(p, id, 0) == 0 || (id.hasPrefix(p) && id.utf8.dropFirst(p.utf8.count).first == 0x2F)
      }
  }

  /// `--only` and a prefix entry (`name/id`): whether a pattern selects the
  /// entry or may select an object below it (`name/id/KEY`). A prefix no
  /// pattern can reach is not listed, so its failure cannot fail the run.
  /// A glob is judged by its literal head: `name/*` and `name/id/v2/*` may.
  static func mayMatchBelow(_ id: String, patterns: [String]) -> Bool {
    guard !patterns.isEmpty, !matches(id, patterns: patterns) else { return true }
    let below = id + "/"
    return patterns.contains { p in
      let head = p.prefix { !"*?[\\".contains($0) }
      return head.hasPrefix(below) || (head.count < p.count && below.hasPrefix(head))
    }
  }
}
