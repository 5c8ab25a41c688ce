import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// `s3://BUCKET/KEY` against moto_server with signature checking on (SPEC
/// §9.4): signed by libcurl, revalidated by ETag, resumed with If-Match, a
/// changed object started over whole, S3's errors in its own words, and no
/// secret in any output.
@Suite(.serialized) final class S3SourceTests: ApplyWorkspace {
  let s3: MotoS3
  let dir = makeTempDir()

  init() throws { s3 = try MotoS3() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  var env: [String: String] { s3.environment(home: dir) }

  /// Every byte syncfiles left behind: its output, journal and metrics.
  func leftBehind(_ r: ApplyResult) -> String {
    let journal = (try? String(contentsOfFile: dir + "/state/journal", encoding: .utf8)) ?? ""
    return r.run.stdout + r.run.stderr + journal
  }

  @Test func aKeyIsFetchedSignedThenRevalidatedByItsETag() throws {
    let bytes = testBytes(300_000, seed: 57)
    try s3.put("data", "models/v1/a-b_c.bin", bytes)
    manifest(["{id: a, url: 's3://data/models/v1/a-b_c.bin', destination: a.bin}"])
    let first = try apply(["-v"], env: env)
    #expect(first.outcome("m/a") == "installed", "\(first.run.stdout)\(first.run.stderr)")
    let same = out("a.bin") == bytes  // not the arrays: a failure would print them
    #expect(same)
    let again = try apply(["--force"], env: env)
    #expect(again.outcome("m/a") == "unchanged" && again.int("m/a", "http_status") == 304, "\(again.run.stdout)")
    for r in [first, again] {
      #expect(!leftBehind(r).contains(s3.secretKey), "the secret key reached the output or the journal")
    }
    #expect(first.run.stderr.contains("Authorization: ***"), "-v shows the request, its signature hidden")
  }

  /// Keys that boto3 itself could not put before the test server checked
  /// the path as sent ('+', '%', ';', '=', '&', ':', '*', "'", ',', a space,
  /// non-ASCII letters): listed and fetched, each signed as S3 signs it.
  @Test func keysWithCharactersThatNeedEncodingAreListedAndFetched() throws {
    let keys = ["a+b.bin", "50%.bin", "x;y=z&w.bin", "t:1*2'3,4.bin", "with space.bin", "café.bin"]
    for (i, k) in keys.enumerated() { _ = try s3.put("data", "odd/" + k, testBytes(1000 + i, seed: 70 + UInt64(i))) }
    manifest(["{id: odd, url: 's3://data/odd/', destination: odd}"])
    let r = try apply([], env: env)
    #expect(r.run.status == 0, "\(r.run.stdout)\(r.run.stderr)")
    for (i, k) in keys.enumerated() {
      #expect(r.outcome("m/odd/" + k) == "installed", "\(k): \(r.run.stdout)")
      let same = out("odd/" + k) == testBytes(1000 + i, seed: 70 + UInt64(i))
      #expect(same, "\(k)")
    }
  }

  @Test func aWrongSecretAMissingKeyAndAMissingBucketAreSaidInS3sWords() throws {
    try s3.put("data", "present.bin", testBytes(1000, seed: 1))
    manifest([
      "{id: absent, url: 's3://data/absent.bin', destination: absent.bin}",
      "{id: nobucket, url: 's3://no-such-bucket/x.bin', destination: x.bin}",
    ])
    let r = try apply([], env: env)
    #expect(r.string("m/absent", "error")?.contains("NoSuchKey for s3://data/absent.bin") == true, "\(r.run.stdout)")
    #expect(r.string("m/nobucket", "error")?.contains("NoSuchBucket") == true, "\(r.run.stdout)")

    manifest(["{id: p, url: 's3://data/present.bin', destination: p.bin}"])
    var wrong = env
    wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-0123456789"
    let refused = try apply([], env: wrong)
    #expect(refused.outcome("m/p") == "failed")
    #expect(refused.string("m/p", "error")?.contains("SignatureDoesNotMatch") == true, "\(refused.run.stdout)")
    #expect(!leftBehind(refused).contains("not-the-secret-0123456789"))
    #expect(out("p.bin") == nil)
  }

  @Test func keysComeFromTheProfileAsTheAWSCLIFindsThem() throws {
    let bytes = testBytes(2000, seed: 2)
    try s3.put("data", "p.bin", bytes)
    write(
      "[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n[sync]\naws_access_key_id = \(s3.accessKey)\naws_secret_access_key = \(s3.secretKey)\n",
      to: dir + "/creds")
    var e = env
    e["AWS_ACCESS_KEY_ID"] = ""
    e["AWS_SECRET_ACCESS_KEY"] = ""
    e["AWS_SHARED_CREDENTIALS_FILE"] = dir + "/creds"
    e["AWS_PROFILE"] = "sync"
    manifest(["{id: p, url: 's3://data/p.bin', destination: p.bin}"])
    let r = try apply([], env: e)
    #expect(r.outcome("m/p") == "installed", "\(r.run.stdout)")
    e["AWS_SHARED_CREDENTIALS_FILE"] = dir + "/none"
    let none = try apply(["--force"], env: e)
    #expect(none.string("m/p", "error")?.contains("no AWS credentials for profile sync") == true, "\(none.run.stdout)")
  }

  /// An expired session token is said in S3's words, fails the task at once
  /// (no retry can help) and never reaches the output. moto does not expire
  /// tokens, so the store here answers as AWS documents it: 400 with
  /// `ExpiredToken`.
  @Test func anExpiredSessionTokenIsSaidAndNeverShown() throws {
    let store = try FaultServer()
    let body =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message></Error>"
    store.routes(["/data/k.bin": ["status": 400, "error_body": body]])
    var e = env
    e["AWS_SESSION_TOKEN"] = "FQoGZXIvYXdzEXPIRED0123456789token"
    manifest(["{id: k, url: 's3://data/k.bin', destination: k.bin, s3: {endpoint: '\(store.base)'}}"])
    let r = try apply(["-v"], env: e)
    let error = r.string("m/k", "error") ?? ""
    #expect(error.contains("ExpiredToken for s3://data/k.bin: the session token has expired"), "\(r.run.stdout)")
    #expect(r.int("m/k", "attempts") == 1, "no retry: \(r.run.stdout)")
    #expect(!leftBehind(r).contains("EXPIRED0123456789"), "the session token reached the output")
    #expect(r.run.stderr.contains("x-amz-security-token: ***"), "-v shows the token's header, its value hidden")
    let sent = store.requests().first?.headers["x-amz-security-token"]
    #expect(sent == e["AWS_SESSION_TOKEN"], "the token is sent to the store: \(String(describing: sent))")
  }

  /// A kill mid-transfer, then a resume that asks for the rest with
  /// If-Match; and a kill, then a change of the object before the resume:
  /// 412, and the new version whole, never mixed with the old bytes.
  @Test(arguments: [false, true]) func aResumeAsksWithIfMatchAndAChangeStartsOver(changed: Bool) throws {
    let v1 = testBytes(6 << 20, seed: 10)
    let v2 = testBytes(6 << 20, seed: 11)
    try s3.put("data", "big.bin", v1)
    manifest(["{id: big, url: 's3://data/big.bin', destination: big.bin}"], extra: "limits: {rate: 2m}")
    let p = try startInBackground(["apply", "--quiet", "m.yaml"], cwd: dir, env: env)
    Thread.sleep(forTimeInterval: 1.5)
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
    #expect(p.terminationReason == .uncaughtSignal, "apply ended before the kill")
    #expect(partialExists("big.bin"), "a partial was left to resume")
    if changed { try s3.put("data", "big.bin", v2) }
    manifest(["{id: big, url: 's3://data/big.bin', destination: big.bin}"])
    let r = try apply([], env: env)
    #expect(r.outcome("m/big") == "installed", "\(r.run.stdout)\(r.run.stderr)")
    let (isV1, isV2) = (out("big.bin") == v1, out("big.bin") == v2)
    #expect(changed ? isV2 : isV1, "the installed file is the object's current version, whole")
    let resumed = r.int("m/big", "resumed_from") ?? 0
    if changed {
      #expect(r.run.stdout.contains("412"), "the change was seen by If-Match: \(r.run.stdout)")
    } else {
      #expect(resumed > 0, "the resume continued the partial: \(r.run.stdout)")
    }
  }

  /// The store's SHA-256 when it recorded one, else the MD5 a single-part
  /// ETag names: the report's `checks` says which ran.
  @Test func theStoresChecksumOrTheMD5ETagIsVerified() throws {
    let a = testBytes(100_000, seed: 20)
    let b = testBytes(100_000, seed: 21)
    try s3.put("data", "with-checksum.bin", a, checksum: true)
    let etag = try s3.put("data", "plain.bin", b)
    #expect(ObjectChecksumVerifier.md5(ofETag: etag) != nil, "a single-part ETag is an MD5: \(etag)")
    manifest([
      "{id: a, url: 's3://data/with-checksum.bin', destination: a.bin}",
      "{id: b, url: 's3://data/plain.bin', destination: b.bin}",
    ])
    let r = try apply([], env: env)
    #expect(r.outcome("m/a") == "installed" && r.outcome("m/b") == "installed", "\(r.run.stdout)")
    #expect(r.tasks["m/a"]?["checks"] as? [String] == ["x-amz-checksum-sha256"], "\(r.run.stdout)")
    #expect(r.tasks["m/b"]?["checks"] as? [String] == ["etag-md5"], "\(r.run.stdout)")
  }

  /// Bytes that differ from what the store recorded are caught: fetched
  /// again, never installed.
  @Test func aDamagedBodyIsCaughtByEitherCheck() throws {
    let path = dir + "/body"
    let bytes = testBytes(5000, seed: 3)
    write(bytes, to: path)
    let v = ObjectChecksumVerifier()
    let e = try #require(decode(entry().replacingFirst("https://example.org/a", with: "s3://b/k")).0?.files.first)
    #expect(v.applies(to: e))
    let digest = SHA256Hasher.digest(ofFileAt: path, size: Int64(bytes.count))!
    var input = VerifyInput(
      entry: e, path: path, size: Int64(bytes.count), sha256: digest, announcedSize: nil, with: .object([]),
      timeout: 10)
    input.etag = "\"\(ObjectChecksumVerifier.md5(ofFileAt: path)!)\""
    #expect(v.verify(input) == .passed(check: "etag-md5"))
    input.etag = "\"0123456789abcdef0123456789abcdef\""
    guard case .refetch(let why) = v.verify(input) else { Issue.record("a wrong MD5 passed"); return }
    #expect(why.contains("MD5"))
    input.etag = "\"0123456789abcdef0123456789abcdef-2\""
    #expect(v.verify(input) == .accept(warnings: []), "a multipart ETag names no digest of the bytes")
    input.storeSHA256 = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="  // SHA-256 of nothing
    guard case .refetch = v.verify(input) else { Issue.record("a wrong stored SHA-256 passed"); return }
    #expect(Base64.hex("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=") == S3Object.emptyBodySHA256)
  }

  /// `plan --remote` asks the store with a signed HEAD, as apply would ask.
  @Test func planRemoteAsksTheStoreWithASignedHead() throws {
    try s3.put("data", "r.bin", testBytes(4000, seed: 5))
    manifest([
      "{id: r, url: 's3://data/r.bin', destination: r.bin}",
      "{id: gone, url: 's3://data/gone.bin', destination: g.bin}",
    ])
    #expect(try apply([], env: env).outcome("m/r") == "installed")
    let plan = try run(["plan", "--remote", "--force", "-v", "m.yaml"], cwd: dir, env: env)
    #expect(plan.stdout.contains("unchanged on the server (304)"), "\(plan.stdout)\(plan.stderr)")
    #expect(plan.stdout.contains("remote check failed: HTTP 404"), "\(plan.stdout)")
    #expect(!(plan.stdout + plan.stderr).contains(s3.secretKey))
    var none = env
    none["AWS_ACCESS_KEY_ID"] = ""
    none["AWS_SECRET_ACCESS_KEY"] = ""
    let unsigned = try run(["plan", "--remote", "--force", "m.yaml"], cwd: dir, env: none)
    #expect(unsigned.stdout.contains("remote check failed: no AWS credentials"), "\(unsigned.stdout)")
  }

  /// `s3:` in `defaults` names the endpoint and the region, over the environment.
  @Test func theS3KeyNamesTheEndpoint() throws {
    let bytes = testBytes(3000, seed: 4)
    try s3.put("data", "k.bin", bytes)
    var e = env
    e["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"  // nothing listens there: the manifest's endpoint must win
    manifest(
      ["{id: k, url: 's3://data/k.bin', destination: k.bin}"],
      extra: "defaults:\n  s3: {endpoint: '\(s3.endpoint)', region: us-east-1, addressing: path}")
    let r = try apply([], env: e)
    #expect(r.outcome("m/k") == "installed", "\(r.run.stdout)\(r.run.stderr)")
    #expect(out("k.bin") == bytes)
  }

  @Test func theS3KeysAreCheckedWhereTheyAreWritten() {
    let (m, d) = decode(
      entry("s3: {region: eu-west-1, endpoint: 'https://minio.example:9000/', addressing: virtual, profile: r}"))
    #expect(errors(d).isEmpty, "\(d)")
    let o = m?.files.first?.network.s3
    #expect(o?.region == "eu-west-1" && o?.endpoint == "https://minio.example:9000" && o?.addressing == .virtual)
    #expect(o?.profile == "r")
    let (_, bad) = decode(entry("s3: {addressing: sideways, endpoint: ftp://x, region: EU, colour: blue}"))
    let text = errors(bad).map(\.message).joined(separator: "\n")
    #expect(text.contains("s3.addressing must be path or virtual, not 'sideways'"), "\(text)")
    #expect(text.contains("s3.endpoint must be an http(s) URL"), "\(text)")
    #expect(text.contains("s3.region must be a region name"), "\(text)")
    #expect(text.contains("colour"), "\(text)")
    #expect(errors(bad).allSatisfy { $0.mark?.line == 8 }, "each at its line: \(bad)")
  }

  @Test func addressingIsPathOrVirtualHost() {
    var s = S3Settings(
      region: "eu-west-1", endpoint: nil, accessKey: "a", secretKey: "s", sessionToken: nil, profile: "default",
      keysFrom: "", pathStyle: false)
    #expect(s.url(bucket: "b", key: "k") == "https://b.s3.eu-west-1.amazonaws.com/k")
    s.pathStyle = true
    #expect(s.url(bucket: "b", key: "k") == "https://s3.eu-west-1.amazonaws.com/b/k")
    s.endpoint = "https://minio.example:9000"
    #expect(s.url(bucket: "b", key: "k") == "https://minio.example:9000/b/k")
    s.pathStyle = false
    #expect(s.url(bucket: "b", key: "k") == "https://b.minio.example:9000/k")
  }

  @Test func settingsAreFoundAsTheAWSCLIFindsThem() {
    let files = [
      "/h/.aws/credentials": "[default]\naws_access_key_id = AKD\naws_secret_access_key = SKD\n",
      "/h/.aws/config":
        "[default]\nregion = eu-west-3\n[profile other]\nregion = ap-south-1\nendpoint_url = http://minio:9000/\n",
    ]
    let read: (String) -> String? = { files[$0] }
    let d = try? S3Settings.resolve(environment: ["HOME": "/h"], readFile: read).get()
    #expect(d?.accessKey == "AKD" && d?.region == "eu-west-3" && d?.endpoint == nil)
    #expect(d?.url(bucket: "b", key: "a b/c+d.bin") == "https://b.s3.eu-west-3.amazonaws.com/a%20b/c%2Bd.bin")
    let env = ["HOME": "/h", "AWS_PROFILE": "other", "AWS_ACCESS_KEY_ID": "AKE", "AWS_SECRET_ACCESS_KEY": "SKE"]
    let o = try? S3Settings.resolve(environment: env, readFile: read).get()
    #expect(o?.accessKey == "AKE" && o?.region == "ap-south-1" && o?.endpoint == "http://minio:9000")
    #expect(o?.url(bucket: "b", key: "k") == "http://minio:9000/b/k")
    let half = S3Settings.resolve(environment: ["HOME": "/h", "AWS_ACCESS_KEY_ID": "AKE"], readFile: read)
    #expect(half == .failure(.incompleteKeys(from: "AWS_ACCESS_KEY_ID")))
    let none = S3Settings.resolve(environment: ["HOME": "/x"], readFile: read)
    #expect(none == .failure(.noCredentials(profile: "default", looked: ["/x/.aws/credentials", "/x/.aws/config"])))
  }

  @Test func s3ErrorAnswersAreReadByTheirCode() {
    let xml = "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>"
    #expect(S3Object.element("Code", in: xml) == "SlowDown")
    #expect(S3Object.retryable("SlowDown") && !S3Object.retryable("NoSuchKey"))
    let p = S3Object.parse("s3://b/k/l")
    #expect(p?.bucket == "b" && p?.key == "k/l")
    #expect(S3Object.parse("s3://b/") == nil && S3Object.parse("https://b/k") == nil)
  }
}
