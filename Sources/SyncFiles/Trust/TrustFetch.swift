import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// One checksum list or signature to fetch, with the network rules of the
/// entry that names it (SPEC §10.2): its TLS, proxy and netrc, and its
/// headers only to its own url's origin.
struct TrustFetch: Sendable {
  var url: String
  /// The url as shown, secrets masked.
  var display: String
  var entryURL: String
  var headers: [String]
  var network: NetworkOptions
  var secrets: Secrets
  var retry: RetryPolicy
  var connectTimeout: TimeSpan

  /// The bytes, and how they came: a 200, or a 304 over the copy kept.
  struct Fetched: Sendable {
    var bytes: [UInt8]
    var status: Int
    var requests: Int
  }

  /// Lists and signatures are small: a larger answer is refused.
  static let limit = 16 << 20

  /// Fetches, conditionally over the copy kept in `folder`, following
  /// redirects, retried as a transfer is (the entry's `retry`); keeps a
  /// new copy durably. The error is in a user's words.
  /// `pause` waits out a retry's backoff; false when the run stops meanwhile.
  func run(
    keptIn folder: String?, environment: NetworkEnvironment, verbose: (@Sendable (String) -> Void)?,
    pause: (Double) -> Bool
  ) -> Result<Fetched, TrustFailure> {
    let kept = folder.flatMap { KeptCopy.read(folder: $0, url: url) }
    var options = SmallGet.Options(network: network, environment: environment, connectTimeout: connectTimeout)
    options.limit = Self.limit
    options.verbose = verbose
    options.entryURL = entryURL
    options.id = display
    if let v = kept?.validators { options.conditions = v.conditionLines }
    var why = ""
    var retryAfter: Double? = nil
    var requests = 0
    for attempt in 0..<max(1, retry.attempts) {
      if attempt > 0 {
        let delay = retry.delay(beforeRetry: attempt, retryAfter: retryAfter, unit: Double.random(in: 0..<1))
        verbose?("\(display): \(why); retry \(attempt) of \(retry.attempts - 1) in \(delay)s")
        guard pause(delay) else { return .failure(.stopped(url: display)) }
      }
      switch follow(options: options, requests: &requests) {
      case .success(let a) where a.status == 304 && kept != nil:
        return .success(Fetched(bytes: kept!.bytes, status: 304, requests: requests))
      case .success(let a) where a.status == 200 || (a.status == 0 && url.hasPrefix("file:")):
        if let folder { KeptCopy(bytes: a.body, validators: a.validators).write(folder: folder, url: url) }
        return .success(Fetched(bytes: a.body, status: 200, requests: requests))
      case .success(let a):
        why = "HTTP \(a.status)"
        retryAfter = a.retryAfter
        if !TransferOutcome.isTransient(status: a.status) { break }
        continue
      case .failure(let f):
        why = f.message
        retryAfter = nil
        if !f.retryable { break }
        continue
      }
      break
    }
    return .failure(.fetch(url: display, why: why))
  }

  /// One GET and the redirects it leads to.
  private func follow(options: SmallGet.Options, requests: inout Int) -> Result<SmallGet.Answer, FetchFailure> {
    var target = url
    var hops = 0
    while true {
      requests += 1
      let t = SignedTarget(url: target, signing: .unsigned, headers: headers, secrets: secrets)
      switch SmallGet.fetch(t, options: options) {
      case .failure(let e): return .failure(FetchFailure(message: e.message, retryable: e.isRetryable))
      case .success(let a):
        switch Redirect.decide(status: a.status, location: a.location, hops: hops) {
        case .follow(let next)?:
          target = next
          hops += 1
        case .refuse(let why)?: return .failure(FetchFailure(message: why, retryable: false))
        case nil: return .success(a)
        }
      }
    }
  }

  struct FetchFailure: Error {
    var message: String
    var retryable: Bool
  }
}

/// The last copy of a list or signature, kept beside the journal so that
/// an unchanged one costs a 304 on the next run. Only its bytes are kept,
/// never a verdict: each use verifies them again. Named by a digest of its
/// url, which may carry secrets.
struct KeptCopy {
  var bytes: [UInt8]
  var validators: Validators?

  static func path(folder: String, url: String) -> String {
    let h = SHA256Hasher()
    h.update(Array(url.utf8))
    return folder + "/" + String((h.finish() ?? "unnamed").prefix(32))
  }

  /// Header lines (`etag:`, `last-modified:`, `length:`), a blank line, the bytes.
  static func read(folder: String, url: String) -> KeptCopy? {
    guard case .success(let all) = FileIO.readAll(path(folder: folder, url: url), limit: TrustFetch.limit + 4096),
      let blank = all.firstRange(of: [0x0A, 0x0A])
    else { return nil }
    var fields: [String: String] = [:]
    for line in String(decoding: all[..<blank.lowerBound], as: UTF8.self).split(separator: "\n") {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingSpaces()
    }
    let body = Array(all[blank.upperBound...])
    guard fields["syncfiles-kept"] == "1", fields["length"] == "\(body.count)" else { return nil }
    let v = Validators(etag: fields["etag"], lastModified: fields["last-modified"], date: nil)
    return KeptCopy(bytes: body, validators: v.etag == nil && v.lastModified == nil ? nil : v)
  }

  /// Written whole to a new file, synced, then renamed over the last: a
  /// crash leaves the old copy or the new one. A failure only costs a full
  /// fetch next time.
  func write(folder: String, url: String) {
    guard FileIO.makeFolders(folder) else { return }
    var head = "syncfiles-kept: 1\nlength: \(bytes.count)\n"
    if let e = validators?.etag { head += "etag: \(e)\n" }
    if let m = validators?.lastModified { head += "last-modified: \(m)\n" }
    let final = Self.path(folder: folder, url: url)
    guard FileIO.replaceWhole(final, with: Array((head + "\n").utf8) + bytes, mode: 0o600, durable: true) == nil
    else { return }
    JournalWriter.syncFolder(of: final)
  }

}

extension Validators {
  /// The request lines that ask whether this version is still current.
  var conditionLines: [String] {
    var out: [String] = []
    if let e = etag { out.append("If-None-Match: \(e)") }
    if let m = lastModified { out.append("If-Modified-Since: \(m)") }
    return out
  }
}
