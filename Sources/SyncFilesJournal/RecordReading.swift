import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#endif

/// Task records read as bytes, in the shape `RecordBytes.swift` writes them
/// (`TaskState.recordBytes`): its keys in its order, its value types, no white
/// space; any other shape is nil, and the general JSON parser reads it.
extension TaskState {
  /// The task id a record in the writer's shape begins with (read without
  /// the rest of the record); nil for any other shape.
  package static func fastID(_ body: UnsafeBufferPointer<UInt8>) -> String? {
    var r = RecordReader(b: body)
    guard r.literal(recordStart), let id = r.string(), r.i < body.count,
      body[r.i] == UInt8(ascii: ",") || body[r.i] == UInt8(ascii: "}")
    else { return nil }
    return id
  }

  /// The record in `body` when it has exactly the writer's shape; nil sends
  /// it to the general reader (which also decides whether it is valid).
  package static func fastRecord(_ body: UnsafeBufferPointer<UInt8>) -> TaskState? {
    var times = RFC3339Parsed()
    return fastRecord(body, times: &times)
  }

  /// `fastRecord`, keeping the last time read in `times` for the next record's.
  package static func fastRecord(_ body: UnsafeBufferPointer<UInt8>, times: inout RFC3339Parsed) -> TaskState? {
    var r = RecordReader(b: body, times: times)
    defer { times = r.times }
    guard r.literal(recordStart), let id = r.string() else { return nil }
    var t = TaskState(id: id)
    guard r.pairs(of: RecordReader.topKeys, { r, k in r.top(k, into: &t) }), r.i == body.count else { return nil }
    return t
  }
}

/// The last time a reader parsed, kept with its text: a journal's records
/// mostly share the second of their check and success, and a steady run
/// reads two times for each of thousands of tasks.
package struct RFC3339Parsed {
  /// The text's 20 bytes (`2026-11-22T03:00:00Z`) and 4 spare.
  private var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
  /// What it parsed to; nil while nothing is kept.
  private var value: Timestamp??

  /// `Timestamp.parseRFC3339(bytes)`.
  package mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
    guard bytes.count == 20, let from = bytes.baseAddress else { return Timestamp.parseRFC3339(bytes) }
    if let kept = value, withUnsafeBytes(of: &text, { memcmp($0.baseAddress!, from, 20) == 0 }) { return kept }
    let v = Timestamp.parseRFC3339(bytes)
    withUnsafeMutableBytes(of: &text) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
    value = .some(v)
    return v
  }
}

/// A cursor over one record's bytes that accepts only the writer's shape.
private struct RecordReader {
  package let b: UnsafeBufferPointer<UInt8>
  package var i = 0
  package var times = RFC3339Parsed()

  package static let topKeys = RecordKey.Task.allCases.map { Array($0.text.utf8) }
  /// The optional keys of `installed` and `partial` the byte writer writes, in its order.
  static let installedFields: [RecordKey.Installed] = [.etag, .lastModified, .sha256, .dateIsStrong]
  static let installedKeys = installedFields.map { Array($0.text.utf8) }
  static let partialFields: [RecordKey.Partial] = [.total, .etag, .lastModified, .dateIsStrong]
  static let partialKeys = partialFields.map { Array($0.text.utf8) }

  mutating func eat(_ c: UInt8) -> Bool {
    guard i < b.count, b[i] == c else { return false }
    i += 1
    return true
  }

  mutating func literal(_ s: StaticString) -> Bool {
    let n = s.utf8CodeUnitCount
    guard b.count - i >= n else { return false }
    for k in 0..<n where b[i + k] != s.utf8Start[k] { return false }
    i += n
    return true
  }

  /// `"name":` where name is one of `keys` after index `last` (the writer's order, each once).
  mutating func key(after last: Int, in keys: [[UInt8]]) -> Int? {
    guard eat(UInt8(ascii: "\"")) else { return nil }
    let start = i
    while i < b.count, b[i] != UInt8(ascii: "\""), b[i] != UInt8(ascii: "\\") { i += 1 }
    guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
    let name = UnsafeBufferPointer(rebasing: b[start..<i])
    i += 1
    guard eat(UInt8(ascii: ":")) else { return nil }
    for k in (last + 1)..<keys.count where keys[k].count == name.count {
      if keys[k].withUnsafeBufferPointer({ memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0 }) { return k }
    }
    return nil
  }

