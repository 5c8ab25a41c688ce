import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The pure parts of trust (SPEC §10.2): the list formats, gpgv's status
/// lines, the armor, urls beside the file's url, and the manifest's keys.
@Suite struct ChecksumListTests {
  let a = String(repeating: "a", count: 64)
  let b = String(repeating: "b", count: 64)
  let long = String(repeating: "c", count: 128)

  func look(_ text: String, _ name: String) -> Result<[ChecksumList.Digest], VerifyError> {
    ChecksumList.digests(in: Array(text.utf8), for: name, list: "SUMS")
  }

  @Test func coreutilsTextAndBinaryLinesAndBSDLines() throws {
    let list = "\(a)  os.iso\n\(b) *tool.tar.gz\r\nSHA512 (Fedora (x86).iso) = \(long)\n# comment\n\n"
    #expect(try look(list, "os.iso").get() == [.init(algorithm: .sha256, hex: a)])
    #expect(try look(list, "tool.tar.gz").get() == [.init(algorithm: .sha256, hex: b)])
    #expect(try look(list, "Fedora (x86).iso").get() == [.init(algorithm: .sha512, hex: long)])
  }

  @Test func namesMatchWholeAfterALeadingDotSlash() throws {
    let list = "\(a)  ./dists/os.iso\n\(b)  os.iso\n"
    #expect(try look(list, "dists/os.iso").get().first?.hex == a)
    #expect(try look(list, "./os.iso").get().first?.hex == b)
    #expect(throws: VerifyError.noLine(name: "iso", list: "SUMS")) { try look(list, "iso").get() }
  }

  @Test func upperCaseHexAndEscapedNames() throws {
    let list = "\\\(a.uppercased())  back\\\\slash\\nline\n"
    #expect(try look(list, "back\\slash\nline").get().first?.hex == a)
  }

  @Test func weakDigestsAndConflictsAreErrors() throws {
    let md5 = String(repeating: "d", count: 32)
    #expect(throws: VerifyError.weakDigest(name: "f", list: "SUMS", algorithm: "MD5")) {
      try look("\(md5)  f\n", "f").get()
    }
    #expect(throws: VerifyError.weakDigest(name: "f", list: "SUMS", algorithm: "SHA1")) {
      try look("SHA1 (f) = \(String(repeating: "e", count: 40))\n", "f").get()
    }
    #expect(throws: VerifyError.conflictingLines(name: "f", list: "SUMS")) { try look("\(a)  f\n\(b)  f\n", "f").get() }
    // A SHA256 tag over a digest of another length is no line at all.
    #expect(throws: VerifyError.noLine(name: "f", list: "SUMS")) { try look("SHA256 (f) = \(long)\n", "f").get() }
    // A weak line beside an accepted one: the accepted one is used.
    #expect(try look("\(md5)  f\n\(a)  f\n", "f").get().first?.hex == a)
  }
}

@Suite struct OpenPGPVerdictTests {
  let good = """
    [GNUPG:] NEWSIG
    [GNUPG:] GOODSIG A9E82AB23CE3BD82 Good <good@example.org>
    [GNUPG:] VALIDSIG 6C2F3723E0D6E203860BE991A9E82AB23CE3BD82 2026-12-02 1796184101 0 4 0 22 8 00 6C2F3723E0D6E203860BE991A9E82AB23CE3BD82

    """

  @Test func aGoodValidSignaturePassesWithItsSigner() throws {
    let s = try OpenPGP.verdict(status: good, exitStatus: 0, keyring: "k").get()
    #expect(s == [.init(keyID: "A9E82AB23CE3BD82", fingerprint: "6C2F3723E0D6E203860BE991A9E82AB23CE3BD82")])
  }

