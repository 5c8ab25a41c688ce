internal import CLinux
import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads the manifests one call names (files, and folders of drop-ins) into
/// one session, with every problem as a diagnostic.
public struct ManifestLoader: Sendable {
  public var environment: [String: String]
  /// Plugins URLs and `verify:` entries may name.
  public var plugins: any PluginCatalog
  public var limits: YAMLLimits
  /// Relative PATHs resolve against this folder.
  public var workingDirectory: String
  /// Called with a manifest's `journal` path as soon as its settings are
  /// read (before its `files:`), so the caller can start reading the journal.
  public var onJournalKey: (@Sendable (String) -> Void)?
  /// Items of `files:` decoded on the parser's thread before the rest move
  /// to a thread of their own (`PipelinedFiles`). Decoding an item costs more
  /// than a thread's start: past a few dozen items the parser should not
  /// wait for them.
  package var inlineItems = 32

  public init(
    environment: [String: String], plugins: (any PluginCatalog)? = nil, limits: YAMLLimits = YAMLLimits(),
    workingDirectory: String
  ) {
    self.environment = environment
    self.plugins = plugins ?? PluginLocator(environment: environment)
    self.limits = limits
    self.workingDirectory = workingDirectory
  }

  /// Decodes one manifest from its text. `path` is how diagnostics name it.
  /// The items of `files:` are decoded as the parser reads them, so a large
  /// manifest is never held whole as a tree. That needs every other key
  /// before `files:`; when one comes after it, the text is read again as a
  /// tree, and the diagnostics are those of that reading alone.
  public func decode(_ bytes: [UInt8], path: String, absolutePath: String) -> (Manifest?, [Diagnostic]) {
    decode(.bytes(bytes), path: path, absolutePath: absolutePath)
  }

  /// As above, from bytes or from a regular file read a piece at a time
  /// (read from its start again when a key comes after `files:`).
  package func decode(_ input: YAMLInput, path: String, absolutePath: String) -> (Manifest?, [Diagnostic]) {
    let fresh = ManifestDecoder(
      file: path, absolutePath: absolutePath, environment: environment, plugins: plugins)
    var streamed = StreamedFiles(decoder: fresh)
    streamed.onJournalKey = onJournalKey
    var piped = PipelinedFiles(streamed, inlineItems: inlineItems)
    var root: YAMLNode?
    do throws(YAMLError) {
      root = try YAMLLoader.load(input, limits: limits, streaming: "files", into: &piped)
      var sink = piped.end()
      if sink.files?.pair != nil {
        if let manifest = sink.finish(root) { return Self.done(manifest, sink.decoder) }
        if case .file(let fd) = input, lseek(fd, 0, SEEK_SET) != 0 {
          throw YAMLError(mark: nil, message: "cannot read again: \(String(cString: strerror(errno)))")
        }
        var tree = NoListSink()
        root = try YAMLLoader.load(input, limits: limits, streaming: nil, into: &tree)
      }
    } catch {
      _ = piped.end()  // the items handed over are decoded, then dropped with the rest
      var decoder = fresh
      decoder.error(error.mark, error.message)
      return (nil, decoder.diagnostics)
    }
    var decoder = fresh
    let manifest = decoder.decodeManifest(root)
    return Self.done(manifest, decoder)
  }

  private static func done(_ manifest: Manifest?, _ decoder: ManifestDecoder) -> (Manifest?, [Diagnostic]) {
    var decoder = decoder
    var manifest = manifest
    manifest?.secrets = Secrets(decoder.substituted)
    decoder.finish()
    return (manifest, decoder.diagnostics)
  }

  /// Loads every manifest named by `paths` as one session, every check made.
  public func load(paths: [String]) -> ManifestSet {
    var set = loadDeferringDestinations(paths: paths)
    set.diagnostics += Self.destinationConflicts(set)
    // The check's tables were the load's last large allocation, on a heap
    // top glibc keeps: what planning allocates next does not reuse it, and it
    // would stay in the peak; the call is cheap.
    sf_release_free_memory()
    return set
  }

