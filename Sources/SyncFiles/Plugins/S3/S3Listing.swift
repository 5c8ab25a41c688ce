import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
#if canImport(Glibc)
  import Glibc
#endif

/// `s3://BUCKET/PREFIX/` listed through `ListObjectsV2`, page after page
/// (`continuation-token`), each page a signed GET held in memory. A page
/// that fails after its retries fails the whole listing: a listing cut
/// short must never look like objects gone.
extension S3Source: PrefixLister {
  public func list(_ r: ListingRequest) -> Result<PrefixListing, ListingFailure> {
    guard let (bucket, prefix) = S3Object.parsePrefix(r.url.text.revealed) else {
      return .failure(ListingFailure("\(r.url) is not s3://BUCKET/ or s3://BUCKET/PREFIX/"))
    }
    let shown = "s3://\(bucket)/\(prefix)"
    let settings: S3Settings
    switch S3Settings.resolve(
      environment: environment ?? Runtime.environment, readFile: readFile, options: r.network.s3)
    {
    case .success(let s): settings = s
    case .failure(let p): return .failure(ListingFailure("cannot list \(shown): \(p.message)"))
    }
    var o = SmallGet.Options(network: r.network, environment: r.environment, connectTimeout: r.connectTimeout)
    o.verbose = r.verbose
    o.id = r.id
    var objects: [ListedObject] = []
    var token: String? = nil
    var requests = 0
    while true {
      let target = settings.listTarget(
        bucket: bucket, prefix: prefix, continuation: token, pageSize: r.network.s3.pageSize ?? 1000)
      let page: S3ListPage
      switch S3Listing.page(target, options: o, retry: r.retry, requests: &requests) {
      case .failure(let why):
        return .failure(
          ListingFailure(
            "listing \(shown) failed after \(requests) request\(requests == 1 ? "" : "s"): \(why.message); nothing under it was fetched or pruned"
          ))
      case .success(let p): page = p
      }
      for obj in page.objects where obj.key.hasPrefix(prefix) {
        var o = obj
        o.key = String(obj.key.dropFirst(prefix.count))
        objects.append(o)
      }
      guard page.truncated else { break }
      guard let next = page.next, next != token else {
        return .failure(
          ListingFailure(
            "listing \(shown) was cut short: the store said more keys follow but gave no new continuation token; nothing under it was fetched or pruned"
          ))
      }
      token = next
    }
    return .success(PrefixListing(objects: objects, listedAt: r.now, requests: requests))
  }
}

enum S3Listing {
  /// One page, retried as a transfer is (the entry's `retry`, SPEC §10.3):
  /// after a network failure, a transient status (408, 429, 5xx) or a busy
  /// store's code (`SlowDown`), waiting the backoff or the Retry-After.
  static func page(
    _ t: SignedTarget, options o: SmallGet.Options, retry: RetryPolicy, requests: inout Int
  ) -> Result<S3ListPage, ListingFailure> {
    var why = ""
    var retryAfter: Double? = nil
    for attempt in 0..<max(1, retry.attempts) {
      if attempt > 0 {
        let delay = retry.delay(beforeRetry: attempt, retryAfter: retryAfter, unit: Double.random(in: 0..<1))
        o.verbose?("\(o.id): listing page: \(why); retry \(attempt) of \(retry.attempts - 1) in \(delay)s")
        usleep(UInt32(min(delay, 3600) * 1_000_000))
      }
      requests += 1
      retryAfter = nil
      switch SmallGet.fetch(t, options: o) {
      case .failure(let e):
        why = e.message
        if !e.isRetryable { return .failure(ListingFailure(why)) }
      case .success(let a):
        retryAfter = a.retryAfter
        let body = String(decoding: a.body, as: UTF8.self)
        if a.status == 200 {
          guard let page = S3ListPage(xml: body) else {
            return .failure(ListingFailure("the answer is not a ListObjectsV2 result"))
          }
          return .success(page)
        }
        let code = S3Object.element("Code", in: body) ?? "HTTP \(a.status)"
        why = "\(code): \(S3Object.advice(code, status: a.status, message: S3Object.element("Message", in: body)))"
        if !(S3Object.retryable(code) || TransferOutcome.isTransient(status: a.status)) {
          return .failure(ListingFailure(why))
        }
      }
    }
    return .failure(ListingFailure(why))
  }
}

/// One page of a `ListObjectsV2` answer.
struct S3ListPage {
  var objects: [ListedObject] = []
  var truncated = false
  var next: String?

  /// Nil when the text is not a `ListBucketResult`.
  init?(xml: String) {
    guard xml.contains("<ListBucketResult") else { return nil }
    truncated = S3Object.element("IsTruncated", in: xml) == "true"
    next = S3Object.element("NextContinuationToken", in: xml).map(XMLText.unescape)
    var rest = xml[...]
    while let open = rest.firstRange(of: "<Contents>"),
      let close = rest[open.upperBound...].firstRange(of: "</Contents>")
    {
      let one = String(rest[open.upperBound..<close.lowerBound])
      rest = rest[close.upperBound...]
      guard let key = S3Object.element("Key", in: one).map(XMLText.unescape),
        let size = S3Object.element("Size", in: one).flatMap({ Int64($0) })
      else { return nil }
      objects.append(
        ListedObject(
          key: key, size: size, etag: S3Object.element("ETag", in: one).map(XMLText.unescape),
          lastModified: S3Object.element("LastModified", in: one)))
    }
  }
}

/// The five entities of XML and its character references.
enum XMLText {
  static func unescape(_ s: String) -> String {
    guard s.contains("&") else { return s }
    var out = ""
    var rest = s[...]
    while let amp = rest.firstIndex(of: "&") {
      out += rest[..<amp]
      guard let semi = rest[amp...].firstIndex(of: ";") else { break }
      let name = rest[rest.index(after: amp)..<semi]
      switch name {
      case "amp": out += "&"
      case "lt": out += "<"
      case "gt": out += ">"
      case "quot": out += "\""
      case "apos": out += "'"
      default:
        let number =
          name.hasPrefix("#x")
          ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
        if let n = number, let scalar = Unicode.Scalar(n) {
          out.unicodeScalars.append(scalar)
        } else {
          out += rest[amp...semi]
        }
      }
      rest = rest[rest.index(after: semi)...]
    }
    return out + rest
  }
}

extension S3Settings {
  /// A `ListObjectsV2` page: the bucket's URL with its query, the
  /// parameters in the order SigV4 sorts them, each value encoded as S3 wants.
  func listTarget(bucket: String, prefix: String, continuation: String?, pageSize: Int) -> SignedTarget {
    var query: [String] = []
    if let continuation { query.append("continuation-token=" + S3Settings.encode(continuation[...])) }
    query += ["list-type=2", "max-keys=\(pageSize)", "prefix=" + S3Settings.encode(prefix[...])]
    var t = target(bucket: bucket, key: "")
    // `BUCKET/` path-style, `BUCKET.HOST/` virtual: the bucket itself, then the query.
    if pathStyle, t.url.hasSuffix("/") { t.url.removeLast() }
    t.url += "?" + query.joined(separator: "&")
    t.headers.removeAll { $0.hasPrefix("x-amz-checksum-mode") }
    return t
  }
}
