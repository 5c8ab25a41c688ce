/// Which bytes of a file are held: sorted, disjoint, merged half-open ranges.
/// The arithmetic of segmented transfers (SPEC §8.3), kept apart from libcurl
/// so that every rule is a unit test: what is missing, where the hashed
/// prefix ends, and how a file is cut into pieces.
public struct ByteRanges: Sendable, Hashable {
  public private(set) var ranges: [Range<Int64>] = []

  public init() {}

  public init(_ list: [Range<Int64>]) {
    for r in list { insert(r) }
  }

  /// Adds `r`, merging it with the ranges it touches or overlaps.
  public mutating func insert(_ r: Range<Int64>) {
    guard !r.isEmpty else { return }
    var lower = r.lowerBound
    var upper = r.upperBound
    var kept: [Range<Int64>] = []
    kept.reserveCapacity(ranges.count + 1)
    for x in ranges {
      if x.upperBound < lower || x.lowerBound > upper {
        kept.append(x)
      } else {
        lower = min(lower, x.lowerBound)
        upper = max(upper, x.upperBound)
      }
    }
    kept.append(lower..<upper)
    ranges = kept.sorted { $0.lowerBound < $1.lowerBound }
  }

  /// Bytes held.
  public var count: Int64 { ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } }

  /// Where the bytes held from 0 on end: everything before it is held.
  public var prefix: Int64 {
    guard let first = ranges.first, first.lowerBound == 0 else { return 0 }
    return first.upperBound
  }

  /// The gaps in `0..<total`.
  public func missing(total: Int64) -> [Range<Int64>] {
    var gaps: [Range<Int64>] = []
    var at: Int64 = 0
    for r in ranges where r.lowerBound < total {
      if r.lowerBound > at { gaps.append(at..<r.lowerBound) }
      at = max(at, r.upperBound)
    }
    if at < total { gaps.append(at..<total) }
    return gaps
  }

  public func covers(total: Int64) -> Bool { missing(total: total).isEmpty }

  /// The size of the pieces a file of `total` bytes is asked for in, with
  /// `ranges` connections at once: 16 MiB, or less so that each connection
  /// gets two at least, never below `minimum`, on a 64 KiB boundary.
  public static func pieceSize(total: Int64, ranges: Int, minimum: Int64) -> Int64 {
    let share = total / Int64(max(1, 2 * ranges))
    return max(minimum, min(16 << 20, share) & ~0xFFFF)
  }

  /// `gaps` cut, in order, into pieces of `size` (a gap's last piece is
  /// between half a piece and one and a half, unless the gap itself is shorter).
  /// Connections take the pieces in turn, so the bytes complete from the
  /// start of the file on and the hashing, which needs them in order, keeps
  /// up (a 1 GiB file: with one share per connection, three quarters of a
  /// 1 GiB file waited to be hashed after its last byte).
  public static func pieces(_ gaps: [Range<Int64>], size: Int64) -> [Range<Int64>] {
    var out: [Range<Int64>] = []
    for gap in gaps where !gap.isEmpty {
      var at = gap.lowerBound
      while gap.upperBound - at >= size + size / 2 {
        out.append(at..<(at + size))
        at += size
      }
      out.append(at..<gap.upperBound)
    }
    return out
  }
}

extension Range where Bound == Int64 {
  package var count: Int64 { upperBound - lowerBound }
}