  /// As `load`, but the destinations are left to check (`destinationConflicts`,
  /// or `DestinationCheck` on a thread of its own beside the planning).
  public func loadDeferringDestinations(paths: [String]) -> ManifestSet {
    var set = ManifestSet()
    var seenFiles = Set<String>()
    for path in paths {
      for (shown, absolute) in expand(path: path, into: &set.diagnostics) {
        if seenFiles.contains(absolute) {
          set.diagnostics.append(
            Diagnostic(file: shown, mark: nil, severity: .warning, message: "named more than once; read once"))
          continue
        }
        seenFiles.insert(absolute)
        let (manifest, diagnostics) = read(shown, absolute)
        set.diagnostics += diagnostics
        if let manifest { set.manifests.append(manifest) }
      }
    }
    checkSession(&set)
    return set
  }

  /// One manifest file. A regular file is parsed as it is read; anything
  /// else (a pipe, `<(command)`) is read whole first, as it can be read once.
  package func read(_ shown: String, _ absolute: String) -> (Manifest?, [Diagnostic]) {
    let failed = { (message: String) in
      (nil as Manifest?, [Diagnostic(file: shown, mark: nil, severity: .error, message: message)])
    }
    let opened: (fd: Int32, size: Int?)
    switch FileIO.openForReading(absolute) {
    case .success(let o): opened = o
    case .failure(let e): return failed(e.message)
    }
    defer { close(opened.fd) }
    guard let size = opened.size else {
      switch FileIO.readAll(fd: opened.fd, size: nil, limit: limits.maxBytes) {
      case .success(let bytes): return decode(.bytes(bytes), path: shown, absolutePath: absolute)
      case .failure(let e): return failed(e.message)
      }
    }
    if size > limits.maxBytes { return failed(FileIO.tooLarge(limit: limits.maxBytes)) }
    return decode(.file(opened.fd), path: shown, absolutePath: absolute)
  }

