import SyncFilesCore

/// A manifest while its `files` are decoded one item at a time.
package struct FilesProgress {
  package var manifest: Manifest
  /// `defaults`, when the manifest has the key.
  package var defaults: FileFields? = nil
  /// `files:` as written (nil: missing or not a list).
  package var pair: YAMLPair? = nil
  package var items = 0
  /// The line where each id was first used.
  package var seenIDs = SeenIDs()
  /// Where entries lack `expected_bytes`.
  package var missingExpected: [SourceMark] = []
}

/// The ids of a manifest's entries so far and the line where each was
/// first used (the line alone: 4 bytes, not 16 a mark). Each id is hashed
/// once and never again as the table grows: a dictionary hashes each id
/// twice and again at every doubling.
package struct SeenIDs {
  private var table = ByteKeyTable()
  private var ids: [String] = []
  private var lines: [Int32] = []

  /// The line where `id` was first used; nil when it is new, and then
  /// `line` is kept as its first use.
  package mutating func firstUse(of id: String, at line: Int) -> Int32? {
    id.withUTF8Bytes { key in
      let hash = ByteKeyTable.hash(key)
      if let i = table.findOrInsert(hash: hash, number: ids.count, isKey: { ids[$0].hasBytes(key) }) { return lines[i] }
      ids.append(id)
      lines.append(Int32(clamping: line))
      return nil
    }
  }
}

extension ManifestDecoder {
  /// Decodes a whole manifest. Returns nil only when nothing usable was found;
  /// callers look at `diagnostics` for errors.
  /// A path the session writes (`journal`, `metrics`): absolute, relative
  /// paths taken from the manifest's folder.
  package mutating func sessionPath(_ node: YAMLNode, _ key: String) -> String? {
    guard let s = string(node, key), let e = expand(node, s, key) else { return nil }
    guard !e.revealed.isEmpty else {
      error(node.mark, "\(key) is empty")
      return nil
    }
    if e.revealed.hasSuffix("/") {
      error(node.mark, "\(key) must name a file, not a folder: '\(s)'")
      return nil
    }
    return Paths.normalize(expandHome(e.revealed), relativeTo: folder)
  }

  package mutating func decodeManifest(_ root: YAMLNode?) -> Manifest? {
    guard let root else {
      error(SourceMark(line: 1, column: 1), "manifest is empty: expected at least 'version: 1' and 'files:'")
      return nil
    }
    guard var files = decodeHead(root) else { return nil }
    guard let filesPair = files.pair else { return files.manifest }
    if case .sequence(let items) = filesPair.value.kind {
      for item in items { decodeItem(item, into: &files) }
    }
    return finishFiles(files)
  }

  /// The manifest's keys but the items of `files`: what each item is decoded
  /// against. `root` may be the top mapping as far as `files` (the items
  /// then come one by one, as the parser reads them).
  package mutating func decodeHead(_ root: YAMLNode) -> FilesProgress? {
    guard let top = fields(root, "the manifest", allowed: Keys.top) else { return nil }
    decodeVersion(top, root: root)
    var progress = FilesProgress(manifest: decodeSettings(top))
    if let d = top["defaults"] {
      progress.defaults = decodeFileFields(d.value, isDefaults: true) ?? FileFields()
    }
    guard let filesPair = top["files"] else {
      error(root.mark, "missing required key 'files' (the list of files to keep in step)")
      return progress
    }
    guard case .sequence(let items) = filesPair.value.kind else {
      if !filesPair.value.isNull {
        error(filesPair.value.mark, "files must be a list of file entries, found \(filesPair.value.kindName)")
      } else {
        warning(filesPair.value.mark, "files is empty: this manifest keeps nothing in step")
      }
      return progress
    }
    progress.pair = filesPair
    progress.manifest.files.reserveCapacity(items.count)
    return progress
  }

  /// The warnings about `files` as a whole, once every item is in.
  package mutating func finishFiles(_ files: FilesProgress) -> Manifest {
    guard let pair = files.pair else { return files.manifest }
    if files.items == 0 {
      warning(pair.value.mark, "files is empty: this manifest keeps nothing in step")
    }
    fileWarnings(files.manifest, missingExpected: files.missingExpected, filesMark: pair.key.mark)
    return files.manifest
  }

  /// `version: 1`, required.
  package mutating func decodeVersion(_ top: Fields<YAMLPair>, root: YAMLNode) {
    if let v = top["version"] {
      if case .scalar(let s, .plain) = v.value.kind, s.allSatisfy(\.isASCIIDigit), !s.isEmpty {
        if s != "1" {
          error(v.value.mark, "unsupported manifest version \(s): this syncfiles reads version 1")
        }
      } else {
        error(v.value.mark, "version must be the number 1, found \(describe(v.value))")
      }
    } else {
      error(root.mark, "missing required key 'version' (write 'version: 1' at the top)")
    }
  }

