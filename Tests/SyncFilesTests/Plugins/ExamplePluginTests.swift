import Foundation
import Testing

/// The plugins in Examples/plugins, run as users run them: found through
/// SYNCFILES_PLUGIN_PATH, against a real rsync daemon and real GnuPG keys.
@Suite final class ExamplePluginTests: ApplyWorkspace {
  let dir = makeTempDir()
  var env: [String: String] { ["SYNCFILES_PLUGIN_PATH": packageRoot + "/Examples/plugins"] }

  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func rsyncSourceFetchesRevalidatesAndResumesAfterADeadline() throws {
    let rsync = try installed(["/usr/bin/rsync", "/usr/local/bin/rsync"], package: "rsync")
    _ = try installed(["/usr/bin/jq", "/usr/local/bin/jq"], package: "jq")
    let port = try freePort()
    write(
      """
      use chroot = no
      pid file = \(dir)/rsyncd.pid
      log file = \(dir)/rsyncd.log
      [data]
        path = \(dir)/data
        read only = yes

      """, to: dir + "/rsyncd.conf")
    let small = testBytes(300_000, seed: 50)
    let large = testBytes(4_000_000, seed: 51)
    write(small, to: dir + "/data/small.bin")
    write(large, to: dir + "/data/large.bin")
    let daemon = try Daemon(
      rsync, ["--daemon", "--no-detach", "--config=\(dir)/rsyncd.conf", "--port=\(port)", "--address=127.0.0.1"],
      port: port, name: "rsync --daemon", log: dir + "/rsyncd.log")
    defer { withExtendedLifetime(daemon) {} }
    let base = "rsync://127.0.0.1:\(port)/data"
    manifest([
      "{id: small, url: '\(base)/small.bin', destination: small.bin, sha256: \(sha256Hex(small))}",
      "{id: gone, url: '\(base)/gone.bin', destination: gone.bin, retry: {attempts: 1}}",
    ])
    let first = try apply(env: env)
    #expect(first.run.status == 1, "\(first.run.stderr)")
    #expect(first.outcome("m/small") == "installed")
    #expect(out("small.bin") == small)
    #expect((first.tasks["m/gone"]?["error"] as? String)?.contains("No such file or directory") == true)

    // The same version again: not_modified, nothing written.
    let again = try apply(["--force", "--only", "m/small"], env: env)
    #expect(again.run.status == 0, "\(again.run.stderr)")
    #expect(again.outcome("m/small") == "unchanged")

    // A resume: slowed by --bwlimit, cut by the deadline, finished by the next run.
    manifest(["{id: large, url: '\(base)/large.bin', destination: large.bin, sha256: \(sha256Hex(large))}"])
    var slow = env
    slow["SYNCFILES_RSYNC_OPTIONS"] = "--bwlimit=1000"
    let cut = try apply(["--deadline", "1s"], env: slow)
    #expect(cut.run.status == 75, "\(cut.run.stderr)")
    #expect(cut.outcome("m/large") == "interrupted")
    #expect(partialExists("large.bin"))
    #expect(out("large.bin") == nil)
    let rest = try apply(env: env)
    #expect(rest.run.status == 0, "\(rest.run.stderr)")
    #expect(rest.outcome("m/large") == "installed")
    #expect((rest.int("m/large", "resumed_from") ?? 0) > 0)
    #expect(out("large.bin") == large)
  }

  @Test func gpgVerifierAcceptsAGoodSignatureAndARejectedFileKeepsTheOldOne() throws {
    let gpg = try installed(["/usr/bin/gpg", "/usr/local/bin/gpg"], package: "gpg")
    _ = try installed(["/usr/bin/gpgv", "/usr/local/bin/gpgv"], package: "gpgv")
    let home = dir + "/gnupg"
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    chmod(home, 0o700)
    func gpgRun(_ args: [String], tool: String = gpg) throws {
      let p = Process()
      p.executableURL = URL(fileURLWithPath: tool)
      p.arguments = ["--homedir", home] + (tool == gpg ? ["--batch", "--quiet", "--passphrase", ""] : []) + args
      p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
      p.standardError = FileHandle(forWritingAtPath: "/dev/null")
      try p.run()
      p.waitUntilExit()
      #expect(p.terminationStatus == 0, "gpg \(args)")
    }
    // The agent gpg starts for this home ends with the test.
    defer { try? gpgRun(["--kill", "gpg-agent"], tool: (gpg as NSString).deletingLastPathComponent + "/gpgconf") }
    try gpgRun(["--quick-gen-key", "release@example.org", "ed25519", "sign", "never"])
    try gpgRun(["--output", dir + "/keyring.gpg", "--export", "release@example.org"])
    let v1 = testBytes(50_000, seed: 52)
    write(v1, to: dir + "/a.bin")
    try gpgRun(["--output", dir + "/a.bin.sig", "--detach-sign", dir + "/a.bin"])

    let server = try FaultServer()
    server.put("a.bin", v1)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"1\""]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, verify: [{plugin: gpg, with: {signature: '\(dir)/a.bin.sig', keyring: '\(dir)/keyring.gpg'}}]}"
    ])
    let good = try apply(env: env)
    #expect(good.run.status == 0, "\(good.run.stderr)")
    #expect(out("a.bin") == v1)

    // A new version the signature does not cover.
    server.put("a.bin", testBytes(50_000, seed: 53))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"2\""]])
    let bad = try apply(["--force"], env: env)
    #expect(bad.run.status == 1)
    #expect(bad.outcome("m/a") == "failed")
    let error = bad.tasks["m/a"]?["error"] as? String ?? ""
    #expect(error.contains("verify plugin gpg rejected the file (exit 1)"), "\(error)")
    #expect(error.contains("BAD signature"), "\(error)")
    #expect(out("a.bin") == v1)
    #expect(!partialExists("a.bin"))
  }
}
