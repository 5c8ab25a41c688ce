import SyncFilesCore
/// File keys as written in one entry or in `defaults`, before merging.
/// Mapping-valued keys (`retry`, `timeout`, `headers`) merge key by key.
struct FileFields {
  var id: String?
  var url: SourceURL?
  var mirrors: [SourceURL]?
  var destination: (relative: String, mark: SourceMark)?
  var expectedBytes: Int64?
  var maxBytes: Int64?
  var sha256: String?
  var schedule: Schedule?
  var notBefore: Timestamp?
  var discretionary: Bool?
  var headers: [Header]?
  var mode: UInt32?
  var attempts: Int?
  var backoff: TimeSpan?
  var maxBackoff: TimeSpan?
  var connect: TimeSpan?
  var stall: TimeSpan?
  var onChange: [String]?
  var verify: [VerifySpec]?
  var tls: TLSOptions?
  var proxy: ProxySetting?
  var netrc: NetrcSetting?
  var s3: S3Options?
  /// `segments`: 0 stands for `auto`.
  var segments: Int?
  var cacheMaxAge: TimeSpan?
  /// `rate`: bytes per second.
  var rate: Int64?
  /// A prefix's selection and pruning (never from `defaults`).
  var include: [String]?
  var exclude: [String]?
  var prune: Bool?
  /// How much one run's prune may remove (entry or `defaults`).
  var pruneMax: PruneLimit?
  /// `retry.max_backoff`'s place, for the error that compares it with `backoff`.
  var maxBackoffMark: SourceMark?
  /// Where each key was written, for errors that involve two keys.
  var marks = KeyedFields<SourceMark>()
  /// Whether a key that makes the entry's options is set (`FileKeySpec.makesOptions`):
  /// an entry without one keeps the default options.
  var setsOptions = false

  /// `self` over `defaults`: each key `defaults` sets merges as its declaration says.
  func over(_ d: FileFields) -> FileFields {
    var r = self
    d.marks.forEach { key, mark in
      key.spec.merge(&r, d)
      if r.marks[key] == nil { r.marks.append(new: key, mark) }
    }
    r.maxBackoffMark = maxBackoffMark ?? d.maxBackoffMark
    r.setsOptions = setsOptions || d.setsOptions
    return r
  }
}