  /// The manifest's own settings: name, root, journal, metrics, limits, conditions, hooks.
  package mutating func decodeSettings(_ top: Fields<YAMLPair>) -> Manifest {
    var name = Paths.stem(of: absolutePath)
    var nameMark = SourceMark(line: 1, column: 1)
    if let n = top["name"] {
      nameMark = n.value.mark
      if let s = string(n.value, "name") { name = s }
    }
    if !isIdentifier(name) {
      error(
        nameMark,
        top["name"] == nil
          ? "manifest name '\(name)' (taken from the file name) may use only letters, digits, '.', '_' and '-'; set 'name:'"
          : "name '\(name)' may use only letters, digits, '.', '_' and '-'")
    }

    var rootPath = folder
    if let r = top["root"], let s = string(r.value, "root"), let e = expand(r.value, s, "root") {
      rootPath = Paths.normalize(expandHome(e.revealed), relativeTo: folder)
    }

    var manifest = Manifest(path: file, absolutePath: absolutePath, name: name, root: rootPath)
    if let j = top["journal"], let path = sessionPath(j.value, "journal") {
      manifest.journal = path
      manifest.journalMark = j.value.mark
    }
    if let m = top["metrics"], let path = sessionPath(m.value, "metrics") {
      manifest.metrics = path
    }
    if let n = top["notify"], let u = url(n.value, "notify") {
      if u.scheme == "http" || u.scheme == "https" {
        manifest.notify = u
      } else {
        error(n.value.mark, "notify must be an http or https URL (a monitor's ping URL), not \(u.scheme):")
      }
    }
    if let l = top["limits"] { manifest.limits = decodeLimits(l.value) }
    if let c = top["conditions"] { manifest.conditions = decodeConditions(c.value) }
    if let h = top["hooks"], let hf = fields(h.value, "hooks", allowed: Keys.hooks), let oc = hf["on_complete"] {
      manifest.onComplete = command(oc.value, "hooks.on_complete")
    }
    return manifest
  }

  /// One file entry over the defaults, its id checked unique.
  package mutating func decodeItem(_ item: YAMLNode, into files: inout FilesProgress) {
    files.items += 1
    guard let own = decodeFileFields(item, isDefaults: false) else { return }
    var duplicate = false
    if let id = own.id, let mark = own.marks[.id] {
      if let first = files.seenIDs.firstUse(of: id, at: mark.line) {
        error(mark, "duplicate id '\(id)' (first used at line \(first))")
        duplicate = true
      }
    }
    // Without `defaults` there is nothing to merge, and no copy is made (a
    // copy of the fields is one more to destroy, through the runtime).
    let made =
      if let defaults = files.defaults {
        makeEntry(own.over(defaults), item: item, manifest: files.manifest)
      } else {
        makeEntry(own, item: item, manifest: files.manifest)
      }
    // A duplicate is still checked in full (SPEC §8.2), but never kept.
    guard let entry = made, !duplicate else { return }
    // A prefix's objects take their sizes from the listing.
    if entry.expectedBytes == nil && entry.prefix == nil { files.missingExpected.append(entry.mark) }
    files.manifest.files.append(entry)
  }

  package func isIdentifier(_ s: String) -> Bool {
    !s.isEmpty
      && !s.containsByte { b in
        !((b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2E || b == 0x5F
          || b == 0x2D)
      }
  }

  package func expandHome(_ path: String) -> String {
    guard path == "~" || path.hasPrefix("~/"), let home = environment["HOME"], !home.isEmpty else { return path }
    return home + path.dropFirst()
  }

  package mutating func decodeLimits(_ node: YAMLNode) -> Limits {
    var l = Limits()
    guard let f = fields(node, "limits", allowed: Keys.limits) else { return l }
    if let p = f["parallel"] { l.parallel = integer(p.value, "limits.parallel", range: 1...1024) }
    if let p = f["per_host"] { l.perHost = integer(p.value, "limits.per_host", range: 1...1024) }
    if let r = f["rate"] { l.rate = decodeRateCap(r.value, "limits.rate") }
    if let d = f["deadline"] { l.deadline = duration(d.value, "limits.deadline") }
    if let s = f["segments"] { l.segments = integer(s.value, "limits.segments", range: 1...1024) }
    if let p = l.parallel, let h = l.perHost, h > p, let m = f["per_host"]?.value.mark {
      warning(m, "limits.per_host (\(h)) is above limits.parallel (\(p)) and has no effect")
    }
    return l
  }

  /// `segments: auto` (0 here), or a count of ranges from 1 to 16.
  package mutating func decodeSegments(_ node: YAMLNode, _ what: String) -> Int? {
    if case .scalar(let s, .plain) = node.kind, s == "auto" { return 0 }
    if case .scalar(let s, _) = node.kind, !s.isEmpty, !s.allSatisfy(\.isASCIIDigit), !s.hasPrefix("-") {
      error(node.mark, "\(what) must be auto or a number of ranges from 1 to 16, found '\(s)'")
      return nil
    }
    return integer(node, what, range: 1...16)
  }

  package mutating func scalarText(_ node: YAMLNode, _ what: String) -> String? {
    guard case .scalar(let s, _) = node.kind, !node.isNull else {
      error(node.mark, "\(what) must be a value, found \(node.kindName)")
      return nil
    }
    return s
  }

  package mutating func decodeConditions(_ node: YAMLNode) -> Conditions {
    var c = Conditions()
    guard let f = fields(node, "conditions", allowed: Keys.conditions) else { return c }
    if let w = f["window"], let s = string(w.value, "conditions.window") {
      switch TimeWindow.parse(s) {
      case .success(let win): c.window = win
      case .failure(let e): error(w.value.mark, "conditions.window: \(e.message)")
      }
    }
    if let a = f["ac_power"], let b = bool(a.value, "conditions.ac_power") { c.acPower = b }
    return c
  }
}
