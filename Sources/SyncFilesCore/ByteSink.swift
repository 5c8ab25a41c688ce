/// Where the byte writers (JSON text, RFC 3339 times, decimal and hex
/// digits) put what they make: a growing array, or a cursor into room sized
/// beforehand. The journal's records take the cursor: appending to an array
/// checks its uniqueness and capacity at every byte, and a steady run writes
/// a record of about 400 bytes for every task.
package protocol ByteSink {
  mutating func put(_ b: UInt8)
  mutating func put(_ bytes: UnsafeBufferPointer<UInt8>)
}

extension ByteSink {
  package mutating func put(_ s: StaticString) {
    put(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
  }
}

extension Array: ByteSink where Element == UInt8 {
  package mutating func put(_ b: UInt8) { append(b) }
  package mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
}

/// Writes through a pointer into room its user sized beforehand. Writing past
/// that room stops the program (a wrong bound is a bug, never a corruption).
package struct ByteCursor: ByteSink {
  package let room: UnsafeMutableBufferPointer<UInt8>
  package private(set) var count = 0

  package init(_ room: UnsafeMutableBufferPointer<UInt8>) { self.room = room }

  package mutating func put(_ b: UInt8) {
    precondition(count < room.count, "ByteCursor: the room sized beforehand is full")
    room[count] = b
    count += 1
  }

  package mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let from = bytes.baseAddress, let to = room.baseAddress, !bytes.isEmpty else { return }
    precondition(bytes.count <= room.count - count, "ByteCursor: the room sized beforehand is full")
    (to + count).update(from: from, count: bytes.count)
    count += bytes.count
  }
}
