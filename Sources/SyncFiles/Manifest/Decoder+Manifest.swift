/// File keys as written in one entry or in `defaults`, before merging.
/// Mapping-valued keys (`retry`, `timeout`, `headers`) merge key by key.
struct FileFields {
  var id: String?
  var url: SourceURL?
  var mirrors: [SourceURL]?
  var destination: (relative: String, mark: SourceMark)?
  var expectedBytes: Int64?
  var maxBytes: Int64?
  var sha256: String?
  var schedule: Schedule?
  var notBefore: Timestamp?
  var discretionary: Bool?
  var headers: [Header]?
  var mode: UInt32?
  var attempts: Int?
  var backoff: TimeSpan?
  var maxBackoff: TimeSpan?
  var connect: TimeSpan?
  var stall: TimeSpan?
  var onChange: [String]?
  var verify: [VerifySpec]?
  var tls: TLSOptions?
  var proxy: ProxySetting?
  var netrc: NetrcSetting?
  var s3: S3Options?
  /// `segments`: 0 stands for `auto`.
  var segments: Int?
  var cacheMaxAge: TimeSpan?
  /// Where each key was written, for errors that involve two keys.
  var marks = Fields<SourceMark>()

  /// `self` over `defaults`.
  func over(_ d: FileFields) -> FileFields {
    var r = self
    r.expectedBytes = expectedBytes ?? d.expectedBytes
    r.maxBytes = maxBytes ?? d.maxBytes
    r.schedule = schedule ?? d.schedule
    r.notBefore = notBefore ?? d.notBefore
    r.discretionary = discretionary ?? d.discretionary
    r.mode = mode ?? d.mode
    r.attempts = attempts ?? d.attempts
    r.backoff = backoff ?? d.backoff
    r.maxBackoff = maxBackoff ?? d.maxBackoff
    r.connect = connect ?? d.connect
    r.stall = stall ?? d.stall
    r.onChange = onChange ?? d.onChange
    r.verify = verify ?? d.verify
    r.proxy = proxy ?? d.proxy
    r.netrc = netrc ?? d.netrc
    r.segments = segments ?? d.segments
    r.cacheMaxAge = cacheMaxAge ?? d.cacheMaxAge
    // Mappings merge key by key.
    if let ds = d.s3 { r.s3 = (s3 ?? S3Options()).over(ds) }
    if let dt = d.tls { r.tls = (tls ?? TLSOptions()).over(dt) }
    if let dh = d.headers {
      let own = Set((headers ?? []).map { $0.name.lowercased() })
      r.headers = (headers ?? []) + dh.filter { !own.contains($0.name.lowercased()) }
    }
    for (k, v) in d.marks where r.marks[k] == nil { r.marks[k] = v }
    return r
  }
}

/// A manifest while its `files` are decoded one item at a time.
struct FilesProgress {
  var manifest: Manifest
  /// `defaults`, when the manifest has the key.
  var defaults: FileFields? = nil
  /// `files:` as written (nil: missing or not a list).
  var pair: YAMLPair? = nil
  var items = 0
  /// The line where each id was first used.
  var seenIDs = SeenIDs()
  /// Where entries lack `expected_bytes`.
  var missingExpected: [SourceMark] = []
}

/// The ids of a manifest's entries so far and the line where each was
/// first used (the line alone: 4 bytes, not 16 a mark). Each id is hashed
/// once and never again as the table grows: a dictionary hashed each id
/// twice and again at every doubling, a tenth of the decoding thread's time
/// for a manifest of 100,000 entries.
struct SeenIDs {
  private var table = ByteKeyTable()
  private var ids: [String] = []
  private var lines: [Int32] = []

