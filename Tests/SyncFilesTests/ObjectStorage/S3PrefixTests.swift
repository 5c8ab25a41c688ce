import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// `s3://BUCKET/PREFIX/` against moto_server with signature checking on
/// (SPEC §9.4): one task per object, listed page after page; unchanged
/// objects known from the listing alone; `include`/`exclude`; `prune`
/// removing exactly the files it installed whose objects are gone; a failed
/// listing that fetches and prunes nothing; an offline plan from the
/// journal's listing.
@Suite(.serialized) final class S3PrefixTests: ApplyWorkspace {
  let s3: MotoS3
  let dir = makeTempDir()

  init() throws { s3 = try MotoS3() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  var env: [String: String] { s3.environment(home: dir) }

  /// The store's log lines from `from` on that list the bucket, and those that fetch objects.
  func requests(since from: Int) -> (listings: Int, others: [String]) {
    let lines = s3.requestLines().dropFirst(from)
    let listings = lines.filter { $0.contains("list-type=2") }.count
    return (listings, lines.filter { !$0.contains("list-type=2") })
  }

  func leftBehind(_ r: ApplyResult) -> String {
    let journal = (try? String(contentsOfFile: dir + "/state/journal", encoding: .utf8)) ?? ""
    return r.run.stdout + r.run.stderr + journal
  }

  @Test func aPrefixOfAThousandObjectsIsListedInPagesThenKnownUnchangedFromTheListingAlone() throws {
    let size = 1024
    try s3.putMany("data", prefix: "models/", count: 1000, size: size)
    manifest(["{id: models, url: 's3://data/models/', destination: models, s3: {page_size: 100}}"])
    let before = s3.requestLines().count
    let first = try apply([], env: env)
    #expect(first.count("installed") == 1000, "\(first.run.stdout.prefix(2000))\(first.run.stderr)")
    #expect(first.run.status == 0)
    let cold = requests(since: before)
    #expect(cold.listings == 10, "1,000 keys at 100 a page: \(cold.listings) listing requests")
    for n in [0, 1, 537, 999] {
      let name = String(format: "%04d.bin", n)
      #expect(first.outcome("m/models/\(name)") == "installed")
      let same = out("models/" + name) == MotoS3.manyBytes(n, size: size)
      #expect(same, "models/\(name) holds its object's bytes")
    }
    #expect(!leftBehind(first).contains(s3.secretKey), "the secret key reached the output or the journal")

    let steady = s3.requestLines().count
    let again = try apply([], env: env)
    #expect(again.run.status == 0)
    #expect(again.count("installed") == 0 && again.count("failed") == 0, "\(again.run.stdout.prefix(1000))")
    let warm = requests(since: steady)
    #expect(
      warm.listings == 10 && warm.others.isEmpty, "the listing alone: \(warm.listings) + \(warm.others.prefix(5))")

    // Offline, the plan expands the prefix from the journal's listing, and says so.
    let plan = try run(["plan", "--format", "json", "m.yaml"], cwd: dir, env: env)
    let json = try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any] ?? [:]
    let prefix = (json["prefixes"] as? [[String: Any]])?.first
    #expect(prefix?["source"] as? String == "journal" && prefix?["objects"] as? Int == 1000, "\(prefix ?? [:])")
    #expect((json["tasks"] as? [Any])?.count == 1000)
    let text = try run(["plan", "m.yaml"], cwd: dir, env: env).stdout
    #expect(text.contains("from the journal's listing of s3://data/models/"), "\(text.suffix(600))")
    #expect(text.contains("unchanged in the listing"), "\(text.prefix(600))")

    // status expands the prefix the same way: one row per object, each with its outcome.
    let status = try run(["status", "--format", "json", "m.yaml"], cwd: dir, env: env)
    let rows =
      (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["tasks"]
      as? [[String: Any]] ?? []
    let row = rows.first { $0["id"] as? String == "m/models/0537.bin" }
    #expect(rows.count == 1000 && row?["last_outcome"] as? String == "installed", "\(status.stdout.prefix(600))")
  }

