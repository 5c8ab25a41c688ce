/// A JSON value with ordered object keys, and a writer that produces compact,
/// valid JSON (RFC 8259) without Foundation's quirks (no escaped slashes,
/// integers stay integers).
public enum JSONValue: Sendable, Hashable {
  case null
  case bool(Bool)
  case int(Int64)
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object([(String, JSONValue)])

  public static func == (a: JSONValue, b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.int(let x), .int(let y)): return x == y
    case (.double(let x), .double(let y)): return x == y
    case (.string(let x), .string(let y)): return x == y
    case (.array(let x), .array(let y)): return x == y
    case (.object(let x), .object(let y)):
      return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    default: return false
    }
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(serialized())
  }

  /// Compact serialization; `pretty` indents with two spaces.
  public func serialized(pretty: Bool = false) -> String {
    String(decoding: bytes(pretty: pretty), as: UTF8.self)
  }

  /// The serialization as UTF-8 bytes (what the journal writes).
  public func bytes(pretty: Bool = false) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(512)
    write(to: &out, pretty: pretty, indent: 0)
    return out
  }

  private func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
    switch self {
    case .null: out += "null".utf8
    case .bool(let b): out += (b ? "true" : "false").utf8
    case .int(let i): JSONValue.writeInt(i, to: &out)
    case .double(let d):
      if d.isFinite { out += String(d).utf8 } else { out += "null".utf8 }
    case .string(let s): JSONValue.writeString(s, to: &out)
    case .array(let items):
      out.append(UInt8(ascii: "["))
      for (i, item) in items.enumerated() {
        if i > 0 { out.append(UInt8(ascii: ",")) }
        if pretty { JSONValue.newline(&out, indent + 1) }
        item.write(to: &out, pretty: pretty, indent: indent + 1)
      }
      if pretty && !items.isEmpty { JSONValue.newline(&out, indent) }
      out.append(UInt8(ascii: "]"))
    case .object(let pairs):
      out.append(UInt8(ascii: "{"))
      for (i, (key, value)) in pairs.enumerated() {
        if i > 0 { out.append(UInt8(ascii: ",")) }
        if pretty { JSONValue.newline(&out, indent + 1) }
        JSONValue.writeString(key, to: &out)
        out.append(UInt8(ascii: ":"))
        if pretty { out.append(UInt8(ascii: " ")) }
        value.write(to: &out, pretty: pretty, indent: indent + 1)
      }
      if pretty && !pairs.isEmpty { JSONValue.newline(&out, indent) }
      out.append(UInt8(ascii: "}"))
    }
  }

  private static func newline(_ out: inout [UInt8], _ indent: Int) {
    out.append(0x0A)
    out += repeatElement(UInt8(ascii: " "), count: 2 * indent)
  }

  /// Decimal digits without a String in between (journal records are mostly numbers and short strings).
  static func writeInt(_ v: Int64, to out: inout [UInt8]) {
    if v < 0 { out.append(UInt8(ascii: "-")) }
    var m = v.magnitude
    var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: room for 20 digits
    var n = 0
    withUnsafeMutableBytes(of: &digits) { d in
      repeat {
        d[n] = UInt8(ascii: "0") + UInt8(m % 10)
        m /= 10
        n += 1
      } while m > 0
      for k in stride(from: n - 1, through: 0, by: -1) { out.append(d[k]) }
    }
  }

  /// A backslash and `c`.
  private static func escaped(_ c: UInt8, to out: inout [UInt8]) {
    out.append(0x5C)
    out.append(c)
  }

  /// `\u` and four lower-case hex digits.
  private static func unicodeEscape(_ v: UInt32, to out: inout [UInt8]) {
    escaped(UInt8(ascii: "u"), to: &out)
    Hex.append(UInt64(v), digits: 4, to: &out)
  }

  static func writeString(_ s: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    // Most strings (ids, paths, URLs, dates) need no escape: copied whole.
    // U+2028 and U+2029 begin with the byte 0xE2, so that byte takes the slow way.
    func plain(_ b: UInt8) -> Bool { b >= 0x20 && b != 0x22 && b != 0x5C && b != 0x7F && b != 0xE2 }
    let copied = s.utf8.withContiguousStorageIfAvailable { u -> Bool in
      guard u.allSatisfy(plain) else { return false }
      out.append(contentsOf: u)
      return true
    }
    if copied
      ?? (s.utf8.allSatisfy(plain)
        && {
          out += s.utf8; return true
        }())
    {
      out.append(UInt8(ascii: "\""))
      return
    }
    // Byte by byte, with no text made per character (an ETag's quotes
    // brought every journal record here: issue 15, W4).
    var s = s
    s.withUTF8 { u in
      var k = 0
      while k < u.count {
        let b = u[k]
        k += 1
        switch b {
        case 0x22, 0x5C: escaped(b, to: &out)
        case 0x0A: escaped(UInt8(ascii: "n"), to: &out)
        case 0x0D: escaped(UInt8(ascii: "r"), to: &out)
        case 0x09: escaped(UInt8(ascii: "t"), to: &out)
        case 0..<0x20, 0x7F: unicodeEscape(UInt32(b), to: &out)
        case 0xE2 where k + 1 < u.count && u[k] == 0x80 && (u[k + 1] == 0xA8 || u[k + 1] == 0xA9):
          // U+2028 and U+2029: valid JSON, but not inside JavaScript strings.
          unicodeEscape(u[k + 1] == 0xA8 ? 0x2028 : 0x2029, to: &out)
          k += 2
        default: out.append(b)
        }
      }
    }
    out.append(UInt8(ascii: "\""))
  }
}
