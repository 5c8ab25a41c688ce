extension JSONValue {
  public struct ParseError: Error, Sendable, Hashable {
    public var offset: Int
    public var message: String
  }

  /// Parses RFC 8259 JSON. Depth is limited to 64; integers that fit in
  /// Int64 stay integers, other numbers become doubles.
  public static func parse(_ text: String) throws(ParseError) -> JSONValue {
    try parse(bytes: Array(text.utf8)[...])
  }

  /// Parses JSON given as UTF-8 bytes (a journal record, without a String in between).
  public static func parse(bytes: ArraySlice<UInt8>) throws(ParseError) -> JSONValue {
    let r = bytes.withUnsafeBufferPointer { b -> Result<JSONValue, ParseError> in
      var p = Parser(bytes: b)
      do throws(ParseError) {
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        if p.i != b.count { throw ParseError(offset: p.i, message: "trailing characters") }
        return .success(v)
      } catch {
        return .failure(error)
      }
    }
    return try r.get()
  }

  public subscript(key: String) -> JSONValue? {
    if case .object(let pairs) = self { return pairs.first { $0.0 == key }?.1 }
    return nil
  }

  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }

  public var boolValue: Bool? {
    if case .bool(let b) = self { return b }
    return nil
  }

  public var intValue: Int64? {
    switch self {
    case .int(let i): return i
    case .double(let d) where d == d.rounded() && abs(d) < 9e18: return Int64(d)
    default: return nil
    }
  }

  private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0

    mutating func skipSpace() {
      while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    func fail(_ m: String) -> ParseError { ParseError(offset: i, message: m) }

    mutating func literal(_ word: String, _ v: JSONValue) throws(ParseError) -> JSONValue {
      let w = Array(word.utf8)
      guard i + w.count <= bytes.count, bytes[i..<(i + w.count)].elementsEqual(w) else { throw fail("bad literal") }
      i += w.count
      return v
    }

    mutating func value(depth: Int) throws(ParseError) -> JSONValue {
      guard depth < 64 else { throw fail("nested too deeply") }
      guard i < bytes.count else { throw fail("unexpected end") }
      switch bytes[i] {
      case UInt8(ascii: "{"): return try object(depth: depth)
      case UInt8(ascii: "["): return try array(depth: depth)
      case UInt8(ascii: "\""): return .string(try string())
      case UInt8(ascii: "t"): return try literal("true", .bool(true))
      case UInt8(ascii: "f"): return try literal("false", .bool(false))
      case UInt8(ascii: "n"): return try literal("null", .null)
      default: return try number()
      }
    }

    /// `{…}`, its `{` at `i`.
    mutating func object(depth: Int) throws(ParseError) -> JSONValue {
      i += 1
      var pairs: [(String, JSONValue)] = []
      skipSpace()
      if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
        i += 1
        return .object(pairs)
      }
      while true {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a key") }
        let k = try string()
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
        i += 1
        skipSpace()
        pairs.append((k, try value(depth: depth + 1)))
        skipSpace()
        guard i < bytes.count else { throw fail("unexpected end") }
        if bytes[i] == UInt8(ascii: ",") {
          i += 1
          continue
        }
        if bytes[i] == UInt8(ascii: "}") {
          i += 1
          return .object(pairs)
        }
        throw fail("expected ',' or '}'")
      }
    }

    /// `[…]`, its `[` at `i`.
    mutating func array(depth: Int) throws(ParseError) -> JSONValue {
      i += 1
      var items: [JSONValue] = []
      skipSpace()
      if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
        i += 1
        return .array(items)
      }
      while true {
        skipSpace()
        items.append(try value(depth: depth + 1))
        skipSpace()
        guard i < bytes.count else { throw fail("unexpected end") }
        if bytes[i] == UInt8(ascii: ",") {
          i += 1
          continue
        }
        if bytes[i] == UInt8(ascii: "]") {
          i += 1
          return .array(items)
        }
        throw fail("expected ',' or ']'")
      }
    }

    mutating func number() throws(ParseError) -> JSONValue {
      let start = i
      if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
      var isInteger = true
      let digitsStart = i
      while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
      guard i > digitsStart else { throw fail("bad number") }
      if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
        isInteger = false
        i += 1
        while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
      }
      if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
        isInteger = false
        i += 1
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
        while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
      }
      if isInteger, let v = Parser.integer(bytes[start..<i]) { return .int(v) }
      let text = String(decoding: bytes[start..<i], as: UTF8.self)
      guard let d = Double(text) else { throw fail("bad number") }
      return .double(d)
    }

    /// An optional minus and up to 18 digits (always within Int64); longer ones go through `Int64(String)`.
    static func integer(_ b: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
      let negative = b.first == UInt8(ascii: "-")
      let digits = negative ? b.dropFirst() : b
      guard digits.count <= 18 else { return Int64(String(decoding: b, as: UTF8.self)) }
      var v: Int64 = 0
      for c in digits { v = v * 10 + Int64(c &- 0x30) }
      return negative ? -v : v
    }

    mutating func hex4() throws(ParseError) -> UInt32 {
      guard i + 4 <= bytes.count else { throw fail("bad escape") }
      var v: UInt32 = 0
      for _ in 0..<4 {
        let c = bytes[i]
        let d: UInt32
        switch c {
        case 0x30...0x39: d = UInt32(c - 0x30)
        case 0x41...0x46: d = UInt32(c - 0x41 + 10)
        case 0x61...0x66: d = UInt32(c - 0x61 + 10)
        default: throw fail("bad escape")
        }
        v = v * 16 + d
        i += 1
      }
      return v
    }

    mutating func string() throws(ParseError) -> String {
      i += 1  // opening quote
      // Most strings have no escape: taken whole from the input.
      let start = i
      while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 { i += 1 }
      if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
        i += 1
        return String(decoding: bytes[start..<(i - 1)], as: UTF8.self)
      }
      var out = Array(bytes[start..<i])
      while true {
        guard i < bytes.count else { throw fail("unterminated string") }
        let c = bytes[i]
        if c == UInt8(ascii: "\"") {
          i += 1
          break
        }
        if c < 0x20 { throw fail("control character in string") }
        if c != UInt8(ascii: "\\") {
          out.append(c)
          i += 1
          continue
        }
        i += 1
        guard i < bytes.count else { throw fail("bad escape") }
        let e = bytes[i]
        i += 1
        switch e {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
          var scalar = try hex4()
          if scalar >= 0xD800 && scalar < 0xDC00 {
            guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
              throw fail("lone surrogate")
            }
            i += 2
            let low = try hex4()
            guard low >= 0xDC00 && low < 0xE000 else { throw fail("bad surrogate pair") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          }
          guard let u = Unicode.Scalar(scalar) else { throw fail("bad code point") }
          out.append(contentsOf: Array(String(Character(u)).utf8))
        default: throw fail("bad escape")
        }
      }
      return String(decoding: out, as: UTF8.self)
    }
  }
}
