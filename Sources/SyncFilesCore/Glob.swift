/// A glob over an object's key below its prefix, as `include` and
/// `exclude` write them (rclone's filter rules, which users of object
/// storage know): `*` is any run of characters but `/`, `**` any run
/// including `/` (`**/` also matches nothing, so `**/x.bin` matches
/// `x.bin`), `?` one character but `/`, `[abc]`, `[a-z]` and `[!a]` one
/// character of a class. Every other character matches itself.
public struct Glob: Sendable, Hashable {
  public let pattern: String
  private let p: [UInt8]

  public init(_ pattern: String) {
    self.pattern = pattern
    p = Array(pattern.utf8)
  }

  public func matches(_ key: String) -> Bool {
    Self.match(p[...], Array(key.utf8)[...])
  }

  /// Whether any of `globs` matches `key`.
  public static func any(_ globs: [Glob], _ key: String) -> Bool { globs.contains { $0.matches(key) } }

  private static let star = UInt8(ascii: "*")
  private static let slash = UInt8(ascii: "/")

  private static func match(_ p: ArraySlice<UInt8>, _ s: ArraySlice<UInt8>) -> Bool {
    var p = p
    var s = s
    while let c = p.first {
      if c == star {
        let double = p.dropFirst().first == star
        var rest = p.dropFirst(double ? 2 : 1)
        if double && rest.first == slash && match(rest.dropFirst(), s) { return true }
        if double { rest = rest.drop { $0 == star } }
        // The star takes 0, 1, … characters (never a `/` for a single one).
        var t = s
        while true {
          if match(rest, t) { return true }
          guard let next = t.first, double || next != slash else { return false }
          t = t.dropFirst()
        }
      }
      guard let b = s.first else { return false }
      if c == UInt8(ascii: "?") {
        guard b != slash else { return false }
        p = p.dropFirst()
      } else if c == UInt8(ascii: "["), let (inClass, after) = classMatch(p.dropFirst(), b) {
        guard inClass, b != slash else { return false }
        p = after
      } else {
        guard b == c else { return false }
        p = p.dropFirst()
      }
      s = s.dropFirst()
    }
    return s.isEmpty
  }

  /// `[…]` after its `[`: whether `b` is in the class, and the pattern
  /// after its `]`; nil when there is no `]` (the `[` is then itself).
  private static func classMatch(_ p: ArraySlice<UInt8>, _ b: UInt8) -> (Bool, ArraySlice<UInt8>)? {
    var q = p
    let negated = q.first == UInt8(ascii: "!") || q.first == UInt8(ascii: "^")
    if negated { q = q.dropFirst() }
    var found = false
    var first = true
    while let c = q.first {
      if c == UInt8(ascii: "]") && !first { return (found != negated, q.dropFirst()) }
      first = false
      let rest = q.dropFirst()
      if rest.first == UInt8(ascii: "-"), let hi = rest.dropFirst().first, hi != UInt8(ascii: "]") {
        if c <= b && b <= hi { found = true }
        q = rest.dropFirst(2)
      } else {
        if c == b { found = true }
        q = rest
      }
    }
    return nil
  }
}
