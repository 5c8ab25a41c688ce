import Foundation

/// The keys the trust tests sign with, made once per test process by
/// `make-trust-keys.sh` with the real tools (gpg, minisign, signify,
/// openssl), and the signing commands those tests use.
enum TrustKeys {
  static let dir: String = {
    let d = makeTempDir()
    let r = try! run([packageRoot + "/Tests/SyncFilesTests/Support/make-trust-keys.sh", d], tool: "/bin/bash")
    precondition(r.status == 0, "make-trust-keys.sh failed: \(r.stderr)")
    return d
  }()

  /// The long key id gpg shows for `email`'s primary key.
  static func keyID(_ email: String) -> String {
    let r = try! run(["--with-colons", "--list-keys", email], env: ["GNUPGHOME": dir + "/gnupg"], tool: "gpg")
    let pub = r.stdout.split(separator: "\n").first { $0.hasPrefix("pub:") }!
    return String(pub.split(separator: ":", omittingEmptySubsequences: false)[4])
  }

  /// Signs `file` with `email`'s key: detached (binary, or armored) or clearsigned, to `out`.
  /// `at`: the time to sign at (`20200101T120000`), for the expired key.
  static func gpg(
    _ email: String, _ file: String, out: String, clearsign: Bool = false, armor: Bool = false, at: String? = nil
  ) {
    var args = ["--batch", "--yes", "--quiet", "-u", email, "-o", out]
    if let at { args += ["--faked-system-time", at] }
    if armor { args.append("--armor") }
    args += [clearsign ? "--clearsign" : "--detach-sign", file]
    let r = try! run(args, env: ["GNUPGHOME": dir + "/gnupg"], tool: "gpg")
    precondition(r.status == 0, "gpg failed: \(r.stderr)")
  }

  /// `file.minisig` by the minisign key `key` (`minisign` or `minisign2`).
  static func minisign(_ file: String, key: String = "minisign", comment: String = "syncfiles test") {
    let r = try! run(
      ["-S", "-s", "\(dir)/\(key).key", "-m", file, "-t", comment, "-x", file + ".minisig"], tool: "minisign")
    precondition(r.status == 0, "minisign failed: \(r.stderr)")
  }

  /// The minisign public key's base64 line.
  static func minisignKey(_ key: String = "minisign") -> String {
    let text = try! String(contentsOfFile: "\(dir)/\(key).pub", encoding: .utf8)
    return String(text.split(separator: "\n")[1])
  }

  /// `file.sig` by the signify key.
  static func signify(_ file: String) {
    let r = try! run(["-S", "-s", dir + "/signify.sec", "-m", file, "-x", file + ".sig"], tool: "signify-openbsd")
    precondition(r.status == 0, "signify failed: \(r.stderr)")
  }

  /// `file.sig` as cosign `sign-blob` writes it: base64 of a DER ECDSA signature of the SHA-256.
  static func cosign(_ file: String) {
    let r = try! run(
      ["-c", "openssl dgst -sha256 -sign '\(dir)/cosign.key' '\(file)' | base64 -w0 > '\(file).sig'"],
      tool: "/bin/bash")
    precondition(r.status == 0, "openssl failed: \(r.stderr)")
  }
}

/// `sha256sum`'s line for `bytes` named `name` (binary mode with `*`).
func sumLine(_ bytes: [UInt8], _ name: String, binary: Bool = false) -> String {
  "\(sha256Hex(bytes)) \(binary ? "*" : " ")\(name)\n"
}
