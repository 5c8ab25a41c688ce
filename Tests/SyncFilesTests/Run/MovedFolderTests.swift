import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// A manifest's folder (manifest, root and journal) moved, or mounted
/// elsewhere: what was installed stays installed. Each task's fingerprint
/// covers its destination as written, relative to the root, and journals
/// that recorded it over the absolute path (before 2026-11-27) still count.
@Suite final class MovedFolderTests: ApplyWorkspace {
  let server: FaultServer
  let top = makeTempDir()
  var dir: String { top + "/here" }

  init() throws {
    server = try FaultServer()
    try FileManager.default.createDirectory(atPath: top + "/here", withIntermediateDirectories: true)
  }
  deinit { try? FileManager.default.removeItem(atPath: top) }

  @Test func aMovedFolderRevalidatesAndFetchesNoBody() throws {
    let a = testBytes(50_000, seed: 7)
    let b = testBytes(20_000, seed: 8)
    server.put("a.bin", a)
    server.put("b.bin", b)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"va\""], "/b.bin": ["file": "b.bin", "etag": "\"vb\""]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: d/a.bin, sha256: \(sha256Hex(a))}",
      "{id: b, url: '\(server.base)/b.bin', destination: b.bin}",
    ])
    let first = try apply()
    #expect(first.run.status == 0, "\(first.run.stderr)")
    #expect(first.outcome("m/a") == "installed" && first.outcome("m/b") == "installed")
    // A journal of the earlier form, in place: the entries have not changed.
    try rewriteFingerprintsInTheEarlierForm()
    try expectRevalidatedOnly(try apply(), seen: 2)
    try expectRecordsInTheNewForm(folder: dir)

    // Then the folder moves: manifest, root and journal.
    let moved = top + "/moved"
    #expect(rename(dir, moved) == 0)
    let plan = try run(["plan", "m.yaml"], cwd: moved)
    let rows = plan.stdout.split(separator: "\n").filter { $0.hasPrefix("m/") }
    #expect(rows.count == 2 && rows.allSatisfy { $0.contains(" revalidate ") }, "\(plan.stdout)")
    try expectRevalidatedOnly(try ApplyResult(run(["apply", "--format", "json", "m.yaml"], cwd: moved)), seen: 3)
    try expectRecordsInTheNewForm(folder: moved)
  }

  /// Both tasks unchanged, no body, each request conditional on its ETag.
  private func expectRevalidatedOnly(_ r: ApplyResult, seen requests: Int) throws {
    #expect(r.run.status == 0, "\(r.run.stderr)")
    for (id, path, etag) in [("m/a", "/a.bin", "\"va\""), ("m/b", "/b.bin", "\"vb\"")] {
      #expect(r.outcome(id) == "unchanged", "\(id): \(r.tasks[id] ?? [:])")
      #expect(r.int(id, "bytes_transferred") == 0)
      #expect(server.requests(path).count == requests)
      #expect(server.requests(path).last?.headers["if-none-match"] == etag)
    }
  }

  /// Each record carries the fingerprint of the new form and still knows its install.
  private func expectRecordsInTheNewForm(folder: String) throws {
    let journal = try JournalReader.read(path: folder + "/state/journal")
    let set = ManifestLoader(environment: [:], workingDirectory: folder).load(paths: [folder + "/m.yaml"])
    for e in set.manifests[0].files {
      let s = try #require(journal.tasks[e.qualifiedID])
      #expect(s.fingerprint == Planner.fingerprint(e))
      #expect(s.installed?.etag != nil)
    }
  }

  /// What a journal written before 2026-11-27 holds: each fingerprint over
  /// the destination's absolute path.
  private func rewriteFingerprintsInTheEarlierForm() throws {
    let path = dir + "/state/journal"
    let set = ManifestLoader(environment: [:], workingDirectory: dir).load(paths: [dir + "/m.yaml"])
    let tasks = try JournalReader.read(path: path).tasks
    #expect(set.manifests[0].files.count == tasks.count)
    try FileManager.default.removeItem(atPath: path)
    let w = try JournalWriter(path: path)
    for e in set.manifests[0].files {
      var s = try #require(tasks[e.qualifiedID])
      #expect(s.fingerprint == Planner.fingerprint(e))
      s.fingerprint = Planner.legacyFingerprint(e)
      try w.record(s)
    }
    try w.sync()
  }
}