  /// Moves `i` past the bytes a string takes as they are, eight at a time
  /// where none of them asks for a look (a digest, a path).
  mutating func skipPlain() { i = plainEnd(from: i) }

  /// Where the bytes a string takes as they are end, from `k`.
  func plainEnd(from k: Int) -> Int {
    var k = JSONValue.skippingPlainWords(b, from: k)
    while k < b.count, b[k] != UInt8(ascii: "\""), b[k] != UInt8(ascii: "\\"), b[k] >= 0x20 { k += 1 }
    return k
  }

  /// The bytes of a string that has no escape, in place (nil for any other
  /// value: `string()` reads those).
  mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
    let opening = i
    guard eat(UInt8(ascii: "\"")) else { return nil }
    let start = i
    skipPlain()
    guard i < b.count, b[i] == UInt8(ascii: "\"") else {
      i = opening
      return nil
    }
    i += 1
    return UnsafeBufferPointer(rebasing: b[start..<(i - 1)])
  }

  /// A time the writer wrote (RFC 3339, no escape), read from the bytes in
  /// place; .some(nil) for a string that is no time, as `Timestamp.parseRFC3339` says.
  mutating func time() -> Timestamp?? {
    if let bytes = plainString() { return .some(times.parse(bytes)) }
    return string().map { Timestamp.parseRFC3339($0) }
  }

  /// A string with no `\u` escape; other escapes as JSON reads them.
  mutating func string() -> String? {
    guard eat(UInt8(ascii: "\"")) else { return nil }
    let start = i
    skipPlain()
    guard i < b.count else { return nil }
    if b[i] == UInt8(ascii: "\"") {
      i += 1
      return String(decoding: UnsafeBufferPointer(rebasing: b[start..<(i - 1)]), as: UTF8.self)
    }
    // Escapes (an ETag's quotes): checked and counted first, then written
    // once into the string's own storage, with no array between (every
    // record's ETag comes here).
    var end = i
    var length = i - start
    while end < b.count, b[end] != UInt8(ascii: "\"") {
      guard b[end] == UInt8(ascii: "\\"), end + 1 < b.count, Self.unescaped(b[end + 1]) != nil else { return nil }
      let run = end + 2
      end = plainEnd(from: run)
      length += 1 + end - run
    }
    guard end < b.count else { return nil }
    let text = String(unsafeUninitializedCapacity: length) { out in
      var k = start
      for o in 0..<length {
        let escaped = b[k] == UInt8(ascii: "\\")
        out[o] = escaped ? Self.unescaped(b[k + 1]) ?? b[k + 1] : b[k]  // each escape checked above
        k += escaped ? 2 : 1
      }
      return length
    }
    i = end + 1
    return text
  }

  private static func unescaped(_ e: UInt8) -> UInt8? {
    switch e {
    case UInt8(ascii: "\""): 0x22
    case UInt8(ascii: "\\"): 0x5C
    case UInt8(ascii: "/"): 0x2F
    case UInt8(ascii: "b"): 0x08
    case UInt8(ascii: "f"): 0x0C
    case UInt8(ascii: "n"): 0x0A
    case UInt8(ascii: "r"): 0x0D
    case UInt8(ascii: "t"): 0x09
    default: nil
    }
  }

  /// `-?(0|[1-9][0-9]*)` that fits an Int64 as it is read: an integer, as the
  /// general reader makes it (a longer one takes the general way).
  mutating func int() -> Int64? {
    let negative = eat(UInt8(ascii: "-"))
    let start = i
    var v: Int64 = 0
    while i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") {
      let (m, o1) = v.multipliedReportingOverflow(by: 10)
      let (a, o2) = m.addingReportingOverflow(Int64(b[i] - UInt8(ascii: "0")))
      guard !o1, !o2 else { return nil }
      v = a
      i += 1
    }
    let digits = i - start
    guard digits > 0, !(digits > 1 && b[start] == UInt8(ascii: "0")) else { return nil }
    if i < b.count, b[i] == UInt8(ascii: ".") || b[i] | 0x20 == UInt8(ascii: "e") { return nil }
    return negative ? -v : v
  }

  mutating func bool() -> Bool? {
    if literal("true") { return true }
    if literal("false") { return false }
    return nil
  }

  /// One top-level value, key `k` of `topKeys`; false when it is not of the writer's type.
  mutating func top(_ k: Int, into t: inout TaskState) -> Bool {
    switch RecordKey.Task(rawValue: k)! {
    case .fingerprint: return string().map { t.fingerprint = $0 } != nil
    case .error: return string().map { t.lastError = $0 } != nil
    case .lastCheck: return time().map { t.lastCheck = $0 } != nil
    case .lastSuccess: return time().map { t.lastSuccess = $0 } != nil
    case .backoffUntil: return time().map { t.backoffUntil = $0 } != nil
    case .outcome: return string().map { t.lastOutcome = TaskState.Outcome(rawValue: $0) } != nil
    case .bytes: return int().map { t.lastBytes = $0 } != nil
    case .httpStatus: return int().map { t.httpStatus = Int($0) } != nil
    case .failures: return int().map { t.failures = Int($0) } != nil
    case .installed: return installed().map { t.installed = $0 } != nil
    case .partial: return partial().map { t.partial = $0 } != nil
    case .onChangePending: return bool().map { t.changeHookPending = $0 } != nil
    case .onCompletePending: return bool().map { t.completeHookPending = $0 } != nil
    case .rolledBack: return time().map { t.rolledBack = $0 } != nil
    }
  }

  /// `,"key":value` pairs, keys in the order of `keys` and each at most
  /// once, then `}`; `value` reads key `k`'s value (false: not the writer's shape).
  mutating func pairs(of keys: [[UInt8]], _ value: (inout RecordReader, Int) -> Bool) -> Bool {
    var last = -1
    while eat(UInt8(ascii: ",")) {
      guard let k = key(after: last, in: keys), value(&self, k) else { return false }
      last = k
    }
    return eat(UInt8(ascii: "}"))
  }

  /// `{"first":`: a nested object's start and its first key.
  mutating func opening(_ first: StaticString) -> Bool {
    eat(UInt8(ascii: "{")) && eat(UInt8(ascii: "\"")) && literal(first) && eat(UInt8(ascii: "\""))
      && eat(UInt8(ascii: ":"))
  }

  /// `,"key":` of a key the writer always writes.
  mutating func then(_ key: StaticString) -> Bool {
    eat(UInt8(ascii: ",")) && eat(UInt8(ascii: "\"")) && literal(key) && eat(UInt8(ascii: "\""))
      && eat(UInt8(ascii: ":"))
  }

  mutating func installed() -> TaskState.Installed? {
    typealias K = RecordKey.Installed
    guard opening(K.size.name), let size = int(), then(K.mtimeNs.name), let m = int() else { return nil }
    var v = TaskState.Installed(size: size, mtimeNs: m)
    let whole = pairs(of: Self.installedKeys) { r, k in
      switch Self.installedFields[k] {
      case .etag: return r.string().map { v.etag = $0 } != nil
      case .lastModified: return r.string().map { v.lastModified = $0 } != nil
      case .sha256: return r.string().map { v.sha256 = $0 } != nil
      default: return r.bool().map { v.dateIsStrong = $0 } != nil
      }
    }
    return whole ? v : nil
  }

  mutating func partial() -> TaskState.Partial? {
    typealias K = RecordKey.Partial
    guard opening(K.path.name), let path = string(), then(K.offset.name), let off = int() else { return nil }
    var v = TaskState.Partial(path: path, offset: off)
    let whole = pairs(of: Self.partialKeys) { r, k in
      switch Self.partialFields[k] {
      case .total: return r.int().map { v.totalBytes = $0 } != nil
      case .etag: return r.string().map { v.etag = $0 } != nil
      case .lastModified: return r.string().map { v.lastModified = $0 } != nil
      default: return r.bool().map { v.dateIsStrong = $0 } != nil
      }
    }
    return whole ? v : nil
  }
}
