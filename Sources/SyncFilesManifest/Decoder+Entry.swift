import SyncFilesCore

/// A file entry made from its keys merged over `defaults`, with the rules
/// that involve several keys.
extension ManifestDecoder {
  /// Checks the merged keys of one entry and builds it.
  package mutating func makeEntry(_ f: FileFields, item: YAMLNode, manifest: Manifest) -> FileEntry? {
    let missing = FileKeySpec.table.filter { $0.required && f.marks[$0.key] == nil }.map(\.name)
    if !missing.isEmpty {
      let label = f.id.map { "file entry '\($0)'" } ?? "file entry"
      error(
        item.mark,
        "\(label) is missing required key\(missing.count > 1 ? "s" : "") \(missing.map { "'\($0)'" }.joined(separator: ", "))"
      )
      return nil
    }
    guard let id = f.id, let url = f.url, let dest = f.destination else { return nil }
    guard let relative = confined(dest, url: url, root: manifest.root) else { return nil }
    // Normal as it stands: the root is, and a confined destination has no
    // empty, `.` or `..` component.
    let path = String(manifest.root, manifest.root == "/" ? nil : UInt8(ascii: "/"), relative)
    let qualifiedID = String(manifest.name, UInt8(ascii: "/"), id)
    var entry = FileEntry.Values(
      qualifiedID: qualifiedID, idStart: qualifiedID.utf8.count - id.utf8.count, url: url, destinationPath: path,
      destinationStart: path.utf8.count - relative.utf8.count, mark: item.mark, destinationMark: dest.mark)
    entry.expectedBytes = f.expectedBytes
    entry.sha256 = f.sha256
    entry.notBefore = f.notBefore
    // An entry that sets no option, nor do its defaults, keeps the default
    // options' box: none is built and compared.
    checkPrefixKeys(f, url: url, item: item)
    if f.setsOptions || url.namesPrefix {
      entry.options = entryOptions(f, item: item, manifest: manifest, url: url)
    }
    let o = entry.options.value
    if let n = o.segments, let cap = manifest.limits.segments, n > cap {
      warning(
        f.marks[.segments] ?? item.mark,
        "segments: \(n) asks for more ranges than limits.segments (\(cap)) lets run at once: this file gets \(cap) connections"
      )
    }
    checkTrust(o, url: url, marks: f.marks)
    if (url.scheme == "http" || url.scheme == "https") && entry.sha256 == nil && o.isUnbounded {
      warning(f.marks[.url] ?? item.mark) {
        "nothing bounds or verifies what '\(id)' installs: add sha256, or at least max_bytes"
      }
    }
    return FileEntry(entry)
  }

  /// The destination, relative to root and confined to it; nil after an error.
  mutating func confined(_ dest: (relative: String, mark: SourceMark), url: SourceURL, root: String) -> String? {
    // A prefix's destination is a folder, and may be written as one (`models/`).
    var written = dest.relative
    if url.namesPrefix {
      while written.count > 1 && written.hasSuffix("/") { written.removeLast() }
    }
    switch Paths.confine(destination: written, root: root) {
    case .success(let r) where r.split(separator: "/").contains(".syncfiles-versions"):
      error(dest.mark, "destination '\(written)' lies in .syncfiles-versions, the folder syncfiles keeps old versions in")
      return nil
    case .success(let r): return r
    case .failure(let e):
      error(dest.mark, e.message)
      return nil
    }
  }

  /// A checksum list named somewhere (the entry or `defaults`), and one that
  /// nothing signs over plain http (SPEC §10.2).
  mutating func checkTrust(_ o: EntryOptions, url: SourceURL, marks: KeyedFields<SourceMark>) {
    // A path beside the file's url needs a url a list can be fetched beside.
    if !["http", "https", "file"].contains(url.scheme) {
      for (key, location) in [(FileKey.checksums, o.checksums?.list), (.signature, o.signature?.url)] {
        if case .relative(let path)? = location {
          error(
            marks[key],
            "\(key.name).url '\(path)' is a path beside the file's url, and \(url.scheme):// urls have none; give an https URL"
          )
        }
      }
    }
    guard let c = o.checksums else { return }
    let mark = marks[.checksums]
    guard c.ownURL else {
      error(mark, "checksums needs url: the checksum list (SHA256SUMS, or its URL)")
      return
    }
    let scheme: String
    switch c.list {
    case .url(let u): scheme = u.scheme
    case .relative: scheme = url.scheme
    }
    if scheme == "http" && c.signature == nil && c.keyring == nil {
      warning(mark) {
        "the checksum list travels over plain http with no signature: anyone on the path can change the list and the file together; add signature and keyring, or use https"
      }
    }
  }

