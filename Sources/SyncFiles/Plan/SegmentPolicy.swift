/// How many byte ranges a file is fetched in (SPEC §8.3, §9.1): the one
/// home of the rule that `auto` means 4 ranges for 64 MiB or more.
public enum SegmentPolicy {
  /// Ranges under `auto` for a large file.
  public static let autoRanges = 4
  /// The size from which `auto` fetches in ranges.
  public static let autoThreshold: Int64 = 64 << 20

  /// What an entry asks for before any answer: `segments` as written
  /// (nil: `auto`), or under `auto` `autoRanges` when it expects at least
  /// `autoThreshold` bytes. Nil when only the size an answer names will tell.
  /// Through a proxy `auto` is one stream: a cache may answer a range with
  /// the whole file (SPEC §9.3).
  public static func asked(segments: Int?, expectedBytes: Int64?, throughProxy: Bool = false) -> Int? {
    if let segments { return segments }
    if throughProxy { return 1 }
    return (expectedBytes ?? 0) >= autoThreshold ? autoRanges : nil
  }

  /// What `plan`, the report and `--verbose` say of a file that `auto`
  /// would fetch in ranges but that goes through a proxy.
  public static let proxyNote =
    "one stream through the proxy (a cache may answer ranges with the whole file; set segments to ask for ranges)"

  /// True when `auto` fetched a file of `total` bytes as one stream only
  /// because it went through a proxy.
  public static func keptWholeByProxy(segments: Int?, throughProxy: Bool, total: Int64?) -> Bool {
    segments == nil && throughProxy && (total ?? 0) >= autoThreshold
  }

  /// Under `auto`, the ranges for a file of `total` bytes.
  public static func forSize(_ total: Int64) -> Int { total >= autoThreshold ? autoRanges : 1 }
}
