/// A hash table of byte strings that live elsewhere, looked up by their bytes
/// with no `String` made: a slot keeps a key's hash and a number that names
/// the key to its owner, who compares the bytes when hashes are equal. The
/// session check looks up every destination and its folders this way (W5:
/// 100,000 destinations, and a `String` made for each folder cost more than
/// the lookups).
struct ByteKeyTable {
  /// Per slot: the key's hash with its low bit set (0: empty), and its number.
  private var hashes: [Int]
  private var numbers: [Int]
  private(set) var count = 0

  init(capacity: Int = 0) {
    var size = 16
    while size < capacity * 2 { size <<= 1 }
    hashes = Array(repeating: 0, count: size)
    numbers = Array(repeating: 0, count: size)
  }

  /// The seeded hash of `key`, as the table keeps it.
  static func hash(_ key: UnsafeBufferPointer<UInt8>) -> Int {
    var h = Hasher()
    h.combine(bytes: UnsafeRawBufferPointer(key))
    return h.finalize() | 1
  }

  /// The number of the key whose hash is `hash` and for which `isKey` is true.
  func find(hash: Int, isKey: (Int) -> Bool) -> Int? {
    let mask = hashes.count - 1
    var i = hash & mask
    while hashes[i] != 0 {
      if hashes[i] == hash && isKey(numbers[i]) { return numbers[i] }
      i = (i + 1) & mask
    }
    return nil
  }

  /// Adds a key the table does not hold (`find` returned nil).
  mutating func insert(hash: Int, number: Int) {
    if (count + 1) * 2 > hashes.count { grow() }
    let mask = hashes.count - 1
    var i = hash & mask
    while hashes[i] != 0 { i = (i + 1) & mask }
    hashes[i] = hash
    numbers[i] = number
    count += 1
  }

  /// Twice the slots, each key placed again by its kept hash.
  private mutating func grow() {
    var bigger = ByteKeyTable(capacity: hashes.count)
    for i in hashes.indices where hashes[i] != 0 { bigger.insert(hash: hashes[i], number: numbers[i]) }
    self = bigger
  }
}