  /// A file is itself; a folder is its `*.yaml` and `*.yml` files, in name order.
  package func expand(path: String, into diagnostics: inout [Diagnostic]) -> [(String, String)] {
    let absolute = Paths.normalize(path, relativeTo: workingDirectory)
    var st = stat()
    guard stat(absolute, &st) == 0 else {
      let reason = String(cString: strerror(errno))
      diagnostics.append(Diagnostic(file: path, mark: nil, severity: .error, message: "cannot read: \(reason)"))
      return []
    }
    if (st.st_mode & S_IFMT) != S_IFDIR { return [(path, absolute)] }
    guard let names = FileIO.listFolder(absolute) else {
      let reason = String(cString: strerror(errno))
      diagnostics.append(Diagnostic(file: path, mark: nil, severity: .error, message: "cannot list folder: \(reason)"))
      return []
    }
    let manifests = names.filter { ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) && !$0.hasPrefix(".") }
      .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
      .filter { name in
        var s = stat()
        return stat(absolute + "/" + name, &s) == 0 && (s.st_mode & S_IFMT) == S_IFREG
      }
    if manifests.isEmpty {
      diagnostics.append(
        Diagnostic(file: path, mark: nil, severity: .warning, message: "folder holds no *.yaml or *.yml manifest"))
    }
    let prefix = path.hasSuffix("/") ? path : path + "/"
    return manifests.map { (prefix + $0, absolute + "/" + $0) }
  }

  /// Rules that span manifests: unique names and one journal (the
  /// destinations are checked apart: `destinationConflicts`).
  package func checkSession(_ set: inout ManifestSet) {
    var found: [Diagnostic] = []
    var names: [String: Manifest] = [:]
    for m in set.manifests {
      if let first = names[m.name] {
        found.append(
          Diagnostic(
            file: m.path, mark: SourceMark(line: 1, column: 1), severity: .error,
            message: "manifest name '\(m.name)' is also the name of \(first.path); task ids would collide (set 'name:')"
          ))
      } else {
        names[m.name] = m
      }
    }

    var journals: [String: Manifest] = [:]
    for m in set.manifests {
      guard let j = m.journal else { continue }
      if let other = journals.values.first, journals[j] == nil {
        found.append(
          Diagnostic(
            file: m.path, mark: m.journalMark, severity: .error,
            message:
              "journal '\(j)' differs from '\(other.journal!)' named by \(other.path); one session has one journal"))
      }
      journals[j] = journals[j] ?? m
    }
    set.diagnostics += set.masked(found)
  }

  /// An entry by (manifest, entry) indices: copying entries into the
  /// tables would cost more than the whole check.
  package typealias EntryIndex = (m: Int, e: Int)

  /// Two tasks writing one path, or one task's file standing where another
  /// needs a folder. Paths are looked up by their bytes (`ByteKeyTable`):
  /// no string is made for a destination's folder unless it is new.
  public static func destinationConflicts(_ set: ManifestSet) -> [Diagnostic] {
    func describe(_ o: EntryIndex) -> String {
      let m = set.manifests[o.m]
      let e = m.files[o.e]
      return "'\(e.qualifiedID)' (\(m.path):\(e.destinationMark))"
    }
    let numbering = Numbering(set)
    let (owners, seconds, firstPass) = Self.sameDestinations(numbering, describe)
    var conflicts = firstPass
    // Folders known to be no task's destination, all the way up: most
    // destinations share their folders, so each folder is looked up once.
    var clear = ByteKeyTable()
    var clearFolders: [String] = []
    for (mi, m) in set.manifests.enumerated() {
      for ei in m.files.indices where seconds.isEmpty || !seconds.contains(numbering.number(mi, ei)) {
        let found: (folder: String, owner: EntryIndex)? = m.files[ei].destinationPath.withUTF8Bytes { path in
          var walked: [(end: Int, hash: UInt32)] = []
          // The folder ends at the last slash before `end`; the root ("/") ends the walk.
          var end = path.count
          while let slash = path[..<end].lastIndex(of: UInt8(ascii: "/")), slash > 0 {
            end = slash
            let folder = UnsafeBufferPointer(rebasing: path[..<end])
            let hash = ByteKeyTable.hash(folder)
            if clear.find(hash: hash, isKey: { clearFolders[$0].hasBytes(folder) }) != nil { break }
            if let other = owners.find(hash: hash, isKey: { numbering.destination($0).hasBytes(folder) }) {
              return (String(decoding: folder, as: UTF8.self), numbering.entry(other))
            }
            walked.append((end, hash))
          }
          for w in walked {
            clear.insert(hash: w.hash, number: clearFolders.count)
            clearFolders.append(String(decoding: UnsafeBufferPointer(rebasing: path[..<w.end]), as: UTF8.self))
          }
          return nil
        }
        guard let (folder, other) = found else { continue }
        let e = m.files[ei]
        let outer = set.manifests[other.m].files[other.e]
        guard let message = Self.nesting(e, in: outer, folder: folder, describe(other)) else { continue }
        conflicts.append(Self.conflict(m, e, message))
      }
    }
    return set.masked(conflicts)
  }

  /// What is wrong with `e`'s destination lying below `outer`'s, or nil
  /// when nothing is (SPEC §10.3): a file entry may lie inside a prefix's
  /// folder (a listed key that lands on it is skipped), two prefixes'
  /// folders may not nest, and nothing lies below a file.
  package static func nesting(_ e: FileEntry, in outer: FileEntry, folder: String, _ other: String) -> String? {
    switch (e.prefix != nil, outer.prefix != nil) {
    case (false, true): return nil
    case (true, true):
      return
        "prefix '\(e.qualifiedID)' lists into the folder '\(e.destinationPath)', inside the folder '\(folder)' of prefix \(other); two prefixes' folders may not nest"
    case (true, false):
      return
        "prefix '\(e.qualifiedID)' lists into the folder '\(e.destinationPath)', which needs a folder at '\(folder)', the destination file of \(other)"
    case (false, false):
      return
        "destination of '\(e.qualifiedID)' needs a folder at '\(folder)', which is the destination file of \(other)"
    }
  }

  /// Entries numbered across the session, manifest after manifest, for a
  /// `ByteKeyTable`.
  private struct Numbering {
    package let set: ManifestSet
    /// Where each manifest's entries start.
    package let starts: [Int]

    package init(_ set: ManifestSet) {
      self.set = set
      var starts: [Int] = []
      var n = 0
      for m in set.manifests {
        starts.append(n)
        n += m.files.count
      }
      self.starts = starts
    }

    package func number(_ m: Int, _ e: Int) -> Int { starts[m] + e }
    func entry(_ n: Int) -> EntryIndex {
      var m = starts.count - 1
      while starts[m] > n { m -= 1 }
      return (m, n - starts[m])
    }
    func destination(_ n: Int) -> String {
      let (m, e) = entry(n)
      return set.manifests[m].files[e].destinationPath
    }
  }

  /// Who writes each destination first (by manifest, then entry), the
  /// entries that write one a second time, and an error for each of those.
  private static func sameDestinations(_ numbering: Numbering, _ describe: (EntryIndex) -> String)
    -> (owners: ByteKeyTable, seconds: Set<Int>, conflicts: [Diagnostic])
  {
    let set = numbering.set
    var owners = ByteKeyTable(capacity: set.fileCount)
    var seconds = Set<Int>()
    var conflicts: [Diagnostic] = []
    // Entries are reached by index throughout: iterating would copy each one.
    for (mi, m) in set.manifests.enumerated() {
      for ei in m.files.indices {
        let first: Int? = m.files[ei].destinationPath.withUTF8Bytes { path in
          let hash = ByteKeyTable.hash(path)
          return owners.findOrInsert(hash: hash, number: numbering.number(mi, ei)) {
            numbering.destination($0).hasBytes(path)
          }
        }
        guard let first else { continue }
        seconds.insert(numbering.number(mi, ei))
        let e = m.files[ei]
        conflicts.append(
          Self.conflict(
            m, e,
            "destination '\(e.destinationPath)' of '\(e.qualifiedID)' is also the destination of \(describe(numbering.entry(first)))"
          ))
      }
    }
    return (owners, seconds, conflicts)
  }

  /// An error at the destination of entry `e` of manifest `m`.
  private static func conflict(_ m: Manifest, _ e: FileEntry, _ message: String) -> Diagnostic {
    Diagnostic(file: m.path, mark: e.destinationMark, severity: .error, message: message)
  }
}

