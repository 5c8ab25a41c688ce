import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// An entry's fingerprint: the journal's record of what was installed
/// counts only while the entry fetches the same thing the same way.
extension Planner {
  /// Identifies what an entry fetches and how it is checked; when it changes,
  /// what was installed or held partially no longer counts. The destination
  /// counts as written, relative to the root: a manifest's folder moved with
  /// its files and journal keeps them (each is still checked by size and
  /// modification time, and revalidated as usual).
  public static func fingerprint(_ e: FileEntry) -> String {
    hex16(fingerprintHash(e, destinationFrom: Int(e.destinationStart)))
  }

  /// The fingerprint as journals written before 2026-11-27 recorded it: over
  /// the destination's absolute path.
  static func legacyFingerprint(_ e: FileEntry) -> String { hex16(fingerprintHash(e, destinationFrom: 0)) }

  /// Whether a journal's `recorded` fingerprint is `e`'s, in either form
  /// (none recorded is not). `current`: `fingerprint(e)`, when the caller has it.
  public static func isFingerprint(_ recorded: String?, of e: FileEntry, current: String? = nil) -> Bool {
    guard let recorded else { return false }
    return recorded == (current ?? fingerprint(e)) || recorded == legacyFingerprint(e)
  }

  /// fnv1a(joined: [url, destination, sha256, max_bytes], separator: "\u{1}"),
  /// fed part by part: no array of the parts (twice an entry in a steady run).
  /// The separator is one byte, taken in place; an absent part adds no byte.
  /// The destination's bytes are taken from `destinationFrom` on.
  private static func fingerprintHash(_ e: FileEntry, destinationFrom start: Int) -> UInt64 {
    var h = e.url.withDisplayParts { head, tail in fnv1a(tail, from: fnv1a(head, from: fnvOffset)) }
    h = separated(h)
    h = e.destinationPath.withUTF8Bytes { bytes in fnv1a(UnsafeBufferPointer(rebasing: bytes[start...]), from: h) }
    h = separated(h)
    if let sha256 = e.sha256 { h = fnv1a(sha256, from: h) }
    h = separated(h)
    if let maxBytes = e.maxBytes { h = fnv1a(String(maxBytes), from: h) }
    return h
  }

  /// FNV-1a continued over the separator byte 0x01.
  private static func separated(_ h: UInt64) -> UInt64 { (h ^ 0x01) &* fnvPrime }

  static let fnvOffset: UInt64 = 0xcbf2_9ce4_8422_2325

  static func fnv1a(_ s: String) -> UInt64 { fnv1a(s, from: fnvOffset) }

  /// FNV-1a of the parts joined by `separator`, fed part by part (no joined copy).
  static func fnv1a(joined parts: [String], separator: String) -> UInt64 {
    var h = fnvOffset
    for (i, part) in parts.enumerated() {
      if i > 0 { h = fnv1a(separator, from: h) }
      h = fnv1a(part, from: h)
    }
    return h
  }

  /// FNV-1a continued over `s`'s bytes from `h`. Over the contiguous bytes:
  /// stepping the UTF-8 view costs several times more per byte, and every
  /// entry is hashed on every plan.
  static func fnv1a(_ s: String, from h: UInt64) -> UInt64 {
    s.withUTF8Bytes { bytes in fnv1a(bytes, from: h) }
  }

  static func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>, from h: UInt64) -> UInt64 {
    var h = h
    for b in bytes { h = (h ^ UInt64(b)) &* fnvPrime }
    return h
  }

  static let fnvPrime: UInt64 = 0x100_0000_01b3

  /// 16 lower-case hex digits.
  static func hex16(_ h: UInt64) -> String {
    String(unsafeUninitializedCapacity: 16) { out in
      let digits: StaticString = "0123456789abcdef"
      for k in 0..<16 { out[k] = digits.utf8Start[Int((h >> UInt64(60 - 4 * k)) & 0xF)] }
      return 16
    }
  }
}
