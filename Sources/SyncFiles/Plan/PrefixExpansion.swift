import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// Where a prefix's objects were learnt from for this plan.
public enum PrefixSource: Sendable, Hashable {
  /// Listed now, every page read: the only source `prune` trusts.
  case listed(PrefixListing)
  /// The last listing the journal holds (an offline `plan`).
  case recorded(PrefixListing)
  /// The listing failed: nothing under the prefix is fetched or pruned.
  case failed(String)
  /// Offline, and never listed.
  case unlisted
  /// `--only` selects nothing below it: not listed, nothing fetched or pruned.
  case unselected
}

/// A file the plan removes: installed by a prefix entry, its object gone.
public struct PlannedPrune: Sendable, Hashable {
  /// The task that installed it (`name/id/KEY`).
  public var id: String
  public var path: String
  /// As the journal recorded it: the file is removed only while it still is.
  public var installed: TaskState.Installed
}

/// What became of one prefix entry, for the plan and the run's report.
public struct PrefixSummary: Sendable, Hashable {
  public var id: String
  public var url: String
  public var source: PrefixSource
  /// Objects listed, and of those, tasks made (selected, with a usable key).
  public var listed = 0
  public var selected = 0
  /// Keys that cannot be a file below the destination, and why.
  public var unusable: [String] = []
  public var prunes: [PlannedPrune] = []
  /// `prune: true` was asked.
  public var pruneAsked = false
  /// Why this run's prune removes nothing although files are gone: more
  /// would go than `prune_max` allows. The prefix then fails.
  public var pruneRefused: String?

  /// One line: where the objects came from, how many became tasks.
  public var text: String {
    let tasks = "\(selected) of \(listed) object\(listed == 1 ? "" : "s") selected"
    switch source {
    case .listed(let l):
      return "\(id): listed \(url) now (\(l.requests) request\(l.requests == 1 ? "" : "s")): \(tasks)"
    case .recorded(let l):
      return
        "\(id): from the journal's listing of \(url) at \(l.listedAt.rfc3339) (offline; plan --remote lists it now): \(tasks)"
    case .failed(let why): return "\(id): \(why)"
    case .unlisted: return "\(id): \(url) was never listed (apply or plan --remote lists it): no task yet"
    case .unselected: return "\(id): not selected by --only, so not listed"
    }
  }
}

/// A prefix entry (SPEC §9.4) made into one entry per object listed under
/// it: ids `name/id/KEY`, destinations `DESTINATION/KEY`, sizes from the
/// listing; and the files it installed whose objects are gone, for
/// `prune`. Pure: the listings are given.
public enum PrefixExpansion {
  public struct Result: Sendable {
    public var manifests: [Manifest]
    /// What the listing says of each object's task, by task id: its size and ETag.
    public var listed: [String: ListedObject] = [:]
    public var prefixes: [PrefixSummary] = []
  }

  public static func expand(
    _ manifests: [Manifest], sources: [String: PrefixSource], journal: [String: TaskState], only: [String] = []
  ) -> Result {
    var out = Result(manifests: manifests)
    let prefixed = manifests.indices.filter { manifests[$0].files.contains(where: { $0.prefix != nil }) }
    guard !prefixed.isEmpty else { return out }
    let taken = fileDestinations(manifests)
    for m in prefixed {
      var files: [FileEntry] = []
      for e in manifests[m].files {
        guard let options = e.prefix else {
          files.append(e)
          continue
        }
        let source =
          Planner.mayMatchBelow(e.qualifiedID, patterns: only) ? sources[e.qualifiedID] ?? .unlisted : .unselected
        var summary = PrefixSummary(id: e.qualifiedID, url: e.url.display, source: source)
        summary.pruneAsked = options.prune
        files += children(
          of: e, options: options, source: source, taken: taken, summary: &summary, listed: &out.listed)
        if options.prune, case .listed(let l) = source {
          guarded(prunes(of: e, listing: l, journal: journal), options.pruneMax, e, journal, &summary)
        }
        out.prefixes.append(summary)
      }
      out.manifests[m].files = files
    }
    return out
  }

  /// The destinations of the entries that are no prefix, with their ids:
  /// a file entry may lie inside a prefix's folder, and a key that would
  /// land on it is skipped (SPEC §10.3).
  static func fileDestinations(_ manifests: [Manifest]) -> [String: String] {
    var out: [String: String] = [:]
    for m in manifests {
      for e in m.files where e.prefix == nil { out[e.destinationPath] = e.qualifiedID }
    }
    return out
  }

