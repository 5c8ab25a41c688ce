import Foundation
import Testing

/// A prefix's listing retries as a transfer does (SPEC §10.3): a 429 with
/// Retry-After, then a 503, are waited out with the entry's `retry`, and
/// the listing then serves the objects. The fault server stands in for the
/// store (it checks no signature; moto does, elsewhere).
@Suite final class S3ListingRetryTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  let env = ["AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1"]

  func listing(failing: Int, status: Int) {
    let body = Array("one".utf8)
    server.put("a.txt", body)
    let etag = "\"f97c5d29941bfb1b2fdab0874906ab82\""  // the MD5 of "one"
    server.put(
      "list.xml",
      Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult><Name>b</Name><Prefix>p/</Prefix><KeyCount>1</KeyCount><IsTruncated>false</IsTruncated>\
        <Contents><Key>p/a.txt</Key><Size>3</Size><ETag>&quot;f97c5d29941bfb1b2fdab0874906ab82&quot;</ETag></Contents>\
        </ListBucketResult>
        """.utf8))
    server.routes([
      "/b": ["file": "list.xml", "fail_first": failing, "fail_status": status, "retry_after": "1"],
      "/b/p/a.txt": ["file": "a.txt", "etag": etag],
    ])
    manifest(
      ["{id: set, url: 's3://b/p/', destination: set}"],
      extra: "defaults:\n  s3: {endpoint: '\(server.base)', addressing: path}\n  retry: {attempts: 4, backoff: 1s}")
  }

  @Test func a429AndA503AreRetriedWithTheBackoffAndRetryAfter() throws {
    listing(failing: 2, status: 429)
    let start = Date()
    let r = try apply([], env: env)
    #expect(r.run.status == 0, "\(r.run.stdout)\(r.run.stderr)")
    #expect(r.outcome("m/set/a.txt") == "installed")
    #expect(server.requests("/b").count == 3, "two refused pages, then the listing")
    #expect(Date().timeIntervalSince(start) >= 1.0, "Retry-After: 1 was waited")
  }

  @Test func aListingStillFailingAfterItsAttemptsFailsThePrefix() throws {
    listing(failing: 10, status: 503)
    let r = try apply([], env: env)
    #expect(r.run.status == 1)
    #expect(server.requests("/b").count == 4, "retry.attempts counts every try")
    let error = (r.object["prefixes"] as? [[String: Any]])?.first?["error"] as? String ?? ""
    #expect(error.contains("failed after 4 requests"), "\(error)")
  }
}
