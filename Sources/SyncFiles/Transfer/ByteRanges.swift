/// Which bytes of a file are held: sorted, disjoint, merged half-open ranges.
/// The arithmetic of segmented transfers (SPEC §8.3), kept apart from libcurl
/// so that every rule is a unit test: what is missing, where the hashed
/// prefix ends, how a file is split and how a range is stolen.
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

  /// Splits `gaps` into at most `count` ranges, none shorter than `minimum`
  /// (unless a gap itself is): the largest gap is halved until there are
  /// enough, so the work is spread as evenly as the gaps allow.
  public static func split(_ gaps: [Range<Int64>], into count: Int, minimum: Int64) -> [Range<Int64>] {
    var parts = gaps.filter { !$0.isEmpty }
    while parts.count < count {
      guard let (i, widest) = parts.enumerated().max(by: { $0.1.count < $1.1.count }).map({ ($0.0, $0.1) }),
        widest.count >= 2 * minimum
      else { break }
      let mid = midpoint(widest)
      parts[i] = widest.lowerBound..<mid
      parts.insert(mid..<widest.upperBound, at: i + 1)
    }
    return parts
  }

  /// Where a range still to be received is cut in two for work stealing:
  /// nil when either half would be shorter than `minimum` (aria2's `-k`),
  /// or when its own connection, at `bytesPerSecond`, would receive the rest
  /// within `minimumSeconds`. A cut closes that connection when it gets
  /// there, and what the server had already sent past the cut is lost
  /// (measured on loopback: 7 to 8 MB a cut); a steal must save more than that.
  public static func stealPoint(
    _ remaining: Range<Int64>, minimum: Int64, bytesPerSecond: Double? = nil, minimumSeconds: Double = 0
  ) -> Int64? {
    guard remaining.count >= 2 * minimum else { return nil }
    if let rate = bytesPerSecond, rate > 0, Double(remaining.count) / rate < minimumSeconds { return nil }
    return midpoint(remaining)
  }

  /// The middle of `r`, on a 4 KiB boundary when the range allows, so that
  /// ranges meet where file system blocks do.
  static func midpoint(_ r: Range<Int64>) -> Int64 {
    let mid = r.lowerBound + (r.upperBound - r.lowerBound) / 2
    let aligned = mid & ~4095
    return aligned > r.lowerBound ? aligned : mid
  }
}

extension Range where Bound == Int64 {
  var count: Int64 { upperBound - lowerBound }
}
