/// SplitMix64 (Steele, Lea and Flood, 2014): a small seeded generator, so
/// that jitter repeats for a given seed. The one copy of its constants.
package struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
  private(set) var state: UInt64

  package init(seed: UInt64) { state = seed }

  /// The output for step `n` after `seed`, without stepping through the ones before.
  package static func output(seed: UInt64, step n: UInt64) -> UInt64 {
    mixed(seed &+ n &* 0x9E37_79B9_7F4A_7C15)
  }

  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    return Self.mixed(state)
  }

  /// A number in 0..<1.
  package mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }

  private static func mixed(_ x: UInt64) -> UInt64 {
    var z = x
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
