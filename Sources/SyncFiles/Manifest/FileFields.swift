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
  /// A prefix's selection and pruning (never from `defaults`).
  var include: [String]?
  var exclude: [String]?
  var prune: Bool?
  /// How much one run's prune may remove (entry or `defaults`).
  var pruneMax: PruneLimit?
  /// Where each key was written, for errors that involve two keys.
  var marks = Fields<SourceMark>()

  /// `self` over `defaults`.
  func over(_ d: FileFields) -> FileFields {
    var r = self
    r.expectedBytes = expectedBytes ?? d.expectedBytes
    r.maxBytes = maxBytes ?? d.maxBytes
    r.schedule = schedule ?? d.schedule
    r.notBefore = notBefore ?? d.notBefore
    r.discretionary = discretionary ?? d.discretionary
    r.mode = mode ?? d.mode
    r.attempts = attempts ?? d.attempts
    r.backoff = backoff ?? d.backoff
    r.maxBackoff = maxBackoff ?? d.maxBackoff
    r.connect = connect ?? d.connect
    r.stall = stall ?? d.stall
    r.onChange = onChange ?? d.onChange
    r.verify = verify ?? d.verify
    r.proxy = proxy ?? d.proxy
    r.netrc = netrc ?? d.netrc
    r.segments = segments ?? d.segments
    r.cacheMaxAge = cacheMaxAge ?? d.cacheMaxAge
    r.pruneMax = pruneMax ?? d.pruneMax
    // Mappings merge key by key.
    if let ds = d.s3 { r.s3 = (s3 ?? S3Options()).over(ds) }
    if let dt = d.tls { r.tls = (tls ?? TLSOptions()).over(dt) }
    if let dh = d.headers {
      let own = Set((headers ?? []).map { $0.name.lowercased() })
      r.headers = (headers ?? []) + dh.filter { !own.contains($0.name.lowercased()) }
    }
    for (k, v) in d.marks where r.marks[k] == nil { r.marks[k] = v }
    return r
  }
}
