import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// SPEC §8.3: tasks of one run that declare the same sha256 are fetched
/// once. One leads (a resume first: it already holds bytes); the others
/// wait for it, and once it is installed they get its verified bytes by
/// reflink or copy. If the leader does not install, they fetch for themselves.
struct SameContent {
  /// Leader → the tasks waiting for its bytes.
  private var waiting: [Int: [Int]] = [:]
  /// Every task that waits for a leader.
  private(set) var followers: Set<Int> = []

  /// `tasks`: each task that will run, with its declared sha256 and action.
  /// Only downloads and resumes group: a revalidation may move nothing.
  init(_ tasks: [(index: Int, sha256: String?, action: Action)]) {
    var groups: [String: [(index: Int, action: Action)]] = [:]
    var order: [String] = []
    for t in tasks where t.action == .download || t.action == .resume {
      guard let digest = t.sha256 else { continue }
      if groups[digest] == nil { order.append(digest) }
      groups[digest, default: []].append((t.index, t.action))
    }
    for digest in order {
      let members = groups[digest]!
      guard members.count > 1 else { continue }
      let leader = (members.first { $0.action == .resume } ?? members[0]).index
      let rest = members.map(\.index).filter { $0 != leader }
      waiting[leader] = rest
      followers.formUnion(rest)
    }
  }

  /// The tasks that waited for `leader`, now that it has ended (once).
  mutating func release(after leader: Int) -> [Int] {
    guard let list = waiting.removeValue(forKey: leader) else { return [] }
    followers.subtract(list)
    return list
  }
}
