import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The loader decodes `files:` items as libyaml reads them (issue 15, W5).
/// Each test holds that reading to the whole-tree reading it replaced.
@Suite struct StreamingDecodeTests {
  /// The manifest and diagnostics as the whole tree gives them.
  func treeDecode(_ yaml: String) -> (Manifest?, [Diagnostic]) {
    var decoder = ManifestDecoder(
      file: "test.yaml", absolutePath: "/m/test.yaml", environment: [:], plugins: PluginLocator(searchPath: []))
    let root = try? YAMLLoader.load(Array(yaml.utf8))
    var manifest = decoder.decodeManifest(root)
    manifest?.secrets = Secrets(decoder.substituted)
    decoder.finish()
    return (manifest, decoder.diagnostics)
  }

  /// Every item decoded on the pipeline's thread (`PipelinedFiles`), from the first.
  func pipedDecode(_ yaml: String) -> (Manifest?, [Diagnostic]) {
    var loader = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: "/m")
    loader.inlineItems = 0
    return loader.decode(Array(yaml.utf8), path: "test.yaml", absolutePath: "/m/test.yaml")
  }

  /// Read from a file a piece at a time, as `load(paths:)` reads a regular file.
  func fileDecode(_ yaml: String) -> (Manifest?, [Diagnostic]) {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(yaml, to: dir + "/test.yaml")
    let fd = open(dir + "/test.yaml", O_RDONLY)
    defer { close(fd) }
    var loader = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: "/m")
    loader.inlineItems = 0
    return loader.decode(.file(fd), path: "test.yaml", absolutePath: "/m/test.yaml")
  }

  func agree(_ yaml: String) {
    let (streamed, sd) = decode(yaml)
    let (piped, pd) = pipedDecode(yaml)
    let (read, rd) = fileDecode(yaml)
    let (tree, td) = treeDecode(yaml)
    #expect(streamed == tree)
    #expect(sd == td)
    #expect(piped == tree)
    #expect(pd == td)
    #expect(read == tree)
    #expect(rd == td)
  }

  /// A manifest is read from its file 64 KiB at a time and never held whole;
  /// one larger than the limit is refused however it grew.
  @Test func aFileReadInPiecesIsRefusedPastTheLimit() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var yaml = "version: 1\nname: big\nroot: /srv\nfiles:\n"
    for i in 0..<2000 { yaml += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: \(i).bin}\n" }
    write(yaml, to: dir + "/m.yaml")
    let fd = open(dir + "/m.yaml", O_RDONLY)
    defer { close(fd) }
    var limits = YAMLLimits()
    limits.maxBytes = 100_000  // the file is about 150 kB
    var sink = NoListSink()
    #expect(throws: YAMLError(mark: nil, message: "manifest is larger than the 97.7 KiB limit")) {
      try YAMLLoader.load(.file(fd), limits: limits, streaming: nil, into: &sink)
    }
    // By path: refused before parsing, with the same words.
    var loader = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir)
    loader.limits = limits
    let set = loader.load(paths: ["m.yaml"])
    #expect(set.diagnostics.map(\.description) == ["m.yaml: error: manifest is larger than the 97.7 KiB limit"])
    loader.limits = YAMLLimits()
    #expect(loader.load(paths: ["m.yaml"]).manifests.first?.files.count == 2000)
  }

  /// A pipe can be read once: it is read whole, and a key after `files:`
  /// (which makes a regular file be read again) still counts.
  @Test func aPipeWithAKeyAfterFilesIsReadWhole() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let yaml =
      "version: 1\nfiles:\n  - {id: a, url: 'https://example.org/a', destination: a.bin}\nname: late\nroot: /srv\n"
    #expect(mkfifo(dir + "/m.yaml", 0o600) == 0)
    let writer = Thread {
      let fd = open(dir + "/m.yaml", O_WRONLY)
      _ = FileIO.writeAll(fd, Array(yaml.utf8))
      close(fd)
    }
    writer.start()
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir)
      .load(paths: ["m.yaml"])
    #expect(!set.hasErrors, "\(set.diagnostics)")
    #expect(set.manifests.first?.name == "late")
    #expect(set.manifests.first?.files.first?.destinationPath == "/srv/a.bin")
    #expect(set.manifests.first?.files.first?.destination == "a.bin")
  }

  /// Thousands of items, with errors and warnings among them, decoded partly
  /// inline and partly on the pipeline's thread: as the tree reads them.
  @Test func aLargeManifestDecodedOnTwoThreadsIsTheTreeReading() {
    var yaml = "version: 1\nname: big\nroot: /srv\nfiles:\n"
    for i in 0..<3000 {
      switch i % 97 {
      case 5: yaml += "  - {id: f\(i - 1), url: 'https://h.example/\(i)', destination: d/\(i)}\n"  // duplicate id
      case 11: yaml += "  - {id: f\(i), url: 'ftp://h.example/\(i)', destination: d/\(i)}\n"  // bad scheme
      case 17: yaml += "  - {id: f\(i), url: 'https://h.example/\(i)', destination: d/\(i), mode: 0999}\n"
      default:
        yaml += "  - {id: f\(i), url: 'https://h.example/\(i)', destination: d/\(i), expected_bytes: \(i)KiB}\n"
      }
    }
    agree(yaml)
    let (m, d) = decode(yaml)
    #expect(m == nil || m!.files.count > 2500)
    #expect(d.contains { $0.severity == .error })
  }

  @Test func aSyntaxErrorAfterManyItemsLeavesOnlyTheSyntaxError() {
    var yaml = "version: 1\nname: big\nroot: /srv\nfiles:\n"
    for i in 0..<1000 { yaml += "  - {id: f\(i), url: 'https://h.example/\(i)', destination: d/\(i)}\n" }
    yaml += "  - {id: broken, url: [\n"
    for (m, d) in [decode(yaml), pipedDecode(yaml)] {
      #expect(m == nil)
      #expect(d.count == 1 && d[0].severity == .error)
    }
  }

  @Test func listReceivesItemsAndTreeKeepsTheListEmpty() throws {
    struct Collect: YAMLListSink {
      var offered: [String] = []
      var items: [Int] = []
      mutating func begin(root: YAMLNode) -> Bool {
        if case .mapping(let pairs) = root.kind { offered = pairs.compactMap(\.key.scalarText) }
        return true
      }
      mutating func item(_ node: YAMLNode) { items.append(node.mark.line) }
    }
    var sink = Collect()
    let text = "version: 1\nfiles:\n  - {id: a}\n  - [x, y]\n  - plain\nafter: 2\n"
    let root = try YAMLLoader.load(Array(text.utf8), streaming: "files", into: &sink)
    #expect(sink.offered == ["version", "files"])
    #expect(sink.items == [3, 4, 5])
    guard case .mapping(let pairs)? = root?.kind, pairs.count == 3, case .sequence(let kept) = pairs[1].value.kind
    else {
      Issue.record("unexpected tree \(String(describing: root))")
      return
    }
    #expect(kept.isEmpty)
  }

  @Test func aListUnderAnotherKeyOrDeeperDoesNotStream() throws {
    struct Refuse: YAMLListSink {
      var begun = 0
      mutating func begin(root: YAMLNode) -> Bool {
        begun += 1
        return true
      }
      func item(_ node: YAMLNode) {}
    }
    var sink = Refuse()
    let text = "other: [1, 2]\nnested: {files: [1]}\n"
    let root = try YAMLLoader.load(Array(text.utf8), streaming: "files", into: &sink)
    #expect(sink.begun == 0)
    guard case .mapping(let pairs)? = root?.kind, case .mapping(let inner) = pairs[1].value.kind,
      case .sequence(let kept) = inner[0].value.kind
    else {
      Issue.record("unexpected tree \(String(describing: root))")
      return
    }
    #expect(kept.count == 1)
  }

  @Test func entriesAndDiagnosticsMatchTheTreeReading() {
    agree(
      """
      version: 1
      name: s
      root: /srv
      defaults: {max_bytes: 1MiB, attempts: 3}
      files:
        - {id: a, url: 'https://example.org/a', destination: a.bin, expected_bytes: 4KiB}
        - {id: a, url: 'https://example.org/b', destination: b.bin}
        - {id: c, url: 'ftp://example.org/c', destination: c.bin, expected_bytes: 4 KiB}
        - {id: d, url: 'https://example.org/d', destination: d.bin, expected_bytes: 4 K iB, colour: red}
        - just a string
        - &e {id: e, url: 'https://example.org/e', destination: e.bin, sha256: zz}
        - {<<: *e, id: f, destination: f.bin}

      """)
  }

  @Test func keysAfterFilesAreReadAsBeforeThem() {
    let yaml = """
      files:
        - {id: a, url: 'https://example.org/a', destination: a.bin}
        - {id: a, url: 'https://example.org/b', destination: b.bin}
      defaults: {max_bytes: 2KiB}
      root: /data
      version: 1
      name: late

      """
    agree(yaml)
    let (m, d) = decode(yaml)
    #expect(m?.name == "late")
    #expect(m?.files.map(\.maxBytes) == [2048])
    #expect(m?.files.first?.destinationPath == "/data/a.bin")
    #expect(d.contains { $0.message.contains("duplicate id 'a'") })
  }

  @Test func aSecondFilesKeyIsReportedAsTheTreeReportsIt() {
    agree(
      """
      version: 1
      files:
        - {id: a, url: 'https://example.org/a', destination: a.bin}
      files:
        - {id: b, url: 'https://example.org/b', destination: b.bin}

      """)
  }

  @Test func aSyntaxErrorAfterItemsLeavesOnlyTheSyntaxError() {
    let (m, d) = decode(
      """
      version: 1
      files:
        - {id: a, url: 'ftp://example.org/a', destination: a.bin}
        - {id: b, url: 'https://example.org/b', destination: [

      """)
    #expect(m == nil)
    #expect(d.count == 1)
    #expect(d.first?.message.hasPrefix("YAML syntax error") == true)
  }

  @Test func emptyAndMergedTopsMatchTheTreeReading() {
    agree("version: 1\nfiles: []\n")
    agree("version: 1\nfiles:\n")
    agree("base: &b {version: 1}\n<<: *b\nfiles:\n  - {id: a, url: 'https://example.org/a', destination: a.bin}\n")
  }
}
