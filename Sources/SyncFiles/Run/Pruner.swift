import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// What became of one prefix entry in a run: its listing, and its prunes.
public struct PrefixOutcome: Sendable, Hashable {
  public var id: String
  /// Where its objects came from, in one line (`PrefixSummary.text`).
  public var line: String
  /// The listing failed (the run fails; nothing under the prefix was fetched or pruned).
  public var error: String?
  /// Files removed, by absolute path.
  public var pruned: [String] = []
  /// Files whose objects are gone but that were kept, each with why.
  public var kept: [String] = []
  /// Listed keys that cannot be a file below the destination, each with why (none was fetched).
  public var unusable: [String] = []
}

/// `prune: true` carried out (SPEC §9.4): each file a prefix entry
/// installed whose object a complete listing of this run no longer has is
/// removed, only while it is still the file syncfiles installed (same size
/// and modification time); a file edited or replaced since is kept and said.
/// The journal forgets the install after the file is gone, so a kill in
/// between is finished by the next run.
enum Pruner {
  static func carryOut(_ prefixes: [PrefixSummary], journal: SessionJournal, stopped: Bool) -> [PrefixOutcome] {
    prefixes.map { p in
      var out = PrefixOutcome(id: p.id, line: p.text)
      out.unusable = p.unusable
      if case .failed(let why) = p.source { out.error = why }
      if let refused = p.pruneRefused { out.error = refused }
      guard !stopped else {
        if !p.prunes.isEmpty { out.kept = p.prunes.map { "\($0.path): the run stopped before pruning" } }
        return out
      }
      for prune in p.prunes { remove(prune, journal: journal, into: &out) }
      return out
    }
  }

  static func remove(_ p: PlannedPrune, journal: SessionJournal, into out: inout PrefixOutcome) {
    if let f = FactGatherer.fact(at: p.path) {
      guard f.isRegular, !f.isSymlink, f.size == p.installed.size, f.mtimeNs == p.installed.mtimeNs else {
        out.kept.append("\(p.path): changed since syncfiles installed it, so it is not syncfiles' to remove")
        return
      }
      guard unlink(p.path) == 0 || errno == ENOENT else {
        out.kept.append("\(p.path): cannot remove: \(Errno(errno).text)")
        return
      }
      JournalWriter.syncFolder(of: p.path)
      out.pruned.append(p.path)
    }
    journal.update(p.id) {
      $0.installed = nil
      $0.partial = nil
    }
  }
}
