import Foundation
import Testing

/// Issue 13's fault matrix, on real file systems: a full disk (a 20 MB tmpfs
/// holding destinations and journal) and a folder the user cannot write.
@Suite(.serialized) final class FaultMatrixTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit {
    _ = try? run(["-l", dir + "/out"], tool: "umount")
    _ = try? run(["-l", dir + "/state"], tool: "umount")
    try? FileManager.default.removeItem(atPath: dir)
  }

  func mountTmpfs(_ path: String, megabytes: Int) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let r = try run(["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path], tool: "mount")
    #expect(r.status == 0, "mount needs root: \(r.stderr)")
  }

  func partials(in folder: String) -> [String] {
    (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).filter {
      $0.hasSuffix(".syncfiles-partial")
    }
  }

  @Test func aFullDiskKeepsTheOldFilesLeavesNoPartialAndConverges() throws {
    try mountTmpfs(dir + "/out", megabytes: 20)
    let (a1, b1) = (testBytes(4_000_000, seed: 1), testBytes(4_000_000, seed: 2))
    server.put("a1", a1)
    server.put("b1", b1)
    server.routes(["/a.bin": ["file": "a1", "etag": "\"a1\""], "/b.bin": ["file": "b1", "etag": "\"b1\""]])
    // The journal lives on the same small file system.
    manifest(
      [
        "{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}",
        "{id: b, url: '\(server.base)/b.bin', destination: b.bin, retry: {attempts: 1}}",
      ], extra: "")
    write(
      try String(contentsOfFile: dir + "/m.yaml", encoding: .utf8).replacingOccurrences(
        of: "journal: state/journal", with: "journal: out/.state/journal"), to: dir + "/m.yaml")
    #expect(try apply().run.status == 0)

    // New versions, and a disk with about 1 MB left.
    let (a2, b2) = (testBytes(6_000_000, seed: 3), testBytes(6_000_000, seed: 4))
    server.put("a2", a2)
    server.put("b2", b2)
    server.routes(["/a.bin": ["file": "a2", "etag": "\"a2\""], "/b.bin": ["file": "b2", "etag": "\"b2\""]])
    var vfs = statvfs()
    statvfs(dir + "/out", &vfs)
    let free = Int(vfs.f_bavail) * Int(vfs.f_frsize)
    write([UInt8](repeating: 7, count: free - 1_000_000), to: dir + "/out/filler")

    let full = try apply()
    #expect(full.run.status == 1, "\(full.run.stdout)\(full.run.stderr)")
    for id in ["m/a", "m/b"] {
      #expect(full.outcome(id) == "failed")
      let error = full.string(id, "error") ?? ""
      #expect(error.contains("No space left on device") && error.contains("/out/"), "\(id): \(error)")
    }
    #expect(out("a.bin") == a1 && out("b.bin") == b1, "the old files, byte for byte")
    #expect(partials(in: dir + "/out").isEmpty, "no partial left to fill the disk")
    let status = try run(["status", "--format", "json", "m.yaml"], cwd: dir)
    #expect(status.status == 0, "the journal on the full disk is still read: \(status.stderr)")

    try FileManager.default.removeItem(atPath: dir + "/out/filler")
    let after = try apply(["--force"])
    #expect(after.run.status == 0, "\(after.run.stdout)")
    #expect(out("a.bin") == a2 && out("b.bin") == b2, "converged once space was freed")
  }

  /// The journal's own file system fills while the destinations' does not,
  /// and a run's records outgrow what the journal keeps in reserve (300
  /// tasks): the files still install, the run exits 1 and says the journal
  /// could not be written, the journal stays readable, and the next run
  /// converges.
  @Test func aFullDiskUnderTheJournalIsReportedAndTheJournalStaysReadable() throws {
    try mountTmpfs(dir + "/state", megabytes: 1)
    let ids = (0..<300).map { "f\($0)" }
    func serve(_ version: Int) {
      var routes: [String: [String: String]] = [:]
      for id in ids {
        server.put("\(id)v\(version)", Array("\(id) version \(version)\n".utf8))
        routes["/\(id)"] = ["file": "\(id)v\(version)", "etag": "\"\(id)-\(version)\""]
      }
      server.routes(routes)
    }
    serve(1)
    manifest(ids.map { "{id: \($0), url: '\(server.base)/\($0)', destination: \($0).txt}" })
    #expect(try apply().run.status == 0)

    // Leave the journal its reserve alone: fewer bytes than 300 new records need.
    serve(2)
    var vfs = statvfs()
    statvfs(dir + "/state", &vfs)
    let free = Int(vfs.f_bavail) * Int(vfs.f_frsize)
    write([UInt8](repeating: 7, count: free), to: dir + "/state/filler")
    let full = try apply()
    #expect(full.run.status == 1, "\(full.run.stdout)\(full.run.stderr)")
    let why = full.object["journal_error"] as? String ?? ""
    #expect(why.contains("No space left on device") && why.contains(dir + "/state/journal"), "\(why)")
    #expect(full.count("installed") == 300, "the files themselves had space")
    #expect(ids.allSatisfy { out("\($0).txt") == Array("\($0) version 2\n".utf8) })
    let text = try run(["apply", "m.yaml"], cwd: dir)
    #expect(text.status == 1 && text.stdout.contains("journal: "), "\(text.stdout)")
    let status = try run(["status", "--format", "json", "m.yaml"], cwd: dir)
    #expect(status.status == 0, "the journal cut short by the full disk is still read: \(status.stderr)")

    try FileManager.default.removeItem(atPath: dir + "/state/filler")
    let after = try apply()
    #expect(after.run.status == 0 && after.object["journal_error"] is NSNull, "\(after.run.stdout)")
    #expect(after.count("installed") == 0, "nothing new: every file already held version 2")
    #expect(ids.allSatisfy { out("\($0).txt") == Array("\($0) version 2\n".utf8) })
  }

  /// A disk that fills under the journal does not cut a run's records short:
  /// the journal keeps blocks in reserve past its end, so the run's failure
  /// is recorded, and the next `status --check` and the metrics see it. (A
  /// journal cut short by ENOSPC lost the run's failure count.)
  @Test func aFullDiskUnderTheJournalStillRecordsTheRunsFailures() throws {
    try mountTmpfs(dir + "/state", megabytes: 1)
    let ids = (0..<20).map { "f\($0)" }
    var routes: [String: [String: Any]] = ["/bad": ["status": 404]]
    for id in ids {
      server.put(id, Array("\(id)\n".utf8))
      routes["/\(id)"] = ["file": id, "etag": "\"\(id)\""]
    }
    server.routes(routes)
    manifest(
      ids.map { "{id: \($0), url: '\(server.base)/\($0)', destination: \($0).txt}" }
        + ["{id: bad, url: '\(server.base)/bad', destination: bad.txt, retry: {attempts: 1, backoff: 1s}}"])
    #expect(try apply().run.status == 1)
    var vfs = statvfs()
    statvfs(dir + "/state", &vfs)
    write([UInt8](repeating: 7, count: Int(vfs.f_bavail) * Int(vfs.f_frsize)), to: dir + "/state/filler")
    Thread.sleep(forTimeInterval: 1.1)  // the backoff of the first failure
    let metrics = dir + "/metrics.prom"
    let full = try apply(["--metrics", metrics])
    #expect(full.run.status == 1 && full.outcome("m/bad") == "failed", "\(full.run.stdout)")
    #expect(full.object["journal_error"] is NSNull, "the records went into the reserve: \(full.run.stdout)")
    let check = try run(["status", "--check", "m.yaml"], cwd: dir)
    #expect(check.status == 1 && check.stdout.contains("m/bad: failing"), "\(check.stdout)\(check.stderr)")
    let state = try run(["status", "--format", "json", "m.yaml"], cwd: dir)
    #expect(state.stdout.contains("\"failures\":2"), "\(state.stdout)")
    let prom = String(decoding: readBytes(metrics) ?? [], as: UTF8.self)
    #expect(prom.contains("syncfiles_task_consecutive_failures{task=\"m/bad\"} 2"), "\(prom)")
  }

  /// As an unprivileged user: a folder it cannot write fails that task with
  /// the path and errno text, and the others install.
  @Test func aReadOnlyFolderFailsItsTaskAndTheRestInstall() throws {
    let a = testBytes(10_000, seed: 5)
    server.put("a", a)
    server.routes(["/a.bin": ["file": "a", "etag": "\"a\""]])
    manifest([
      "{id: locked, url: '\(server.base)/a.bin', destination: locked/a.bin}",
      "{id: open, url: '\(server.base)/a.bin', destination: open/a.bin}",
    ])
    for folder in ["out/locked", "out/open", "state"] {
      try FileManager.default.createDirectory(atPath: dir + "/" + folder, withIntermediateDirectories: true)
    }
    _ = try run(["-R", "nobody", dir], tool: "chown")
    chmod(dir, 0o755)
    chmod(dir + "/out/locked", 0o555)
    // setpriv drops to nobody with no capabilities: root would write anyway.
    let r = try run(
      [
        "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all", try syncfilesBinary(), "apply",
        "--format", "json", "m.yaml",
      ],
      cwd: dir, tool: "setpriv")
    let result = try ApplyResult(r)
    #expect(r.status == 1, "\(r.stderr)")
    #expect(result.outcome("m/open") == "installed" && out("open/a.bin") == a)
    let error = result.string("m/locked", "error") ?? ""
    #expect(error.contains(dir + "/out/locked") && error.contains("Permission denied"), "\(error)")
  }
}
