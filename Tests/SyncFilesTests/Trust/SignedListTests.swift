import Foundation
import Testing

/// Signed checksum lists (SPEC §10.2), end to end: real gpg signatures
/// checked by gpgv, lists fetched once per run and revalidated, and every
/// way a list can fail to vouch for a file, each keeping the old file.
@Suite final class SignedListTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()
  var data: String { server.dir + "/data/" }

  init() throws {
    server = try FaultServer()
    try FileManager.default.createDirectory(atPath: dir + "/keys", withIntermediateDirectories: true)
    for k in ["release.gpg", "release.asc"] {
      try FileManager.default.copyItem(atPath: TrustKeys.dir + "/" + k, toPath: dir + "/keys/" + k)
    }
  }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// Serves `files`, SHA256SUMS over them (or `list` instead), and its signature by `signer`.
  func publish(
    _ files: [String: [UInt8]], list: String? = nil, signer: String = "good@example.org", version: String = "1",
    signedAt: String? = nil
  ) {
    var routes: [String: [String: Any]] = [:]
    for (name, bytes) in files {
      server.put(name, bytes)
      routes["/\(name)"] = ["file": name, "etag": "\"\(name)-\(sha256Hex(bytes).prefix(8))\""]
    }
    let text = list ?? files.keys.sorted().map { sumLine(files[$0]!, $0, binary: $0.hasSuffix("0.bin")) }.joined()
    server.put("SHA256SUMS", Array(text.utf8))
    TrustKeys.gpg(signer, data + "SHA256SUMS", out: data + "SHA256SUMS.gpg", at: signedAt)
    routes["/SHA256SUMS"] = ["file": "SHA256SUMS", "etag": "\"sums-\(version)\""]
    routes["/SHA256SUMS.gpg"] = ["file": "SHA256SUMS.gpg", "etag": "\"sig-\(version)\""]
    server.routes(routes)
  }

  /// coreutils' SHA-512 of a file, in hex.
  func sha512sum(_ path: String) throws -> String {
    try run(["-c", "sha512sum '\(path)' | cut -d' ' -f1"], tool: "/bin/bash").stdout
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  let signedDefaults = "defaults: {checksums: {url: SHA256SUMS, signature: SHA256SUMS.gpg, keyring: keys/release.gpg}}"

  /// The Ubuntu layout: 50 entries under one `checksums` in defaults, a
  /// large file among small ones. One request for the list and one for
  /// its signature in the run; the next run asks again, conditionally.
  @Test func fiftyEntriesShareOneSignedList() throws {
    var files: [String: [UInt8]] = [:]
    for i in 0..<49 { files["f\(i).bin"] = testBytes(3000 + i, seed: UInt64(100 + i)) }
    files["big.iso"] = testBytes(12_000_000, seed: 99)
    publish(files)
    manifest(
      files.keys.sorted().map {
        "{id: \($0.replacingOccurrences(of: ".", with: "-")), url: '\(server.base)/\($0)', destination: \($0)}"
      },
      extra: signedDefaults)
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(r.count("installed") == 50)
    for name in files.keys { #expect(out(name).map(sha256Hex) == sha256Hex(files[name]!), "\(name)") }
    let id = TrustKeys.keyID("good@example.org")
    let checks = r.tasks["m/big-iso"]?["checks"] as? [String] ?? []
    #expect(checks.contains { $0.contains("SHA-256 of 'big.iso'") && $0.contains("signed by 0x\(id)") }, "\(checks)")
    #expect(r.tasks.values.allSatisfy { ($0["checks"] as? [String] ?? []).contains { $0.contains("0x\(id)") } })
    #expect(server.requests("/SHA256SUMS").count == 1)
    #expect(server.requests("/SHA256SUMS.gpg").count == 1)

    let again = try apply()
    #expect(again.run.status == 0 && again.count("unchanged") == 50, "\(again.run.stderr)")
    let lists = server.requests("/SHA256SUMS")
    #expect(lists.count == 2, "the next run revalidates the list once")
    #expect(lists.last?.headers["if-none-match"] == "\"sums-1\"", "\(lists.last?.headers ?? [:])")
  }

  enum Failure: String, CaseIterable, Sendable {
    case tamperedList, strangerKey, expiredKey, revokedKey, noLine, weakDigests, tamperedFile
  }

  /// Version 1 installs under a good list; version 2 comes with a list that
  /// fails in one way. Nothing is installed, the old file stays, the task
  /// fails once with the reason (no retry), and no partial is left.
  @Test(arguments: Failure.allCases) func aListThatDoesNotVouchKeepsTheOldFile(_ failure: Failure) throws {
    let v1 = testBytes(5000, seed: 1)
    let v2 = testBytes(6000, seed: 2)
    publish(["f.bin": v1])
    manifest(["{id: f, url: '\(server.base)/f.bin', destination: f.bin}"], extra: signedDefaults)
    let first = try apply()
    #expect(first.outcome("m/f") == "installed", "\(first.run.stderr)")

    let good = sumLine(v2, "f.bin")
    var expected: String
    switch failure {
    case .tamperedList:
      publish(["f.bin": v2], version: "2")
      write(sumLine(v2, "f.bin") + sumLine(v1, "other.bin"), to: data + "SHA256SUMS")  // after signing
      expected = "signature of SHA256SUMS: bad signature (key 0x\(TrustKeys.keyID("good@example.org")))"
    case .strangerKey:
      publish(["f.bin": v2], list: good, signer: "stranger@example.org", version: "2")
      expected = "key 0x\(TrustKeys.keyID("stranger@example.org")) not in keyring \(dir)/keys/release.gpg"
    case .expiredKey:
      publish(["f.bin": v2], list: good, signer: "expired@example.org", version: "2", signedAt: "20200101T120000")
      expected = "key 0x\(TrustKeys.keyID("expired@example.org")) has expired"
    case .revokedKey:
      publish(["f.bin": v2], list: good, signer: "revoked@example.org", version: "2")
      expected = "key 0x\(TrustKeys.keyID("revoked@example.org")) is revoked"
    case .noLine:
      publish(["f.bin": v2], list: sumLine(v2, "g.bin"), version: "2")
      expected = "no line for 'f.bin' in SHA256SUMS"
    case .weakDigests:
      publish(["f.bin": v2], list: "0123456789abcdef0123456789abcdef  f.bin\n", version: "2")
      expected = "SHA256SUMS names 'f.bin' by MD5, which is not accepted"
    case .tamperedFile:
      publish(["f.bin": v2], list: sumLine(testBytes(6000, seed: 3), "f.bin"), version: "2")
      expected = "SHA-256 mismatch: SHA256SUMS names"
    }
    let r = try apply()
    #expect(r.run.status == 1, "\(r.run.stderr)")
    #expect(r.outcome("m/f") == "failed")
    let error = r.string("m/f", "error") ?? ""
    #expect(error.contains(expected), "\(failure): \(error)")
    #expect(error.contains("the old file is kept"), "\(error)")
    #expect(r.int("m/f", "attempts") == 1, "a failed check is not retried within the run")
    #expect(out("f.bin").map(sha256Hex) == sha256Hex(v1))
    #expect(!partialExists("f.bin"))
  }

  /// apt's InRelease: a clearsigned list needs only the keyring, here
  /// armored; the content gpgv says was signed is what is read, so a line
  /// added outside the signed part is not trusted.
  @Test func aClearsignedListWithAnArmoredKeyring() throws {
    let v = testBytes(4000, seed: 5)
    let forged = testBytes(4000, seed: 6)
    server.put("a.bin", v)
    server.put("b.bin", forged)
    write(sumLine(v, "a.bin"), to: data + "plain")
    TrustKeys.gpg("good@example.org", data + "plain", out: data + "InRelease", clearsign: true)
    // A line for b.bin after the signature: outside what was signed.
    let signed = try String(contentsOfFile: data + "InRelease", encoding: .utf8)
    write(signed + sumLine(forged, "b.bin"), to: data + "InRelease")
    server.routes([
      "/a.bin": ["file": "a.bin", "etag": "\"a\""], "/b.bin": ["file": "b.bin", "etag": "\"b\""],
      "/InRelease": ["file": "InRelease", "etag": "\"r\""],
    ])
    manifest(
      [
        "{id: a, url: '\(server.base)/a.bin', destination: a.bin}",
        "{id: b, url: '\(server.base)/b.bin', destination: b.bin}",
      ], extra: "defaults: {checksums: {url: InRelease, keyring: keys/release.asc}}")
    let r = try apply()
    #expect(r.outcome("m/a") == "installed", "\(r.run.stderr)")
    let checks = r.tasks["m/a"]?["checks"] as? [String] ?? []
    #expect(checks.contains { $0.contains("clearsigned by 0x\(TrustKeys.keyID("good@example.org"))") }, "\(checks)")
    #expect(r.outcome("m/b") == "failed")
    #expect(r.string("m/b", "error")?.contains("no line for 'b.bin' in InRelease") == true, "\(r.tasks["m/b"] ?? [:])")
    #expect(out("b.bin") == nil)
  }

  /// A keyring with no signature asks for a clearsigned list: a plain one fails the task.
  @Test func aKeyringWithoutSignatureNeedsAClearsignedList() throws {
    let v = testBytes(4000, seed: 7)
    publish(["a.bin": v])
    manifest(
      ["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"],
      extra: "defaults: {checksums: {url: SHA256SUMS, keyring: keys/release.gpg}}")
    let r = try apply()
    #expect(r.outcome("m/a") == "failed")
    #expect(r.string("m/a", "error")?.contains("SHA256SUMS is not clearsigned") == true, "\(r.tasks["m/a"] ?? [:])")
    #expect(out("a.bin") == nil)
  }

  /// BSD lines with SHA-512 (Fedora's CHECKSUM), an unsigned list over
  /// https-less loopback, an explicit `name`, and an inline sha256 that must
  /// match as well.
  @Test func bsdSHA512LinesAndAnInlineSHA256BothMatch() throws {
    let v = testBytes(70_000, seed: 8)
    server.put("Fedora-41.iso", v)
    let sha512 = try sha512sum(data + "Fedora-41.iso")
    write("# Fedora-41\nSHA512 (Fedora-41.iso) = \(sha512)\n", to: data + "CHECKSUM")
    server.routes([
      "/dl/image": ["file": "Fedora-41.iso", "etag": "\"i\""], "/dl/CHECKSUM": ["file": "CHECKSUM", "etag": "\"c\""],
    ])
    manifest([
      "{id: i, url: '\(server.base)/dl/image', destination: f.iso, sha256: \(sha256Hex(v)), checksums: {url: CHECKSUM, name: ./Fedora-41.iso}}"
    ])
    let r = try apply()
    #expect(r.outcome("m/i") == "installed", "\(r.run.stderr)")
    let checks = r.tasks["m/i"]?["checks"] as? [String] ?? []
    #expect(checks.contains { $0.contains("SHA-512 of './Fedora-41.iso'") && $0.contains("unsigned") }, "\(checks)")
    // The inline sha256 still binds: a list that agrees with other bytes is not enough.
    let other = testBytes(70_000, seed: 9)
    server.put("Fedora-41.iso", other)
    let otherSHA512 = try sha512sum(data + "Fedora-41.iso")
    write("SHA512 (Fedora-41.iso) = \(otherSHA512)\n", to: data + "CHECKSUM")
    server.routes([
      "/dl/image": ["file": "Fedora-41.iso", "etag": "\"i2\""],
      "/dl/CHECKSUM": ["file": "CHECKSUM", "etag": "\"c2\""],
    ])
    let again = try apply()
    #expect(again.outcome("m/i") == "failed")
    #expect(again.string("m/i", "error")?.contains("sha256 mismatch") == true, "\(again.tasks["m/i"] ?? [:])")
    #expect(out("f.iso").map(sha256Hex) == sha256Hex(v))
  }
}