  /// The selected objects' entries.
  static func children(
    of e: FileEntry, options: PrefixOptions, source: PrefixSource, taken: [String: String],
    summary: inout PrefixSummary, listed: inout [String: ListedObject]
  ) -> [FileEntry] {
    let objects: [ListedObject]
    switch source {
    case .listed(let l), .recorded(let l): objects = l.objects
    case .failed, .unlisted, .unselected: return []
    }
    let include = options.include.map(Glob.init)
    let exclude = options.exclude.map(Glob.init)
    var own = e.values.options.value
    own.prefix = nil
    let childOptions = SharedValue(own)
    var head = ""
    var out: [FileEntry] = []
    summary.listed = objects.count
    for o in objects {
      if let why = unusable(o.key) {
        summary.unusable.append("\(o.key): \(why)")
        continue
      }
      guard include.isEmpty || Glob.any(include, o.key), !Glob.any(exclude, o.key) else { continue }
      let v = e.values
      if let owner = taken[v.destinationPath + "/" + o.key] {
        summary.unusable.append("\(o.key): lands on the destination of '\(owner)', which keeps it; skipped")
        continue
      }
      var c = FileEntry.Values(
        qualifiedID: v.qualifiedID + "/" + o.key, idStart: Int(v.idStart),
        url: v.url.appending(o.key, sharedHead: &head),
        destinationPath: v.destinationPath + "/" + o.key, destinationStart: Int(v.destinationStart), mark: v.mark,
        destinationMark: v.destinationMark)
      c.expectedBytes = o.size
      c.notBefore = v.notBefore
      c.options = childOptions
      listed[c.qualifiedID] = o
      out.append(FileEntry(c))
    }
    summary.selected = out.count
    return out
  }

  /// Why a key cannot be a file below the destination, or nil: a folder
  /// marker, a component that leaves or names the folder, a control
  /// character, a name syncfiles keeps for its own partial files.
  static func unusable(_ key: String) -> String? {
    if key.isEmpty || key.hasSuffix("/") { return "a folder marker, not a file" }
    if key.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "holds a control character" }
    for part in key.split(separator: "/", omittingEmptySubsequences: false) {
      if part.isEmpty || part == "." || part == ".." {
        return "has an empty, '.' or '..' part, so it is no path below the destination"
      }
      if part.utf8.count > 255 { return "has a part longer than a file name may be (255 bytes)" }
      if part.hasSuffix(".syncfiles-partial") { return "ends as syncfiles' own partial files do" }
      if part == KeptVersions.folderName { return "lies in syncfiles' own folder of kept versions" }
    }
    return nil
  }

  /// The prunes, unless they would remove more than `prune_max` of the
  /// files the entry installed: then none, and the reason (SPEC §10.3). An
  /// empty listing removes them all, so it is refused unless allowed.
  static func guarded(
    _ prunes: [PlannedPrune], _ limit: PruneLimit, _ e: FileEntry, _ journal: [String: TaskState],
    _ summary: inout PrefixSummary
  ) {
    let below = e.qualifiedID + "/"
    let installed = journal.reduce(0) { $0 + ($1.key.hasPrefix(below) && $1.value.installed != nil ? 1 : 0) }
    guard !limit.allows(removing: prunes.count, of: installed) else {
      summary.prunes = prunes
      return
    }
    summary.pruneRefused =
      "prune would remove \(prunes.count) of the \(installed) files this prefix installed, more than prune_max (\(limit.text)) allows; nothing was removed (an empty or wrong listing looks like this). If the objects really are gone, set prune_max: 100% for one run"
  }

  /// Files this entry installed (the journal says so) whose objects the
  /// listing no longer has.
  static func prunes(of e: FileEntry, listing: PrefixListing, journal: [String: TaskState]) -> [PlannedPrune] {
    let below = e.qualifiedID + "/"
    let present = Set(listing.objects.map(\.key))
    var out: [PlannedPrune] = []
    for (id, state) in journal where id.hasPrefix(below) {
      let key = String(id.dropFirst(below.count))
      guard let installed = state.installed, !present.contains(key), unusable(key) == nil else { continue }
      out.append(PlannedPrune(id: id, path: e.destinationPath + "/" + key, installed: installed))
    }
    return out.sorted { $0.id < $1.id }
  }
}
