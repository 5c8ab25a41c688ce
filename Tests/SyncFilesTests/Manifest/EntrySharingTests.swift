import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Entries share what they inherit (issue 15, W5 memory): the options box of
/// entries whose options are equal, and the text of one server's host.
/// Sharing must never be seen: changing one entry leaves the others as they were.
@Suite struct EntrySharingTests {
  static let yaml = """
    version: 1
    name: shared
    root: /srv
    defaults:
      mode: '0640'
      retry: { attempts: 3 }
    files:
      - { id: a, url: 'https://mirror.example.org/a', destination: a, expected_bytes: 1KiB }
      - { id: b, url: 'https://mirror.example.org/b', destination: b, mode: '0600' }
      - { id: c, url: 'https://MIRROR.example.org/c', destination: c, not_before: '2999-01-01T00:00:00Z' }
      - { id: d, url: 'https://other.example.org/d', destination: d }

    """

  func files() -> [FileEntry] {
    let (m, d) = decode(Self.yaml)
    #expect(errors(d).isEmpty, "\(errors(d))")
    return m?.files ?? []
  }

  @Test func entriesWithEqualOptionsShareOneBox() throws {
    let f = files()
    try #require(f.count == 4)
    #expect(f[0].values.options.sharesBox(with: f[2].values.options))
    #expect(f[0].values.options.sharesBox(with: f[3].values.options))
    // b sets its own mode: its options are its own.
    #expect(!f[1].values.options.sharesBox(with: f[0].values.options))
    #expect(f.map(\.mode) == [0o640, 0o600, 0o640, 0o640])
    #expect(f.map(\.retry.attempts) == [3, 3, 3, 3])
    // Per-entry values stay per entry.
    #expect(f.map(\.expectedBytes) == [1024, nil, nil, nil])
    #expect(f[2].notBefore != nil && f[0].notBefore == nil)
  }

  /// An entry that sets no option (nor do its defaults) keeps the default
  /// options' box; one option key of its own gives it options of its own.
  @Test func anEntryWithNoOptionKeepsTheDefaultOptions() throws {
    let (m, d) = decode(
      """
      version: 1
      name: m
      root: /srv
      files:
        - { id: a, url: 'https://h.example/a', destination: a, expected_bytes: 1KiB, sha256: \(String(repeating: "0", count: 64)) }
        - { id: b, url: 'https://h.example/b', destination: b, mode: '0600' }
        - { id: c, url: 'https://h.example/c', destination: c, retry: { attempts: 2 } }
        - { id: d, url: 'https://h.example/d', destination: d, max_bytes: 1MiB }
        - { id: e, url: 'https://h.example/e', destination: e, schedule: every 1h }
        - { id: f, url: 'https://h.example/f', destination: f, segments: 2 }
        - { id: g, url: 'https://h.example/g', destination: g, not_before: '2999-01-01T00:00:00Z' }
      """)
    #expect(errors(d).isEmpty, "\(errors(d))")
    let f = try #require(m?.files)
    try #require(f.count == 7)
    #expect(f[0].values.options.sharesBox(with: FileEntry.Values.defaultOptions))
    #expect(f[6].values.options.sharesBox(with: FileEntry.Values.defaultOptions))
    for e in f[1...5] { #expect(e.values.options.value != EntryOptions(), "\(e.qualifiedID)") }
    #expect(f[1].mode == 0o600 && f[2].retry.attempts == 2 && f[3].maxBytes == 1 << 20 && f[5].segments == 2)
  }

  /// Every file key is found by its name, and no other name is one.
  @Test func fileKeysAreFoundByName() {
    for k in FileKey.allCases { #expect(FileKey(named: k.name) == k, "\(k.name)") }
    #expect(Keys.file.count == FileKey.allCases.count)
    for other in ["", "ID", "uri", "mode ", "destinatio", "expected-bytes", "not_after", "tlsx", "retries"] {
      #expect(FileKey(named: other) == nil, "\(other)")
    }
  }

  @Test func changingOneEntryLeavesTheEntriesItSharedWith() throws {
    let f = files()
    try #require(f.count == 4)
    var a = f[0]
    a.mode = 0o700
    a.network.netrc = .standard
    #expect(a.mode == 0o700 && a.network.netrc == .standard)
    #expect(f[0].mode == 0o640 && f[2].mode == 0o640 && f[0].network.netrc == nil)
    #expect(!a.values.options.sharesBox(with: f[2].values.options))
    #expect(a != f[0])
    // Equal options in separate boxes are still equal.
    a.mode = 0o640
    a.network.netrc = nil
    #expect(a == f[0])
  }

  @Test func hostsAreReadLowerCasedWhetherSharedOrNot() throws {
    let f = files()
    try #require(f.count == 4)
    #expect(
      f.map(\.url.host) == ["mirror.example.org", "mirror.example.org", "mirror.example.org", "other.example.org"])
    #expect(f.map(\.url.port) == [443, 443, 443, 443])
  }

  @Test func marksBeyondFourBillionAreClampedNotWrapped() {
    let m = SourceMark(line: Int(UInt32.max) + 5, column: -1)
    #expect(m.line == Int(UInt32.max))
    #expect(m.column == 0)
    var n = SourceMark(line: 3, column: 7)
    n.line += 1
    #expect(n == SourceMark(line: 4, column: 7) && n.description == "4:7")
  }
}