  @Test func includeAndExcludeSelectKeysAndPruneRemovesExactlyWhatItInstalledWhoseObjectsAreGone() throws {
    for key in ["m/a.bin", "m/sub/b.bin", "m/sub/c.txt", "m/sub/deep/d.bin", "m/skip.tmp", "m/e.bin"] {
      try s3.put("data", key, testBytes(2000, seed: UInt64(key.utf8.count)))
    }
    let entry =
      "{id: p, url: 's3://data/m/', destination: got, include: ['*.bin', 'sub/**'], exclude: ['**.tmp', 'sub/c.txt'], prune: true}"
    manifest([entry])
    try s3.put("data", "m/folder/", [])  // a folder marker, as consoles make them
    let first = try apply([], env: env)
    let firstPrefix = (first.object["prefixes"] as? [[String: Any]])?.first
    let unusable = firstPrefix?["unusable"] as? [String] ?? []
    #expect(unusable == ["folder/: a folder marker, not a file"], "\(unusable)")
    let installed = first.tasks.filter { $0.value["outcome"] as? String == "installed" }.keys.sorted()
    #expect(installed == ["m/p/a.bin", "m/p/e.bin", "m/p/sub/b.bin", "m/p/sub/deep/d.bin"], "\(first.run.stdout)")
    // A file syncfiles did not install, in the same folder.
    write(Array("mine".utf8), to: dir + "/out/got/mine.bin")

    // Three objects go: one file is as installed, one was edited since, one was never selected.
    try s3.delete("data", "m/a.bin")
    try s3.delete("data", "m/sub/b.bin")
    try s3.delete("data", "m/sub/c.txt")
    let edited = dir + "/out/got/sub/b.bin"
    write(Array("edited by hand".utf8), to: edited)
    let plan = try run(["plan", "--remote", "m.yaml"], cwd: dir, env: env).stdout
    #expect(plan.contains("prune \(dir)/out/got/a.bin"), "\(plan)")

    let second = try apply([], env: env)
    let prefix = (second.object["prefixes"] as? [[String: Any]])?.first
    #expect(prefix?["pruned"] as? [String] == [dir + "/out/got/a.bin"], "\(second.run.stdout)")
    let kept = (prefix?["kept"] as? [String]) ?? []
    #expect(kept.count == 1 && kept[0].contains("sub/b.bin: changed since syncfiles installed it"), "\(kept)")
    #expect(out("got/a.bin") == nil, "a.bin's object is gone: pruned")
    #expect(out("got/sub/b.bin") == Array("edited by hand".utf8), "an edited file is never pruned")
    #expect(out("got/mine.bin") == Array("mine".utf8), "a file syncfiles did not install stays")
    #expect(out("got/e.bin") != nil && out("got/sub/deep/d.bin") != nil)
    #expect(second.run.status == 0, "\(second.run.stdout)")

    // A listing that fails prunes nothing, and fails the run.
    try s3.delete("data", "m/e.bin")
    var wrong = env
    wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-0123456789"
    let failed = try apply([], env: wrong)
    #expect(failed.run.status == 1, "\(failed.run.stdout)")
    let error = (failed.object["prefixes"] as? [[String: Any]])?.first?["error"] as? String ?? ""
    #expect(
      error.contains("SignatureDoesNotMatch") && error.contains("nothing under it was fetched or pruned"), "\(error)")
    #expect(out("got/e.bin") != nil, "no listing this run: nothing pruned")
    #expect(!leftBehind(failed).contains("not-the-secret-0123456789"))
  }

  @Test func anObjectChangedInTheListingIsFetchedAndTheOthersAreNotAsked() throws {
    try s3.put("data", "c/one.bin", testBytes(5000, seed: 1))
    try s3.put("data", "c/two.bin", testBytes(5000, seed: 2))
    manifest(["{id: c, url: 's3://data/c/', destination: c}"])
    #expect(try apply([], env: env).count("installed") == 2)
    let v2 = testBytes(7000, seed: 3)
    try s3.put("data", "c/two.bin", v2)
    let before = s3.requestLines().count
    let r = try apply([], env: env)
    #expect(r.outcome("m/c/two.bin") == "installed" && r.outcome("m/c/one.bin") == "skipped", "\(r.run.stdout)")
    #expect(out("c/two.bin") == v2)
    let asked = requests(since: before).others
    #expect(asked.count == 1 && asked[0].hasPrefix("GET /data/c/two.bin"), "\(asked)")
  }

  /// A kill in the middle of a prefix's run (a large object trickling
  /// beside small ones), then a run that lists again: the small objects
  /// already installed are known from the listing, the large one resumes
  /// where it stopped, and every file holds its object's bytes.
  @Test func aKilledPrefixRunResumesItsLargeObjectAndKeepsWhatItInstalled() throws {
    let big = testBytes(6 << 20, seed: 70)
    try s3.put("data", "k/big.bin", big)
    try s3.putMany("data", prefix: "k/small-", count: 8, size: 4096)
    manifest(["{id: k, url: 's3://data/k/', destination: k, segments: 1}"], extra: "limits: {rate: 2m}")
    let p = try startInBackground(["apply", "--quiet", "m.yaml"], cwd: dir, env: env)
    Thread.sleep(forTimeInterval: 1.5)
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
    #expect(p.terminationReason == .uncaughtSignal, "apply ended before the kill")
    let partial = dir + "/out/k/.big.bin.syncfiles-partial"
    #expect(FileManager.default.fileExists(atPath: partial), "the large object's partial was left to resume")
    manifest(["{id: k, url: 's3://data/k/', destination: k, segments: 1}"])
    let r = try apply([], env: env)
    #expect(r.run.status == 0, "\(r.run.stdout)\(r.run.stderr)")
    #expect(
      r.outcome("m/k/big.bin") == "installed" && (r.int("m/k/big.bin", "resumed_from") ?? 0) > 0, "\(r.run.stdout)")
    let whole = out("k/big.bin") == big
    #expect(whole, "the resumed object is its bytes, whole")
    for n in 0..<8 {
      let name = String(format: "small-%04d.bin", n)
      let same = out("k/" + name) == MotoS3.manyBytes(n, size: 4096)
      #expect(same, "\(name) holds its object's bytes")
      #expect(
        ["installed", "skipped"].contains(r.outcome("m/k/" + name) ?? ""),
        "\(name): \(r.outcome("m/k/" + name) ?? "none")")
    }
  }

  @Test func prefixKeysAreCheckedWhereTheyAreWritten() {
    func prefixEntry(_ extra: String...) -> String {
      entry(lines: extra).replacingFirst("https://example.org/a", with: "s3://b/p/")
    }
    var (m, d) = decode(prefixEntry("include: '*.bin'", "prune: true"))
    #expect(errors(d).isEmpty, "\(d)")
    #expect(m?.files.first?.prefix == PrefixOptions(include: ["*.bin"], prune: true))
    (_, d) = decode(entry("include: ['*.bin']"))
    #expect(errors(d).map(\.message).contains { $0.contains("include applies to a prefix") }, "\(d)")
    (_, d) = decode(prefixEntry("sha256: \(String(repeating: "a", count: 64))"))
    #expect(errors(d).map(\.message).contains { $0.contains("sha256 names one file") }, "\(d)")
    (_, d) = decode(prefixEntry("s3: {page_size: 5000}"))
    #expect(errors(d).map(\.message).contains { $0.contains("s3.page_size must be between 1 and 1000") }, "\(d)")
    (_, d) = decode(entry(lines: []).replacingFirst("files:", with: "defaults: {prune: true}\nfiles:"))
    #expect(errors(d).map(\.message).contains { $0.contains("'prune' selects the objects of one prefix") }, "\(d)")
  }
}