  /// gpgv exits 0 for these: only the status lines say no.
  @Test func expiredAndRevokedKeysFailThoughGpgvExitsZero() {
    let expired = "[GNUPG:] EXPKEYSIG D8BE6B6D4955F1B5 Exp\n[GNUPG:] VALIDSIG X 2026 1 0 4 0 22 8 00 X\n"
    #expect(throws: VerifyError.expiredKey(keyID: "D8BE6B6D4955F1B5")) {
      try OpenPGP.verdict(status: expired, exitStatus: 0, keyring: "k").get()
    }
    let revoked = "[GNUPG:] REVKEYSIG 9A2B33B561FB74A9 Rev\n[GNUPG:] VALIDSIG X 2026 1 0 4 0 22 8 00 X\n"
    #expect(throws: VerifyError.revokedKey(keyID: "9A2B33B561FB74A9")) {
      try OpenPGP.verdict(status: revoked, exitStatus: 0, keyring: "k").get()
    }
  }

  @Test func aMissingKeyIsNamedAndABadSignatureFailsBesideAGoodOne() {
    let missing = "[GNUPG:] ERRSIG 4818ADC3B79C1194 22 8 00 1796184101 9 3D7C\n[GNUPG:] NO_PUBKEY 4818ADC3B79C1194\n"
    #expect(throws: VerifyError.unknownKey(keyID: "4818ADC3B79C1194", keyring: "k")) {
      try OpenPGP.verdict(status: missing, exitStatus: 2, keyring: "k").get()
    }
    // One signature by a key not held beside a good one passes, as apt passes it.
    #expect((try? OpenPGP.verdict(status: missing + good, exitStatus: 0, keyring: "k").get())?.count == 1)
    #expect(throws: VerifyError.badSignature(keyID: "A9E82AB23CE3BD82")) {
      try OpenPGP.verdict(
        status: good + "[GNUPG:] BADSIG A9E82AB23CE3BD82 Good\n", exitStatus: 1, keyring: "k"
      ).get()
    }
    #expect(throws: VerifyError.self) { try OpenPGP.verdict(status: "", exitStatus: 2, keyring: "k").get() }
  }

  /// The armor taken off is byte for byte what `gpg --dearmor` gives.
  @Test func dearmoringMatchesGpg() throws {
    let armored = try #require(readBytes(TrustKeys.dir + "/release.asc"))
    let out = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: out) }
    let r = try run(["--batch", "--dearmor", "-o", out + "/k.gpg", TrustKeys.dir + "/release.asc"], tool: "gpg")
    #expect(r.status == 0, "\(r.stderr)")
    let mine = try #require(OpenPGP.dearmored(armored))
    #expect(mine == readBytes(out + "/k.gpg"))
    #expect(OpenPGP.isArmored(armored) && !OpenPGP.isArmored(readBytes(TrustKeys.dir + "/release.gpg")!))
  }
}

