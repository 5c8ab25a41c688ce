import Foundation
import Testing

@testable import SyncFiles

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
}
