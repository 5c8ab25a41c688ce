/// Equal keys. Most keys compared differ, and most that differ differ in
/// length, which costs far less to see than a comparison of the strings.
func sameKey(_ a: String, _ b: String) -> Bool { a.utf8.count == b.utf8.count && a == b }

/// The keys of one mapping in the order written. A mapping has a handful of
/// keys, so a scan beats hashing each key looked up (and the decoder looks
/// up every key it knows in every entry).
struct Fields<Value>: Sequence {
  // Keys apart from values: a lookup compares keys without copying pairs.
  private var keys: [String] = []
  private var values: [Value] = []
  /// For a file entry's keys: where each `FileKey`'s value is, six bits a
  /// key, ten keys a word (0: absent, else its index + 1; `Self.byName`:
  /// look it up by name). A lookup compares no strings.
  private var slots: (UInt64, UInt64, UInt64) = (0, 0, 0)
  private var keyed = false
  private static var byName: UInt64 { 63 }

  var count: Int { keys.count }

  /// Fields of a file entry or of `defaults`, whose keys are `Keys.file`.
  static func fileKeyed() -> Fields {
    var f = Fields()
    f.keyed = true
    return f
  }

  mutating func reserveCapacity(_ n: Int) {
    keys.reserveCapacity(n)
    values.reserveCapacity(n)
  }

  private func index(of key: String) -> Int? {
    for i in keys.indices where sameKey(keys[i], key) { return i }
    return nil
  }

  subscript(key: String) -> Value? {
    get { index(of: key).map { values[$0] } }
    set {
      if let i = index(of: key) {
        if let newValue {
          values[i] = newValue
        } else {
          keys.remove(at: i)
          values.remove(at: i)
          // The keys after it moved: place every file key again.
          slots = (0, 0, 0)
          for (j, k) in keys.enumerated() { if let f = fileKey(k) { place(f, at: j) } }
        }
      } else if let newValue {
        append(new: key, newValue, as: fileKey(key))
      }
    }
  }

  /// What `key` is among a file entry's keys, for fields that keep them.
  private func fileKey(_ key: String) -> FileKey? {
    keyed ? FileKey(named: key) : nil
  }

  private func slot(_ key: FileKey) -> UInt64 {
    let word = key.rawValue < 10 ? slots.0 : key.rawValue < 20 ? slots.1 : slots.2
    return (word >> UInt64(key.rawValue % 10 * 6)) & 63
  }

  private mutating func place(_ key: FileKey, at index: Int) {
    let value = UInt64(Swift.min(index + 1, Int(Self.byName))) << UInt64(key.rawValue % 10 * 6)
    switch key.rawValue / 10 {
    case 0: slots.0 |= value
    case 1: slots.1 |= value
    default: slots.2 |= value
    }
  }

  /// Whether a key that makes an entry's options is present (any file key
  /// outside `FileKey.entryValues`).
  func hasOptionKey() -> Bool {
    guard keyed else { return FileKey.allCases.contains { FileKey.entryValues & $0.bit == 0 && has($0) } }
    let o = FileKey.optionSlots
    return slots.0 & o.0 != 0 || slots.1 & o.1 != 0 || slots.2 & o.2 != 0
  }

  /// Whether a file key is present (fields made by `fileKeyed()`).
  func has(_ key: FileKey) -> Bool { keyed ? slot(key) != 0 : self[key.name] != nil }

  subscript(key: FileKey) -> Value? {
    guard keyed else { return self[key.name] }
    switch slot(key) {
    case 0: return nil
    case Self.byName: return self[key.name]
    case let s: return values[Int(s) - 1]
    }
  }

  /// Adds a key the caller knows is absent (no scan for it); `fileKey` is
  /// what it is among a file entry's keys.
  mutating func append(new key: String, _ value: Value, as fileKey: FileKey? = nil) {
    keys.append(key)
    values.append(value)
    if let fileKey { place(fileKey, at: values.count - 1) }
  }

  /// The same keys, each with its value transformed.
  func mapValues<T>(_ transform: (Value) -> T) -> Fields<T> {
    var out = Fields<T>()
    out.keys = keys
    out.values = values.map(transform)
    out.slots = slots
    out.keyed = keyed
    return out
  }

  func makeIterator() -> Zip2Sequence<[String], [Value]>.Iterator { zip(keys, values).makeIterator() }
}
