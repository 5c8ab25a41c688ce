import SyncFilesCore

/// File keys as written in one entry or in `defaults`, before merging.
/// Mapping-valued keys (`retry`, `timeout`, `headers`) merge key by key.
package struct FileFields {
  package var id: String?
  package var url: SourceURL?
  package var mirrors: [SourceURL]?
  package var destination: (relative: String, mark: SourceMark)?
  package var expectedBytes: Int64?
  package var maxBytes: Int64?
  package var sha256: String?
  package var checksums: ChecksumSource?
  package var signature: FileSignature?
  package var schedule: Schedule?
  package var notBefore: Timestamp?
  package var discretionary: Bool?
  package var headers: [Header]?
  package var mode: UInt32?
  package var attempts: Int?
  package var backoff: TimeSpan?
  package var maxBackoff: TimeSpan?
  package var connect: TimeSpan?
  package var stall: TimeSpan?
  package var onChange: [String]?
  package var verify: [VerifySpec]?
  package var tls: TLSOptions?
  package var proxy: ProxySetting?
  package var netrc: NetrcSetting?
  package var s3: S3Options?
  /// `segments`: 0 stands for `auto`.
  package var segments: Int?
  package var cacheMaxAge: TimeSpan?
  /// `rate`: bytes per second.
  package var rate: Int64?
  /// `keep_versions`: earlier versions kept beside the destination.
  package var keepVersions: Int?
  /// A prefix's selection and pruning (never from `defaults`).
  package var include: [String]?
  package var exclude: [String]?
  package var prune: Bool?
  /// How much one run's prune may remove (entry or `defaults`).
  package var pruneMax: PruneLimit?
  /// `retry.max_backoff`'s place, for the error that compares it with `backoff`.
  package var maxBackoffMark: SourceMark?
  /// Where each key was written, for errors that involve two keys.
  package var marks = KeyedFields<SourceMark>()
  /// Whether a key that makes the entry's options is set (`FileKeySpec.makesOptions`):
  /// an entry without one keeps the default options.
  package var setsOptions = false

  /// `self` over `defaults`: each key `defaults` sets merges as its declaration says.
  package func over(_ d: FileFields) -> FileFields {
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
