import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// How many byte ranges a file is fetched in (SPEC §8.3, §9.1), and whether
/// a partial fetched in ranges can be continued: the one home of the rule
/// that `auto` means 4 ranges for 64 MiB or more.
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

  /// Whether a segmented partial of `fileSize` bytes can be continued from
  /// the ranges it holds: it is as long as the whole file (its ranges are
  /// written in place) and holds some of it, none past its end. The planner
  /// asks from the journal, the runner again when it reopens the file.
  public static func rangesUsable(_ ranges: ByteRanges, total: Int64?, fileSize: Int64) -> Bool {
    guard let total, fileSize == total, ranges.count > 0 else { return false }
    return (ranges.ranges.last?.upperBound ?? 0) <= total
  }

  /// Under `auto`, the ranges for a file of `total` bytes.
  public static func forSize(_ total: Int64) -> Int { total >= autoThreshold ? autoRanges : 1 }
}
