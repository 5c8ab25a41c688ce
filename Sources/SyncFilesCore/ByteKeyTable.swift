/// A hash table of byte strings that live elsewhere, looked up by their bytes
/// with no `String` made: a slot keeps 32 bits of a key's hash and a number
/// that names the key to its owner, who compares the bytes when the hashes
/// agree. The session check looks up every destination and its folders this
/// way: a `String` made for each folder costs more than the lookups, and a
/// slot of 8 bytes keeps the table small.
package struct ByteKeyTable {
  /// Per slot: the hash in the high half (never 0), the number in the low; 0 is empty.
  private var slots: [UInt64]
  private(set) var count = 0

  /// Room for `capacity` keys before the table grows.
  package init(capacity: Int = 0) {
    var size = 16
    while size * 3 < capacity * 4 { size <<= 1 }
    slots = Array(repeating: 0, count: size)
  }

  /// The seeded hash of `key`, as the table keeps it.
  package static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt32 {
    var h = Hasher()
    h.combine(bytes: UnsafeRawBufferPointer(key))
    return UInt32(truncatingIfNeeded: h.finalize()) | 1
  }

  /// The number of the key whose hash is `hash` and for which `isKey` is true.
  package func find(hash: UInt32, isKey: (Int) -> Bool) -> Int? { probe(hash, isKey).found }

  /// Where the key lies (its number), or the empty slot where it would go.
  private func probe(_ hash: UInt32, _ isKey: (Int) -> Bool) -> (slot: Int, found: Int?) {
    let mask = slots.count - 1
    var i = Int(hash) & mask
    while slots[i] != 0 {
      let number = Int(UInt32(truncatingIfNeeded: slots[i]))
      if UInt32(slots[i] >> 32) == hash && isKey(number) { return (i, number) }
      i = (i + 1) & mask
    }
    return (i, nil)
  }

  /// The number of the key `isKey` names, when the table holds it; else
  /// `number` is kept for the key and nil returned (one probe either way).
  package mutating func findOrInsert(hash: UInt32, number: Int, isKey: (Int) -> Bool) -> Int? {
    if (count + 1) * 4 > slots.count * 3 { grow() }
    let (slot, found) = probe(hash, isKey)
    if let found { return found }
    precondition(number >= 0 && number <= Int(UInt32.max), "a ByteKeyTable numbers keys in 32 bits")
    slots[slot] = UInt64(hash) << 32 | UInt64(number)
    count += 1
    return nil
  }

  /// Adds a key the table does not hold (`find` returned nil); `number` fits in 32 bits.
  package mutating func insert(hash: UInt32, number: Int) {
    _ = findOrInsert(hash: hash, number: number) { _ in false }
  }

  /// Twice the slots, each key placed again by its kept hash.
  private mutating func grow() {
    var bigger = ByteKeyTable()
    bigger.slots = Array(repeating: 0, count: slots.count * 2)
    for s in slots where s != 0 { bigger.insert(hash: UInt32(s >> 32), number: Int(UInt32(truncatingIfNeeded: s))) }
    self = bigger
  }
}
