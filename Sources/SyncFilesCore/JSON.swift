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
  package static func writeInt<S: ByteSink>(_ v: Int64, to out: inout S) {
    if v < 0 { out.put(UInt8(ascii: "-")) }
    var m = v.magnitude
    var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: room for 20 digits
    withUnsafeMutableBytes(of: &digits) { d in
      // Filled from the end, so the digits are handed over in one piece.
      var k = d.count
      repeat {
        k -= 1
        d[k] = UInt8(ascii: "0") + UInt8(m % 10)
        m /= 10
      } while m > 0
      out.put(UnsafeBufferPointer(rebasing: d.bindMemory(to: UInt8.self)[k...]))
    }
  }

  /// A backslash and `c`.
  private static func escaped<S: ByteSink>(_ c: UInt8, to out: inout S) {
    out.put(0x5C)
    out.put(c)
  }

  /// `\u` and four lower-case hex digits.
  private static func unicodeEscape<S: ByteSink>(_ v: UInt32, to out: inout S) {
    escaped(UInt8(ascii: "u"), to: &out)
    Hex.append(UInt64(v), digits: 4, to: &out)
  }

  /// Whether one of the eight bytes in `w` is not plain ASCII: below 0x20,
  /// a quote, a backslash, DEL, or 0x80 and above (0xE2 may begin U+2028).
  /// `(x - n × ones) & ~x & high` is non-zero when a byte of `x` (all below
  /// 0x80) is below `n`; a byte equal to `c` is a zero byte of `x ^ c × ones`.
  @inline(__always) package static func anyNeedsLook(_ w: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let high: UInt64 = 0x8080_8080_8080_8080
    @inline(__always) func below(_ x: UInt64, _ n: UInt64) -> Bool { (x &- ones &* n) & ~x & high != 0 }
    return w & high != 0 || below(w, 0x20) || below(w ^ (ones &* 0x22), 1) || below(w ^ (ones &* 0x5C), 1)
      || below(w ^ (ones &* 0x7F), 1)
  }

  /// Past `k`, the index after the whole words of eight bytes none of which
  /// needs a look (`anyNeedsLook`): a digest or a path is passed over eight
  /// bytes at a time, the rest is for the caller to look at byte by byte.
  @inline(__always) package static func skippingPlainWords(_ u: UnsafeBufferPointer<UInt8>, from k: Int) -> Int {
    var k = k
    while u.count - k >= 8,
      !anyNeedsLook(UInt64(littleEndian: UnsafeRawPointer(u.baseAddress! + k).loadUnaligned(as: UInt64.self)))
    {
      k += 8
    }
    return k
  }

  package static func writeString<S: ByteSink>(_ s: String, to out: inout S) {
    out.put(UInt8(ascii: "\""))
    // Most strings (ids, paths, URLs, dates) need no escape: copied whole.
    // Any other is copied in the runs between its escapes (an ETag's quotes
    // bring most journal records here).
    var s = s
    s.withUTF8 { u in
      var run = 0  // where the bytes not yet handed over begin
      var k = 0
      while k < u.count {
        k = Self.skippingPlainWords(u, from: k)
        guard k < u.count else { break }
        let b = u[k]
        // U+2028 and U+2029 (E2 80 A8, E2 80 A9) are escaped; any other 0xE2 is not.
        let lineSeparator = b == 0xE2 && k + 2 < u.count && u[k + 1] == 0x80 && (u[k + 2] | 1) == 0xA9
        guard b < 0x20 || b == 0x22 || b == 0x5C || b == 0x7F || lineSeparator else {
          k += 1
          continue
        }
        out.put(UnsafeBufferPointer(rebasing: u[run..<k]))
        switch b {
        case 0x22, 0x5C: escaped(b, to: &out)
        case 0x0A: escaped(UInt8(ascii: "n"), to: &out)
        case 0x0D: escaped(UInt8(ascii: "r"), to: &out)
        case 0x09: escaped(UInt8(ascii: "t"), to: &out)
        case 0xE2:
          // U+2028 and U+2029: valid JSON, but not inside JavaScript strings.
          unicodeEscape(u[k + 2] == 0xA8 ? 0x2028 : 0x2029, to: &out)
          k += 2
        default: unicodeEscape(UInt32(b), to: &out)  // the other controls and DEL
        }
        k += 1
        run = k
      }
      out.put(UnsafeBufferPointer(rebasing: u[run..<u.count]))
    }
    out.put(UInt8(ascii: "\""))
  }
}