  /// The options of an entry that sets some (or whose defaults do), checked,
  /// in the box of a recent entry's equal options when there is one.
  package mutating func entryOptions(_ f: FileFields, item: YAMLNode, manifest: Manifest, url: SourceURL)
    -> SharedValue<EntryOptions>
  {
    let retry = RetryPolicy(
      attempts: f.attempts ?? RetryPolicy().attempts, backoff: f.backoff ?? RetryPolicy().backoff,
      maxBackoff: f.maxBackoff ?? RetryPolicy().maxBackoff)
    if retry.maxBackoff < retry.backoff {
      error(
        f.maxBackoffMark ?? f.marks[.retry],
        "retry.max_backoff (\(retry.maxBackoff)) is shorter than retry.backoff (\(retry.backoff))")
    }
    var timeout = Timeouts()
    if let c = f.connect { timeout.connect = c }
    if let s = f.stall { timeout.stall = s }
    if let e = f.expectedBytes, let m = f.maxBytes, e > m {
      error(
        f.marks[.expectedBytes] ?? item.mark,
        "expected_bytes (\(ByteSize.format(e))) is larger than max_bytes (\(ByteSize.format(m))): every transfer would be aborted"
      )
    }
    if url.scheme == "http", f.headers?.contains(where: { $0.name.lowercased().contains("auth") }) == true {
      warning(f.marks[.headers] ?? item.mark, "credentials in headers would travel over plain http; use https")
    }
    var o = options(f, retry: retry, timeout: timeout)
    if url.namesPrefix {
      o.prefix = PrefixOptions(include: f.include ?? [], exclude: f.exclude ?? [], prune: f.prune ?? false)
      o.prefix?.pruneMax = f.pruneMax ?? .default
    }
    checkNetwork(o.network, marks: f.marks)
    if o.discretionary && manifest.conditions.isEmpty {
      warning(
        f.marks[.discretionary] ?? item.mark,
        "discretionary has no effect: this manifest sets no conditions (window, ac_power)")
    }
    return shared(o)
  }

  /// A prefix takes `include`, `exclude` and `prune`, and no key that names
  /// one file; any other entry takes none of those three.
  package mutating func checkPrefixKeys(_ f: FileFields, url: SourceURL, item: YAMLNode) {
    if url.namesPrefix {
      for k in [FileKey.sha256, .mirrors] where f.marks[k] != nil {
        error(
          f.marks[k]!,
          "\(k.name) names one file, and \(url) is a prefix (its url ends in /) of many; check its objects with verify, or list them one by one"
        )
      }
      return
    }
    for k in f.marks.keys where k.spec.scope == .prefix {
      error(
        f.marks[k],
        "\(k.name) applies to a prefix, an s3 url ending in / (s3://bucket/models/); \(url) names one file")
    }
  }

  /// The options an entry rarely sets for itself, from its merged keys.
  package func options(_ f: FileFields, retry: RetryPolicy, timeout: Timeouts) -> EntryOptions {
    var o = EntryOptions()
    o.retry = retry
    o.timeout = timeout
    o.mirrors = f.mirrors ?? []
    o.maxBytes = f.maxBytes
    o.schedule = f.schedule ?? .always
    o.discretionary = f.discretionary ?? false
    o.segments = f.segments.flatMap { $0 == 0 ? nil : $0 }
    o.cacheMaxAge = f.cacheMaxAge ?? TimeSpan(seconds: 0)
    o.rate = f.rate
    o.checksums = f.checksums
    o.keepVersions = f.keepVersions ?? 0
    o.signature = f.signature
    o.headers = f.headers ?? []
    o.mode = f.mode
    o.onChange = f.onChange
    o.verify = f.verify ?? []
    o.network.tls = f.tls ?? TLSOptions()
    o.network.proxy = f.proxy
    o.network.netrc = f.netrc
    o.network.s3 = f.s3 ?? S3Options()
    return o
  }

  /// The box of a recent entry's options when these are equal, else a new
  /// one (the eight last kept, the most recent first).
  package mutating func shared(_ o: EntryOptions) -> SharedValue<EntryOptions> {
    if let i = recentOptions.firstIndex(where: { $0.value == o }) { return recentOptions[i] }
    let box = SharedValue(o)
    if recentOptions.count == 8 { recentOptions.removeLast() }
    recentOptions.insert(box, at: 0)
    return box
  }

  mutating func fileWarnings(_ m: Manifest, missingExpected: [SourceMark], filesMark: SourceMark) {
    let shown = 10
    for mark in missingExpected.prefix(shown) {
      warning(mark, "no expected_bytes: plan totals, ETA and the disk preflight cannot count this file")
    }
    if missingExpected.count > shown {
      warning(
        filesMark,
        "\(missingExpected.count - shown) more files have no expected_bytes (\(missingExpected.count) in all)")
    }
    // By index: iterating would copy every entry.
    var tiny = 0
    var anyDiscretionary = false
    for i in m.files.indices {
      if (m.files[i].expectedBytes ?? .max) <= 64 * 1024 { tiny += 1 }
      if m.files[i].discretionary { anyDiscretionary = true }
    }
    if tiny >= 1000 {
      warning(
        filesMark,
        "\(tiny) files of at most 64 KiB in one manifest: each costs a request, a sync and a rename; consider serving them as one archive"
      )
    }
    if !m.conditions.isEmpty && !anyDiscretionary && !m.files.isEmpty {
      warning(nil, "conditions are set but no file is discretionary, so they hold nothing back")
    }
  }
}
