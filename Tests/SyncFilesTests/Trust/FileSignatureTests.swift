import Foundation
import Testing

/// `signature` of the file itself (SPEC §10.2): minisign, signify, cosign
/// and OpenPGP signatures made by the real tools, checked before install;
/// each kind of tampering fails the task and keeps the old file.
@Suite final class FileSignatureTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()
  var data: String { server.dir + "/data/" }

  init() throws {
    server = try FaultServer()
    for k in ["release.asc", "signify.pub", "cosign.pub", "minisign.pub"] {
      try FileManager.default.copyItem(atPath: TrustKeys.dir + "/" + k, toPath: dir + "/" + k)
    }
  }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  enum Tool: String, CaseIterable, Sendable { case minisign, signify, cosign, openpgp }

  /// The signature's file name and the entry's `signature` mapping for `tool`.
  func signature(_ tool: Tool, for name: String) -> (file: String, yaml: String) {
    switch tool {
    case .minisign: return ("\(name).minisig", "{url: \(name).minisig, minisign_key: \(TrustKeys.minisignKey())}")
    case .signify: return ("\(name).sig", "{url: \(name).sig, signify_key: signify.pub}")
    case .cosign: return ("\(name).sig", "{url: \(name).sig, cosign_key: cosign.pub}")
    case .openpgp: return ("\(name).asc", "{url: \(name).asc, keyring: release.asc}")
    }
  }

  func sign(_ tool: Tool, _ path: String) {
    switch tool {
    case .minisign: TrustKeys.minisign(path)
    case .signify: TrustKeys.signify(path)
    case .cosign: TrustKeys.cosign(path)
    case .openpgp: TrustKeys.gpg("good@example.org", path, out: path + ".asc", armor: true)
    }
  }

  /// Serves `bytes` as `name`, signed by `tool`, under version `v`.
  func publish(_ tool: Tool, _ name: String, _ bytes: [UInt8], v: String) {
    server.put(name, bytes)
    sign(tool, data + name)
    let sig = signature(tool, for: name).file
    server.routes([
      "/\(name)": ["file": name, "etag": "\"\(v)\""], "/\(sig)": ["file": sig, "etag": "\"s\(v)\""],
    ])
  }

  @Test(arguments: Tool.allCases) func aSignedFileInstallsAndATamperedOneDoesNot(_ tool: Tool) throws {
    let v1 = testBytes(200_000, seed: 11)
    publish(tool, "tool.tar.gz", v1, v: "1")
    manifest([
      "{id: t, url: '\(server.base)/tool.tar.gz', destination: tool.tar.gz, signature: \(signature(tool, for: "tool.tar.gz").yaml)}"
    ])
    let r = try apply()
    #expect(r.outcome("m/t") == "installed", "\(r.run.stderr)")
    let checks = r.tasks["m/t"]?["checks"] as? [String] ?? []
    let signer: String
    switch tool {
    case .minisign:
      // The public key file's comment names the key id as minisign shows it.
      let comment = try String(contentsOfFile: dir + "/minisign.pub", encoding: .utf8).split(separator: "\n")[0]
      signer = "minisign key \(comment.split(separator: " ").last!)"
    case .signify: signer = "signify key"
    case .cosign: signer = "cosign key cosign.pub (ECDSA P-256)"
    case .openpgp: signer = "OpenPGP 0x\(TrustKeys.keyID("good@example.org"))"
    }
    #expect(checks.contains { $0.hasPrefix("signature: \(signer)") }, "\(checks)")

    // Version 2 arrives with version 1's signature.
    let sig = signature(tool, for: "tool.tar.gz").file
    let oldSignature = readBytes(data + sig)!
    let v2 = testBytes(200_000, seed: 12)
    publish(tool, "tool.tar.gz", v2, v: "2")
    write(oldSignature, to: data + sig)
    let bad = try apply()
    #expect(bad.outcome("m/t") == "failed")
    let error = bad.string("m/t", "error") ?? ""
    #expect(error.contains("signature \(sig): bad signature"), "\(error)")
    #expect(out("tool.tar.gz").map(sha256Hex) == sha256Hex(v1))
    #expect(!partialExists("tool.tar.gz"))
  }

  /// minisign and signify name the key that signed: a signature by another
  /// key says so; a trusted comment changed after signing fails.
  @Test func minisignChecksItsKeyIDAndTrustedComment() throws {
    let v = testBytes(10_000, seed: 13)
    server.put("a.bin", v)
    TrustKeys.minisign(data + "a.bin", key: "minisign2")
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"a\""], "/a.bin.minisig": ["file": "a.bin.minisig"]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, signature: \(signature(.minisign, for: "a.bin").yaml)}"
    ])
    let other = try apply()
    #expect(other.outcome("m/a") == "failed")
    #expect(
      other.string("m/a", "error")?.contains("the minisign signature is by key") == true, "\(other.tasks["m/a"] ?? [:])"
    )

    TrustKeys.minisign(data + "a.bin", comment: "release 1.0")
    let text = try String(contentsOfFile: data + "a.bin.minisig", encoding: .utf8)
    write(text.replacingOccurrences(of: "release 1.0", with: "release 9.9"), to: data + "a.bin.minisig")
    server.routes([
      "/a.bin": ["file": "a.bin", "etag": "\"a\""], "/a.bin.minisig": ["file": "a.bin.minisig", "etag": "\"m2\""],
    ])
    let comment = try apply(["--force"])
    #expect(comment.outcome("m/a") == "failed")
    #expect(comment.string("m/a", "error")?.contains("trusted comment") == true, "\(comment.tasks["m/a"] ?? [:])")

    TrustKeys.minisign(data + "a.bin", comment: "release 1.0")
    server.routes([
      "/a.bin": ["file": "a.bin", "etag": "\"a\""], "/a.bin.minisig": ["file": "a.bin.minisig", "etag": "\"m3\""],
    ])
    let good = try apply(["--force"])
    #expect(good.outcome("m/a") == "installed", "\(good.run.stderr)")
    #expect(out("a.bin").map(sha256Hex) == sha256Hex(v))
  }

  /// A signature that cannot be fetched is retried as a transfer is; one
  /// that stays missing fails the task, the old file kept.
  @Test func aSignatureIsFetchedWithRetries() throws {
    let v = testBytes(10_000, seed: 14)
    server.put("a.bin", v)
    TrustKeys.signify(data + "a.bin")
    server.routes([
      "/a.bin": ["file": "a.bin", "etag": "\"a\""],
      "/a.bin.sig": ["file": "a.bin.sig", "fail_first": 2, "fail_status": 503, "retry_after": "0"],
    ])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 4, backoff: 1s}, signature: \(signature(.signify, for: "a.bin").yaml)}"
    ])
    let r = try apply()
    #expect(r.outcome("m/a") == "installed", "\(r.run.stderr)")
    #expect(server.requests("/a.bin.sig").count == 3)

    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"a2\""], "/a.bin.sig": ["status": 404]])
    server.put("a.bin", testBytes(10_000, seed: 15))
    let gone = try apply(["--force"])
    #expect(gone.outcome("m/a") == "failed")
    #expect(
      gone.string("m/a", "error")?.contains("cannot fetch \(server.base)/a.bin.sig: HTTP 404") == true,
      "\(gone.tasks["m/a"] ?? [:])")
    #expect(out("a.bin").map(sha256Hex) == sha256Hex(v))
  }
}

