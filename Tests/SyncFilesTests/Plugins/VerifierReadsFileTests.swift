import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// `anyVerifierReadsFile` answers as the list `verifiers(for:)` makes would:
/// a body whose verifier reads the file is never held in memory.
@Suite struct VerifierReadsFileTests {
  @Test func theAnswerIsTheListsAnswer() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let plugin = dir + "/syncfiles-verify-reads"
    try "#!/bin/sh\nexit 0\n".write(toFile: plugin, atomically: true, encoding: .utf8)
    chmod(plugin, 0o755)
    let registry = PluginRegistry.standard(locator: PluginLocator(searchPath: [dir]))
    let cases: [(lines: [String], reads: Bool)] = [
      ([], false),
      (["sha256: " + String(repeating: "a", count: 64), "max_bytes: 1MB"], false),
      (["expected_bytes: 10", "verify: [{plugin: reads}]"], true),
    ]
    for c in cases {
      let (m, diagnostics) = decode(entry(lines: c.lines), plugins: [dir])
      let e = try #require(m?.files.first, "\(diagnostics)")
      let listed = registry.verifiers(for: e).contains { $0.verifier.readsFile }
      #expect(listed == c.reads, "\(c.lines)")
      #expect(registry.anyVerifierReadsFile(for: e) == c.reads, "\(c.lines)")
    }
  }

  /// A check registered beside the built-ins that reads the file counts for
  /// the entries it applies to, and only for them.
  @Test func aRegisteredCheckThatReadsTheFileCountsWhereItApplies() throws {
    struct ReadsWhenSized: VerifierPlugin {
      let info = PluginInfo(kind: .verifier, name: "reads-sized", path: nil, protocolVersion: 1, summary: "test")
      func applies(to entry: FileEntry) -> Bool { entry.expectedBytes != nil }
      func verify(_ input: VerifyInput) -> VerifyVerdict { .accept(warnings: []) }
    }
    let registry = PluginRegistry.standard(locator: PluginLocator(searchPath: []))
    registry.register(check: ReadsWhenSized())
    for (lines, reads) in [(["expected_bytes: 10"], true), (["max_bytes: 1MB"], false)] {
      let (m, diagnostics) = decode(entry(lines: lines), plugins: [])
      let e = try #require(m?.files.first, "\(diagnostics)")
      #expect(registry.verifiers(for: e).contains { $0.verifier.readsFile } == reads, "\(lines)")
      #expect(registry.anyVerifierReadsFile(for: e) == reads, "\(lines)")
    }
  }
}
