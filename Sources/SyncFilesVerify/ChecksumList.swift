import SyncFilesCore

/// A checksum list as distributions publish them (SPEC §10.2): coreutils
/// lines (`HEX  NAME`, `HEX *NAME`, a leading `\` for an escaped name) and
/// BSD lines (`SHA256 (NAME) = HEX`). Other lines (comments, a PGP armor's
/// headers, blank lines) are passed over, as `sha256sum -c` passes over
/// lines it cannot read.
public enum ChecksumList {
  public enum Algorithm: String, Sendable, Hashable {
    case sha256 = "SHA-256"
    case sha512 = "SHA-512"
  }

  /// A digest the list names for the file.
  public struct Digest: Sendable, Hashable {
    public var algorithm: Algorithm
    /// Lower-case hex.
    public var hex: String
  }

  /// One line read: its algorithm's name (a BSD tag, or one known by the
  /// digest's length), the name and the hex digest.
  struct Line: Equatable {
    var algorithm: String
    var name: String
    var hex: String
  }

  /// Every accepted digest the list names for `name` (SHA-256 and SHA-512
  /// lines may both be there). `list` names the list in errors.
  public static func digests(in text: [UInt8], for name: String, list: String) -> Result<[Digest], VerifyError> {
    let wanted = normalized(name)
    var found: [Digest] = []
    var weak: String? = nil
    for raw in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
      guard let line = parse(raw), normalized(line.name) == wanted else { continue }
      guard let algorithm = accepted(line.algorithm) else {
        weak = weak ?? line.algorithm
        continue
      }
      let d = Digest(algorithm: algorithm, hex: line.hex.lowercased())
      if found.contains(where: { $0.algorithm == algorithm && $0.hex != d.hex }) {
        return .failure(.conflictingLines(name: name, list: list))
      }
      if !found.contains(d) { found.append(d) }
    }
    if !found.isEmpty { return .success(found) }
    if let weak { return .failure(.weakDigest(name: name, list: list, algorithm: weak)) }
    return .failure(.noLine(name: name, list: list))
  }

  /// A name as compared: a leading `./` (any number of them) means nothing.
  static func normalized(_ name: String) -> String {
    var s = Substring(name)
    while s.hasPrefix("./") { s = s.dropFirst(2) }
    return String(s)
  }

  static func accepted(_ algorithm: String) -> Algorithm? {
    switch algorithm {
    case "SHA256", "SHA2-256", "SHA-256": return .sha256
    case "SHA512", "SHA2-512", "SHA-512": return .sha512
    default: return nil
    }
  }

  /// The algorithm a bare digest's length implies.
  static func algorithm(ofLength n: Int) -> String? {
    switch n {
    case 32: return "MD5"
    case 40: return "SHA1"
    case 56: return "SHA224"
    case 64: return "SHA256"
    case 96: return "SHA384"
    case 128: return "SHA512"
    default: return nil
    }
  }

  /// One line, or nil when it is neither form.
  static func parse(_ bytes: ArraySlice<UInt8>) -> Line? {
    var text = String(decoding: bytes, as: UTF8.self)
    if text.hasSuffix("\r") { text.removeLast() }
    var escaped = false
    if text.hasPrefix("\\") {
      escaped = true
      text.removeFirst()
    }
    guard var line = bsd(text) ?? coreutils(text) else { return nil }
    if escaped { line.name = unescape(line.name) }
    return line
  }

  /// `TAG (NAME) = HEX`: the name is everything between the first ` (` and the last `) = `.
  static func bsd(_ text: String) -> Line? {
    guard let open = text.firstRange(of: " ("), let close = text.ranges(of: ") = ").last,
      open.upperBound <= close.lowerBound
    else { return nil }
    let tag = String(text[..<open.lowerBound])
    let hex = String(text[close.upperBound...])
    guard !tag.isEmpty, tag.utf8.allSatisfy(isTagByte), isHex(hex) else { return nil }
    if let implied = algorithm(ofLength: hex.utf8.count), accepted(tag) != nil, accepted(implied) != accepted(tag) {
      return nil  // a SHA256 tag over a digest of another length
    }
    return Line(algorithm: tag, name: String(text[open.upperBound..<close.lowerBound]), hex: hex)
  }

  /// `HEX  NAME` (text mode) or `HEX *NAME` (binary mode).
  static func coreutils(_ text: String) -> Line? {
    guard let space = text.utf8.firstIndex(of: UInt8(ascii: " ")) else { return nil }
    let hex = String(text[..<space])
    let rest = text[text.index(after: space)...]
    guard let mode = rest.first, mode == " " || mode == "*", isHex(hex),
      let algorithm = algorithm(ofLength: hex.utf8.count)
    else { return nil }
    let name = String(rest.dropFirst())
    guard !name.isEmpty else { return nil }
    return Line(algorithm: algorithm, name: name, hex: hex)
  }

  /// coreutils' escapes in a name that begins a line with `\`: `\\` and `\n`.
  static func unescape(_ name: String) -> String {
    var out = ""
    var pending = false
    for c in name {
      if pending {
        out.append(c == "n" ? "\n" : c)
        pending = false
      } else if c == "\\" {
        pending = true
      } else {
        out.append(c)
      }
    }
    return out
  }

  static func isHex(_ s: String) -> Bool {
    !s.isEmpty
      && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
  }

  static func isTagByte(_ b: UInt8) -> Bool {
    (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2D
  }
}