/// A file whose signature is still on its way waits without holding up the
/// run: files beside it install meanwhile, and a run that stops keeps the
/// complete file for the next run instead of discarding it.
@Suite final class TrustWaitTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()
  var data: String { server.dir + "/data/" }

  init() throws {
    server = try FaultServer()
    try FileManager.default.copyItem(atPath: TrustKeys.dir + "/signify.pub", toPath: dir + "/signify.pub")
  }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func serve(signatureRetryAfter: String, slowBytes: Int) {
    server.put("a.bin", testBytes(5000, seed: 61))
    TrustKeys.signify(data + "a.bin")
    server.put("b.bin", testBytes(slowBytes, seed: 62))
    server.routes([
      "/a.bin": ["file": "a.bin", "etag": "\"a\""],
      "/a.bin.sig": ["file": "a.bin.sig", "fail_first": 1, "fail_status": 503, "retry_after": signatureRetryAfter],
      "/b.bin": ["file": "b.bin", "etag": "\"b\"", "trickle_bps": 4000],
    ])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, max_bytes: 1M, signature: {url: a.bin.sig, signify_key: signify.pub}}",
      "{id: b, url: '\(server.base)/b.bin', destination: b.bin, max_bytes: 1M}",
    ])
  }

  @Test func filesBesideOneWaitingForItsSignatureInstallMeanwhile() throws {
    serve(signatureRetryAfter: "4", slowBytes: 6000)
    let start = Date()
    let p = try startInBackground(["apply", "m.yaml"], cwd: dir)
    // b.bin trickles for about 1.5 s; a.bin's signature comes after its 4 s Retry-After.
    var bAt: Double? = nil
    var aThen = true
    while p.isRunning && Date().timeIntervalSince(start) < 20 {
      if FileManager.default.fileExists(atPath: dir + "/out/b.bin") {
        bAt = Date().timeIntervalSince(start)
        aThen = FileManager.default.fileExists(atPath: dir + "/out/a.bin")
        break
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    #expect((bAt ?? 99) < 3.5, "b.bin waited for a.bin's signature: installed after \(bAt ?? -1) s")
    #expect(!aThen, "a.bin was installed before its signature could arrive")
    #expect(Date().timeIntervalSince(start) >= 3.5 && out("a.bin") != nil)
  }

  @Test func aRunThatStopsWhileASignatureIsAwaitedKeepsTheFile() throws {
    serve(signatureRetryAfter: "30", slowBytes: 100)
    let start = Date()
    let r = try apply(["--deadline", "2s"])
    #expect(Date().timeIntervalSince(start) < 10, "the backoff of the signature's fetch held the stop")
    #expect(r.outcome("m/a") == "interrupted", "\(r.tasks["m/a"] ?? [:])")
    #expect(out("a.bin") == nil && partialExists("a.bin"), "the complete partial is kept for the next run")
    #expect(r.outcome("m/b") == "installed")
  }
}
