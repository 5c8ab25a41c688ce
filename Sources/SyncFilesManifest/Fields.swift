import SyncFilesCore

/// Equal keys. Most keys compared differ, and most that differ differ in
/// length, which costs far less to see than a comparison of the strings.
package func sameKey(_ a: String, _ b: String) -> Bool { a.utf8.count == b.utf8.count && a == b }

/// The keys of one mapping in the order written. A mapping has a handful of
/// keys, so a scan beats hashing each key looked up.
package struct Fields<Value>: Sequence {
  // Keys apart from values: a lookup compares keys without copying pairs.
  private var keys: [String] = []
  private var values: [Value] = []

  var count: Int { keys.count }

  mutating func reserveCapacity(_ n: Int) {
    keys.reserveCapacity(n)
    values.reserveCapacity(n)
  }

  subscript(key: String) -> Value? {
    for i in keys.indices where sameKey(keys[i], key) { return values[i] }
    return nil
  }

  /// Adds a key the caller knows is absent.
  mutating func append(new key: String, _ value: Value) {
    keys.append(key)
    values.append(value)
  }

  package func makeIterator() -> Zip2Sequence<[String], [Value]>.Iterator { zip(keys, values).makeIterator() }
}

/// The keys of a file entry (or of `defaults`) in the order written, each
/// known by its `FileKey`: a lookup compares integers, not strings.
package struct KeyedFields<Value> {
  private(set) var keys: [FileKey] = []
  private var values: [Value] = []

  var count: Int { keys.count }

  mutating func reserveCapacity(_ n: Int) {
    keys.reserveCapacity(n)
    values.reserveCapacity(n)
  }

  subscript(key: FileKey) -> Value? {
    get {
      for i in keys.indices where keys[i] == key { return values[i] }
      return nil
    }
    set {
      if let i = keys.firstIndex(of: key) {
        if let newValue {
          values[i] = newValue
        } else {
          keys.remove(at: i)
          values.remove(at: i)
        }
      } else if let newValue {
        append(new: key, newValue)
      }
    }
  }

  /// Adds a key the caller knows is absent.
  mutating func append(new key: FileKey, _ value: Value) {
    keys.append(key)
    values.append(value)
  }

  /// The same keys, each with its value transformed.
  func mapValues<T>(_ transform: (Value) -> T) -> KeyedFields<T> {
    var out = KeyedFields<T>()
    out.keys = keys
    out.values = values.map(transform)
    return out
  }

  /// Each key with its value, in the order written.
  func forEach(_ body: (FileKey, Value) throws -> Void) rethrows {
    for i in keys.indices { try body(keys[i], values[i]) }
  }
}