/// Decodes `files:` items as the parser hands them over.
package struct StreamedFiles: YAMLListSink {
  package var decoder: ManifestDecoder
  /// The manifest so far; nil until `files:` starts as a list at the top.
  package var files: FilesProgress?
  /// Pairs of the top mapping when `files:` started, itself included.
  package var pairsAtStart = 0
  package var onJournalKey: (@Sendable (String) -> Void)?

  package init(decoder: ManifestDecoder) { self.decoder = decoder }

  package mutating func begin(root: YAMLNode) -> Bool {
    guard case .mapping(let pairs) = root.kind else { return false }
    pairsAtStart = pairs.count
    files = decoder.decodeHead(root)
    if let journal = files?.manifest.journal { onJournalKey?(journal) }
    return files?.pair != nil
  }

  package mutating func item(_ node: consuming YAMLNode) {
    if files != nil { decoder.decodeItem(node, into: &files!) }
  }

  /// The manifest, when no key came after `files:` (what the items were
  /// decoded against was then the whole top); nil otherwise.
  mutating func finish(_ root: YAMLNode?) -> Manifest? {
    guard let progress = files, case .mapping(let pairs)? = root?.kind, pairs.count == pairsAtStart,
      case .scalar("files", .plain)? = pairs.last?.key.kind
    else { return nil }
    return decoder.finishFiles(progress)
  }
}
