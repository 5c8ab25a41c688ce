import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

// libFuzzer entry point over what syncfiles reads from a checksum list, a
// signature or a key it fetched (SPEC §10.2): the list's lines, gpgv's
// status lines, an armored keyring, minisign and signify files, base64,
// percent-encoding, and zsync control files (SPEC §10.1).
// Built by `Fuzz/run.sh SECONDS trust` without libcurl.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let text = String(decoding: bytes, as: UTF8.self)
  // The name looked up is the input's own first word, so that names the input holds are found.
  let name = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).dropFirst().first.map(String.init) ?? "f"
  if case .success(let digests) = ChecksumList.digests(in: bytes, for: name, list: "SUMS") {
    for d in digests where d.hex.utf8.count != (d.algorithm == .sha256 ? 64 : 128) {
      fatalError("a \(d.algorithm.rawValue) digest of \(d.hex.utf8.count) digits was accepted")
    }
  }
  _ = OpenPGP.verdict(status: text, exitStatus: 0, keyring: "k")
  _ = OpenPGP.dearmored(bytes)
  _ = OpenPGP.isClearsigned(bytes)
  if let decoded = Base64.decode(text), decoded.count > text.utf8.count { fatalError("base64 grew") }
  _ = PercentText.decode(text)
  _ = SignedKeyText.isKey(text, algorithm: "Ed")
  // A signature file against a fixed key and a missing file: the layout is read, no file is.
  let key = "RWQARC9/1OMExzuOCG9qmQW5FanQktPE5nBw3T9QclFtFMQDmI2sUy/h"
  _ = SignedBlob.minisign(signature: bytes, key: key, file: "/nonexistent/syncfiles-fuzz")
  _ = SignedBlob.signify(signature: bytes, key: key, file: "/nonexistent/syncfiles-fuzz")
  _ = SignedBlob.cosign(signature: bytes, pem: bytes, keyName: "k", sha256: String(repeating: "0", count: 64))
  // A zsync control file fetched from a server: what it reads, written out, reads back the same.
  if case .success(let index) = ZsyncIndex.parse(bytes, maxBytes: 1 << 40) {
    guard case .success(let again) = ZsyncIndex.parse(index.bytes), again == index else {
      fatalError("a control file read does not read back the same once written")
    }
  }
  return 0
}