@Suite struct TrustKeyTests {
  @Test func urlsBesideTheFilesURL() {
    let base = "https://u:p@example.org/24.04/os.iso?x=1"
    #expect(TrustLocation.join(base, "SHA256SUMS") == "https://u:p@example.org/24.04/SHA256SUMS")
    #expect(TrustLocation.join(base, "../SUMS") == "https://u:p@example.org/SUMS")
    #expect(TrustLocation.join(base, "/keys/SUMS") == "https://u:p@example.org/keys/SUMS")
    #expect(TrustLocation.join("https://example.org", "SUMS") == "https://example.org/SUMS")
    #expect(TrustLocation.join("file:release/os.img", "SUMS") == "file:release/SUMS")
    #expect(TrustLocation.join("file:os.img", "SUMS") == "file:SUMS")
    #expect(TrustLocation.join("file:///srv/os.img", "SUMS") == "file:///srv/SUMS")
    #expect(
      TrustCheck.fileName(
        of: SourceURL(
          scheme: "https", text: ExpandedString(plain: "https://example.org/a/os%20image.iso?sig=1"),
          host: "example.org", port: nil, hidesPassword: false)) == "os image.iso")
  }

  @Test func base64AndPercentText() {
    #expect(Base64.decode("aGVsbG8=") == Array("hello".utf8))
    #expect(Base64.decode("aGVs\nbG8=") == Array("hello".utf8))
    #expect(Base64.decode("aGVsbG8=x") == nil)
    #expect(Base64.decode("a!") == nil)
    #expect(PercentText.decode("a%2Fb%zz%4") == "a/b%zz%4")
  }

  func manifest(_ lines: [String], defaults: String = "") -> String {
    """
    version: 1
    name: t
    root: /srv
    \(defaults)
    files:
      - id: a
        url: http://example.org/a.iso
        destination: a.iso
    \(lines.map { "    " + $0 }.joined(separator: "\n"))

    """
  }

  @Test func theKeysDecodeAndTheirMistakesAreErrorsWhereWritten() throws {
    let ring = TrustKeys.dir + "/release.gpg"
    let (m, d) = decode(manifest(["checksums: {url: SHA256SUMS, signature: SHA256SUMS.gpg, keyring: \(ring)}"]))
    #expect(errors(d).isEmpty, "\(d)")
    let c = try #require(m?.files.first?.checksums)
    #expect(c.list == .relative("SHA256SUMS") && c.keyring == ring)

    let (_, two) = decode(
      manifest(["signature: {url: a.sig, keyring: \(ring), signify_key: \(TrustKeys.dir)/signify.pub}"]))
    #expect(two.contains { "\($0)".contains("test.yaml:9:16: error: signature names 2 keys") }, "\(two)")
    let (_, none) = decode(manifest(["signature: {url: a.sig}"]))
    #expect(none.contains { "\($0)".contains("signature needs one key to check it with") }, "\(none)")
    let (_, noRing) = decode(manifest(["checksums: {url: SUMS, signature: SUMS.gpg}"]))
    #expect(noRing.contains { "\($0)".contains("checksums.signature needs keyring") }, "\(noRing)")
    let (_, badKey) = decode(manifest(["signature: {url: a.minisig, minisign_key: RWQnotakey}"]))
    #expect(badKey.contains { "\($0)".contains("signature.minisign_key 'RWQnotakey' cannot be read") }, "\(badKey)")
    let (_, onlyName) = decode(manifest(["checksums: {name: a.iso}"]))
    #expect(onlyName.contains { "\($0)".contains("checksums needs url") }, "\(onlyName)")
    let s3 = manifest(["checksums: {url: SHA256SUMS}"]).replacingOccurrences(
      of: "http://example.org/a.iso", with: "s3://bucket/a.iso")
    let (_, onS3) = decode(s3)
    #expect(
      onS3.contains {
        "\($0)".contains("checksums.url 'SHA256SUMS' is a path beside the file's url, and s3:// urls have none")
      }, "\(onS3)")
    let (_, inDefaults) = decode(manifest([], defaults: "defaults: {signature: {url: x, signify_key: k}}"))
    #expect(inDefaults.contains { "\($0)".contains("'signature' names one file and cannot have a default") })
  }

  /// An unsigned list over plain http is a warning; a name in an entry
  /// merges over the defaults' list; an entry's own url replaces it whole.
  @Test func httpWithoutSignatureWarnsAndEntriesMergeOverDefaults() throws {
    let ring = TrustKeys.dir + "/release.gpg"
    let (_, unsigned) = decode(manifest(["checksums: {url: SHA256SUMS}"]))
    #expect(warnings(unsigned).contains { $0.message.contains("travels over plain http with no signature") })
    let signedDefaults = "defaults: {checksums: {url: SUMS, signature: SUMS.gpg, keyring: \(ring)}}"
    let (named, d1) = decode(manifest(["checksums: {name: other.iso}"], defaults: signedDefaults))
    #expect(errors(d1).isEmpty && !warnings(d1).contains { $0.message.contains("plain http") }, "\(d1)")
    let c = try #require(named?.files.first?.checksums)
    #expect(c.name == "other.iso" && c.signature == .relative("SUMS.gpg") && c.keyring == ring)
    let (own, _) = decode(manifest(["checksums: {url: https://example.org/LIST}"], defaults: signedDefaults))
    let o = try #require(own?.files.first?.checksums)
    #expect(o.signature == nil && o.keyring == nil)
  }
}
