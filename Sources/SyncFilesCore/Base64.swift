/// Standard base64 (RFC 4648 §4): S3's checksums, and the keys and
/// signatures of minisign, signify, cosign and armored OpenPGP.
public enum Base64 {
  /// The bytes `text` encodes, line breaks and spaces skipped; nil when a
  /// character is not of the alphabet, padding is misplaced, or bits are left over.
  public static func decode(_ text: some StringProtocol) -> [UInt8]? {
    var bits: UInt32 = 0
    var count = 0
    var padding = 0
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count * 3 / 4)
    for c in text.utf8 {
      let v: UInt8
      switch c {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = c - UInt8(ascii: "A")
      case UInt8(ascii: "a")...UInt8(ascii: "z"): v = c - UInt8(ascii: "a") + 26
      case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0") + 52
      case UInt8(ascii: "+"): v = 62
      case UInt8(ascii: "/"): v = 63
      case UInt8(ascii: "="):
        padding += 1
        continue
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): continue
      default: return nil
      }
      guard padding == 0 else { return nil }  // data after padding
      bits = bits << 6 | UInt32(v)
      count += 6
      if count >= 8 {
        count -= 8
        bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
      }
    }
    // Left-over bits are the padding's zeros: fewer than a byte, and at most two '='.
    guard count < 8, padding <= 2, bits & ((1 << UInt32(count)) - 1) == 0 else { return nil }
    return bytes
  }

  /// The 32 bytes `text` encodes, as lower-case hex (S3's `x-amz-checksum-sha256`).
  public static func hex(_ text: String) -> String? {
    guard let bytes = decode(text), bytes.count == 32 else { return nil }
    return Hex.string(bytes)
  }
}