  /// The line where `id` was first used; nil when it is new, and then
  /// `line` is kept as its first use.
  mutating func firstUse(of id: String, at line: Int) -> Int32? {
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
  mutating func sessionPath(_ node: YAMLNode, _ key: String) -> String? {
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

  mutating func decodeManifest(_ root: YAMLNode?) -> Manifest? {
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
  mutating func decodeHead(_ root: YAMLNode) -> FilesProgress? {
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
  mutating func finishFiles(_ files: FilesProgress) -> Manifest {
    guard let pair = files.pair else { return files.manifest }
    if files.items == 0 {
      warning(pair.value.mark, "files is empty: this manifest keeps nothing in step")
    }
    fileWarnings(files.manifest, missingExpected: files.missingExpected, filesMark: pair.key.mark)
    return files.manifest
  }

  /// `version: 1`, required.
  mutating func decodeVersion(_ top: Fields<YAMLPair>, root: YAMLNode) {
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
  mutating func decodeSettings(_ top: Fields<YAMLPair>) -> Manifest {
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
    if let l = top["limits"] { manifest.limits = decodeLimits(l.value) }
    if let c = top["conditions"] { manifest.conditions = decodeConditions(c.value) }
    if let h = top["hooks"], let hf = fields(h.value, "hooks", allowed: Keys.hooks), let oc = hf["on_complete"] {
      manifest.onComplete = command(oc.value, "hooks.on_complete")
    }
    return manifest
  }

  /// One file entry over the defaults, its id checked unique.
  mutating func decodeItem(_ item: YAMLNode, into files: inout FilesProgress) {
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
    if entry.expectedBytes == nil { files.missingExpected.append(entry.mark) }
    files.manifest.files.append(entry)
  }

  private func isIdentifier(_ s: String) -> Bool {
    !s.isEmpty
      && !s.containsByte { b in
        !((b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2E || b == 0x5F
          || b == 0x2D)
      }
  }

  private func expandHome(_ path: String) -> String {
    guard path == "~" || path.hasPrefix("~/"), let home = environment["HOME"], !home.isEmpty else { return path }
    return home + path.dropFirst()
  }

  mutating func decodeLimits(_ node: YAMLNode) -> Limits {
    var l = Limits()
    guard let f = fields(node, "limits", allowed: Keys.limits) else { return l }
    if let p = f["parallel"] { l.parallel = integer(p.value, "limits.parallel", range: 1...1024) }
    if let p = f["per_host"] { l.perHost = integer(p.value, "limits.per_host", range: 1...1024) }
    if let r = f["rate"], let s = scalarText(r.value, "limits.rate") {
      switch ByteSize.parseRate(s) {
      case .success(let v) where v > 0: l.rate = v
      case .success: error(r.value.mark, "limits.rate must be more than 0 bytes per second")
      case .failure(let e): error(r.value.mark, "limits.rate: \(e.message)")
      }
    }
    if let d = f["deadline"] { l.deadline = duration(d.value, "limits.deadline") }
    if let s = f["segments"] { l.segments = integer(s.value, "limits.segments", range: 1...1024) }
    if let p = l.parallel, let h = l.perHost, h > p, let m = f["per_host"]?.value.mark {
      warning(m, "limits.per_host (\(h)) is above limits.parallel (\(p)) and has no effect")
    }
    return l
  }

  /// `segments: auto` (0 here), or a count of ranges from 1 to 16.
  mutating func decodeSegments(_ node: YAMLNode, _ what: String) -> Int? {
    if case .scalar(let s, .plain) = node.kind, s == "auto" { return 0 }
    if case .scalar(let s, _) = node.kind, !s.isEmpty, !s.allSatisfy(\.isASCIIDigit), !s.hasPrefix("-") {
      error(node.mark, "\(what) must be auto or a number of ranges from 1 to 16, found '\(s)'")
      return nil
    }
    return integer(node, what, range: 1...16)
  }

  private mutating func scalarText(_ node: YAMLNode, _ what: String) -> String? {
    guard case .scalar(let s, _) = node.kind, !node.isNull else {
      error(node.mark, "\(what) must be a value, found \(node.kindName)")
      return nil
    }
    return s
  }

  mutating func decodeConditions(_ node: YAMLNode) -> Conditions {
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

  /// Decodes the keys of a file entry (or of `defaults`), each on its own.
  mutating func decodeFileFields(_ node: YAMLNode, isDefaults: Bool) -> FileFields? {
    let what = isDefaults ? "defaults" : "a file entry"
    guard case .mapping(let pairs) = node.kind else {
      error(node.mark, "\(what) must be a mapping with at least id, url and destination, found \(node.kindName)")
      return nil
    }
    if isDefaults {
      for p in pairs {
        if let k = p.key.scalarText, Keys.perFileOnly.contains(k) {
          error(p.key.mark, "'\(k)' names one file and cannot have a default; set it in each file entry")
        }
      }
    }
    // Defaults are checked against every file key: those that name one file
    // were reported above and are dropped here.
    guard let f = fileFields(isDefaults ? filtered(node, dropping: Keys.perFileOnly) : node, what) else { return nil }
    var r = FileFields()
    r.marks = f.mapValues(\.mark)
    let label = { (key: String) in isDefaults ? "defaults.\(key)" : key }

    decodeSource(f, into: &r)
    decodeSizes(f, into: &r, label: label)
    decodeWhen(f, into: &r, label: label)
    decodePatience(f, into: &r, label: label)
    if let p = f[.discretionary] { r.discretionary = bool(p, label("discretionary")) }
    if let p = f[.segments] { r.segments = decodeSegments(p, label("segments")) }
    if let p = f[.cacheMaxAge] { r.cacheMaxAge = duration(p, label("cache_max_age"), positive: false) }
    if let p = f[.headers] { r.headers = decodeHeaders(p, label("headers")) }
    if let p = f[.mode] { r.mode = decodeMode(p, label("mode")) }
    if let p = f[.onChange] { r.onChange = command(p, label("on_change")) }
    if let p = f[.verify] { r.verify = decodeVerify(p, label("verify")) }
    decodeNetwork(f, into: &r, label: label)
    return r
  }

  /// id, url, mirrors and destination: where the file comes from and goes.
  mutating func decodeSource(_ f: Fields<YAMLNode>, into r: inout FileFields) {
    if let p = f[.id], let s = string(p, "id") {
      if isIdentifier(s) {
        r.id = s
      } else {
        error(p.mark, "id '\(s)' may use only letters, digits, '.', '_' and '-'")
      }
    }
    if let p = f[.url] { r.url = url(p, "url") }
    if let p = f[.mirrors] {
      if case .sequence(let items) = p.kind {
        var list: [SourceURL] = []
        for item in items { if let u = url(item, "mirror") { list.append(u) } }
        r.mirrors = list
      } else {
        error(p.mark, "mirrors must be a list of URLs, found \(p.kindName)")
      }
    }
    if let p = f[.destination], let s = string(p, "destination") {
      // Confined to root in makeEntry, once root is known.
      r.destination = (s, p.mark)
    }
  }

  /// expected_bytes, max_bytes and sha256: what the bytes must be.
  mutating func decodeSizes(_ f: Fields<YAMLNode>, into r: inout FileFields, label: (String) -> String) {
    if let p = f[.expectedBytes] { r.expectedBytes = size(p, label("expected_bytes")) }
    if let p = f[.maxBytes] {
      r.maxBytes = size(p, label("max_bytes"))
      if r.maxBytes == 0 {
        error(p.mark, "\(label("max_bytes")) of 0 would abort every transfer")
        r.maxBytes = nil
      }
    }
    if let p = f[.sha256], let s = string(p, "sha256") {
      let hex = s.lowercased()
      if hex.count == 64 && hex.allSatisfy({ $0.isHexDigit }) {
        r.sha256 = hex
      } else {
        error(
          p.mark,
          "sha256 must be 64 hexadecimal digits (as printed by sha256sum), found \(s.count) character\(s.count == 1 ? "" : "s")"
        )
      }
    }
  }

  /// schedule and not_before: when the file is due.
  mutating func decodeWhen(_ f: Fields<YAMLNode>, into r: inout FileFields, label: (String) -> String) {
    if let p = f[.schedule], let s = string(p, label("schedule")) {
      switch Schedule.parse(s) {
      case .success(let sch):
        if case .cron(let c) = sch, c.next(after: Timestamp(year: 2024, month: 1, day: 1)) == nil {
          error(p.mark, "schedule '\(s)' never fires (no such date)")
        } else {
          r.schedule = sch
          if let gap = sch.shortestInterval, gap < .minutes(15) {
            warning(
              p.mark,
              "schedule '\(s)' is due as often as every \(gap); more often than 15m costs servers and links for little gain"
            )
          }
        }
      case .failure(let e): error(p.mark, "\(label("schedule")): \(e.message)")
      }
    }
    if let p = f[.notBefore], let s = string(p, label("not_before")) {
      if let t = Timestamp.parseRFC3339(s) {
        r.notBefore = t
      } else {
        error(
          p.mark,
          "\(label("not_before")) '\(s)' is not an RFC 3339 date-time such as 2026-12-01T00:00:00Z")
      }
    }
  }

  /// retry and timeout: how long to keep trying.
  mutating func decodePatience(_ f: Fields<YAMLNode>, into r: inout FileFields, label: (String) -> String) {
    if let p = f[.retry], let rf = fields(p, label("retry"), allowed: Keys.retry) {
      if let a = rf["attempts"] { r.attempts = integer(a.value, label("retry.attempts"), range: 1...100) }
      if let b = rf["backoff"] { r.backoff = duration(b.value, label("retry.backoff")) }
      if let m = rf["max_backoff"] {
        r.maxBackoff = duration(m.value, label("retry.max_backoff"))
        r.marks["max_backoff"] = m.value.mark
      }
    }
    if let p = f[.timeout], let tf = fields(p, label("timeout"), allowed: Keys.timeout) {
      if let c = tf["connect"] { r.connect = duration(c.value, label("timeout.connect")) }
      if let s = tf["stall"] { r.stall = duration(s.value, label("timeout.stall")) }
    }
  }

  /// A mapping without some keys (already reported), so they are not reported twice.
  private func filtered(_ node: YAMLNode, dropping keys: [String]) -> YAMLNode {
    guard case .mapping(let pairs) = node.kind else { return node }
    var n = node
    n.kind = .mapping(pairs.filter { !keys.contains($0.key.scalarText ?? "") })
    return n
  }

  mutating func decodeHeaders(_ node: YAMLNode, _ what: String) -> [Header]? {
    guard case .mapping(let pairs) = node.kind else {
      error(node.mark, "\(what) must be a mapping of header names to values, found \(node.kindName)")
      return nil
    }
    var out: [Header] = []
    var seen: [String: SourceMark] = [:]
    for p in pairs {
      guard let name = p.key.scalarText, !p.key.isNull else {
        error(p.key.mark, "header names in \(what) must be plain words")
        continue
      }
      let isToken =
        !name.isEmpty
        && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "!#$%&'*+-.^_`|~".contains($0)) }
      guard isToken else {
        error(p.key.mark, "'\(name)' is not a valid HTTP header name")
        continue
      }
      let lower = name.lowercased()
      if let first = seen[lower] {
        error(p.key.mark, "header '\(name)' is set twice in \(what) (first at line \(first.line))")
        continue
      }
      seen[lower] = p.key.mark
      if Keys.managedHeaders.contains(lower) {
        error(
          p.key.mark, "header '\(name)' is managed by syncfiles (resume, revalidation and encoding) and cannot be set")
        continue
      }
      guard let raw = string(p.value, "header '\(name)'"), let value = expand(p.value, raw, "header '\(name)'") else {
        continue
      }
      if value.revealed.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0.value == 0 }) {
        error(
          p.value.mark,
          "header '\(name)' contains a line break or NUL\(value.hasSecret ? " after ${VAR} expansion" : ""), which would inject headers"
        )
        continue
      }
      let sensitive =
        ["authorization", "proxy-authorization", "cookie"].contains(lower)
        || ["token", "secret", "api-key", "apikey", "password"].contains(where: { lower.contains($0) })
      if sensitive && !value.hasSecret && !raw.isEmpty {
        warning(
          p.value.mark,
          "header '\(name)' holds a secret written in the manifest; take it from the environment, as in \"Bearer ${TOKEN}\", so it never reaches output or the journal"
        )
      }
      out.append(Header(name: name, value: value))
    }
    return out
  }

  mutating func decodeMode(_ node: YAMLNode, _ what: String) -> UInt32? {
    guard case .scalar(var s, _) = node.kind, !node.isNull else {
      error(node.mark, "\(what) must be octal permission bits such as \"0644\", found \(node.kindName)")
      return nil
    }
    let original = s
    if s.lowercased().hasPrefix("0o") { s = String(s.dropFirst(2)) }
    guard (3...4).contains(s.count) || (s.count == 5 && s.hasPrefix("0")),
      s.allSatisfy({ ("0"..."7").contains($0) }), let v = UInt32(s, radix: 8), v <= 0o7777
    else {
      error(node.mark, "\(what) '\(original)' is not octal permission bits such as \"0644\" or \"0755\"")
      return nil
    }
    if v & 0o7000 != 0 {
      // A file from the network must never become setuid, setgid or sticky (SPEC §8.2).
      error(
        node.mark,
        "\(what) '\(original)' sets the setuid, setgid or sticky bit; a downloaded file may not have them (use \"\(octalMode(v & 0o777))\")"
      )
      return nil
    }
    if v & 0o002 != 0 {
      warning(node.mark, "\(what) '\(original)' lets every user write the file")
    }
    return v
  }

  mutating func decodeVerify(_ node: YAMLNode, _ what: String) -> [VerifySpec]? {
    guard case .sequence(let items) = node.kind else {
      error(node.mark, "\(what) must be a list such as [{plugin: gpg, with: {...}}], found \(node.kindName)")
      return nil
    }
    var out: [VerifySpec] = []
    for item in items {
      guard let f = fields(item, "a verify entry", allowed: Keys.verify) else { continue }
      guard let p = f["plugin"] else {
        error(item.mark, "a verify entry needs 'plugin: NAME'")
        continue
      }
      guard let name = string(p.value, "verify plugin") else { continue }
      guard isIdentifier(name) else {
        error(p.value.mark, "verify plugin name '\(name)' may use only letters, digits, '.', '_' and '-'")
        continue
      }
      let executable = PluginLocator.verifierExecutable(name: name)
      guard let path = plugins.verifierLocation(named: name) else {
        error(
          p.value.mark,
          "verify plugin '\(name)' not found: looked for an executable '\(executable)' in SYNCFILES_PLUGIN_PATH and PATH"
        )
        continue
      }
      var with = JSONValue.object([])
      if let w = f["with"] {
        if case .mapping = w.value.kind {
          with = json(w.value)
        } else if !w.value.isNull {
          error(w.value.mark, "'with' of a verify entry must be a mapping, found \(w.value.kindName)")
          continue
        }
      }
      out.append(VerifySpec(plugin: name, with: with, executable: path))
    }
    return out
  }

  /// A YAML subtree as JSON for a plugin (plain scalars typed as YAML 1.2 core).
  func json(_ node: YAMLNode) -> JSONValue {
    switch node.kind {
    case .scalar(let s, let style):
      if node.isNull { return .null }
      if style == .plain {
        if ["true", "True", "TRUE"].contains(s) { return .bool(true) }
        if ["false", "False", "FALSE"].contains(s) { return .bool(false) }
        if let i = Int64(s) { return .int(i) }
        if s.contains("."), let d = Double(s), d.isFinite { return .double(d) }
      }
      return .string(s)
    case .sequence(let items): return .array(items.map(json))
    case .mapping(let pairs): return .object(pairs.map { ($0.key.scalarText ?? "", json($0.value)) })
    }
  }

  /// Checks the merged keys of one entry and builds it.
  mutating func makeEntry(_ f: FileFields, item: YAMLNode, manifest: Manifest) -> FileEntry? {
    var missing: [String] = []
    if f.marks[.id] == nil { missing.append("id") }
    if f.marks[.url] == nil { missing.append("url") }
    if f.marks[.destination] == nil { missing.append("destination") }
    if !missing.isEmpty {
      let label = f.id.map { "file entry '\($0)'" } ?? "file entry"
      error(
        item.mark,
        "\(label) is missing required key\(missing.count > 1 ? "s" : "") \(missing.map { "'\($0)'" }.joined(separator: ", "))"
      )
      return nil
    }
    guard let id = f.id, let url = f.url, let dest = f.destination else { return nil }
    var relative = ""
    switch Paths.confine(destination: dest.relative, root: manifest.root) {
    case .success(let r): relative = r
    case .failure(let e):
      error(dest.mark, e.message)
      return nil
    }
    // Normal as it stands: the root is, and a confined destination has no
    // empty, `.` or `..` component.
    let path = String(manifest.root, manifest.root == "/" ? nil : UInt8(ascii: "/"), relative)
    let qualifiedID = String(manifest.name, UInt8(ascii: "/"), id)
    var entry = FileEntry.Values(
      qualifiedID: qualifiedID, idStart: qualifiedID.utf8.count - id.utf8.count, url: url, destinationPath: path,
      destinationStart: path.utf8.count - relative.utf8.count, mark: item.mark, destinationMark: dest.mark)
    entry.expectedBytes = f.expectedBytes
    entry.sha256 = f.sha256
    entry.notBefore = f.notBefore
    // An entry that sets no option, nor do its defaults, keeps the default
    // options' box: none is built and compared (a manifest of 100,000 entries: most of the options' cost).
    if f.marks.hasOptionKey() { entry.options = entryOptions(f, item: item, manifest: manifest, url: url) }
    let o = entry.options.value
    if let n = o.segments, let cap = manifest.limits.segments, n > cap {
      warning(
        f.marks[.segments] ?? item.mark,
        "segments: \(n) asks for more ranges than limits.segments (\(cap)) lets run at once: this file gets \(cap) connections"
      )
    }
    if (url.scheme == "http" || url.scheme == "https") && entry.sha256 == nil && o.maxBytes == nil
      && o.verify.isEmpty
    {
      warning(f.marks[.url] ?? item.mark) {
        "nothing bounds or verifies what '\(id)' installs: add sha256, or at least max_bytes"
      }
    }
    return FileEntry(entry)
  }

  /// The options of an entry that sets some (or whose defaults do), checked,
  /// in the box of a recent entry's equal options when there is one.
  mutating func entryOptions(_ f: FileFields, item: YAMLNode, manifest: Manifest, url: SourceURL)
    -> SharedValue<EntryOptions>
  {
    let retry = RetryPolicy(
      attempts: f.attempts ?? RetryPolicy().attempts, backoff: f.backoff ?? RetryPolicy().backoff,
      maxBackoff: f.maxBackoff ?? RetryPolicy().maxBackoff)
    if retry.maxBackoff < retry.backoff {
      error(
        f.marks["max_backoff"] ?? f.marks[.retry],
        "retry.max_backoff (\(retry.maxBackoff)) is shorter than retry.backoff (\(retry.backoff))")
    }
    var timeout = Timeouts()
    if let c = f.connect { timeout.connect = c }
    if let s = f.stall { timeout.stall = s }
    if let e = f.expectedBytes, let m = f.maxBytes, e > m {
      error(
        f.marks[.expectedBytes] ?? item.mark,
        "expected_bytes (\(ByteSize.format(e))) is larger than max_bytes (\(ByteSize.format(m))): every transfer would be aborted"
      )
    }
    if url.scheme == "http", f.headers?.contains(where: { $0.name.lowercased().contains("auth") }) == true {
      warning(f.marks[.headers] ?? item.mark, "credentials in headers would travel over plain http; use https")
    }
    let o = options(f, retry: retry, timeout: timeout)
    checkNetwork(o.network, marks: f.marks)
    if o.discretionary && manifest.conditions.isEmpty {
      warning(
        f.marks[.discretionary] ?? item.mark,
        "discretionary has no effect: this manifest sets no conditions (window, ac_power)")
    }
    return shared(o)
  }

  /// The options an entry rarely sets for itself, from its merged keys.
  func options(_ f: FileFields, retry: RetryPolicy, timeout: Timeouts) -> EntryOptions {
    var o = EntryOptions()
    o.retry = retry
    o.timeout = timeout
    o.mirrors = f.mirrors ?? []
    o.maxBytes = f.maxBytes
    o.schedule = f.schedule ?? .always
    o.discretionary = f.discretionary ?? false
    o.segments = f.segments.flatMap { $0 == 0 ? nil : $0 }
    o.cacheMaxAge = f.cacheMaxAge ?? TimeSpan(seconds: 0)
    o.headers = f.headers ?? []
    o.mode = f.mode
    o.onChange = f.onChange
    o.verify = f.verify ?? []
    o.network.tls = f.tls ?? TLSOptions()
    o.network.proxy = f.proxy
    o.network.netrc = f.netrc
    o.network.s3 = f.s3 ?? S3Options()
    return o
  }

  /// The box of a recent entry's options when these are equal, else a new
  /// one (the eight last kept, the most recent first).
  mutating func shared(_ o: EntryOptions) -> SharedValue<EntryOptions> {
    if let i = recentOptions.firstIndex(where: { $0.value == o }) { return recentOptions[i] }
    let box = SharedValue(o)
    if recentOptions.count == 8 { recentOptions.removeLast() }
    recentOptions.insert(box, at: 0)
    return box
  }

  mutating func fileWarnings(_ m: Manifest, missingExpected: [SourceMark], filesMark: SourceMark) {
    let shown = 10
    for mark in missingExpected.prefix(shown) {
      warning(mark, "no expected_bytes: plan totals, ETA and the disk preflight cannot count this file")
    }
    if missingExpected.count > shown {
      warning(
        filesMark,
        "\(missingExpected.count - shown) more files have no expected_bytes (\(missingExpected.count) in all)")
    }
    // By index: iterating would copy every entry.
    var tiny = 0
    var anyDiscretionary = false
    for i in m.files.indices {
      if (m.files[i].expectedBytes ?? .max) <= 64 * 1024 { tiny += 1 }
      if m.files[i].discretionary { anyDiscretionary = true }
    }
    if tiny >= 1000 {
      warning(
        filesMark,
        "\(tiny) files of at most 64 KiB in one manifest: each costs a request, a sync and a rename; consider serving them as one archive"
      )
    }
    if !m.conditions.isEmpty && !anyDiscretionary && !m.files.isEmpty {
      warning(nil, "conditions are set but no file is discretionary, so they hold nothing back")
    }
  }
}
