import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private let now = Timestamp.parseRFC3339("2026-11-28T12:00:00Z")!

/// A manifest (root /srv) with one prefix entry `p` over `s3://b/data/`, destination `got`.
private func prefixManifest(_ extra: String...) -> Manifest {
  var text = "version: 1\nname: m\nroot: /srv\nfiles:\n"
  text += "  - id: p\n    url: s3://b/data/\n    destination: got\n"
  for e in extra { text += "    \(e)\n" }
  let (m, d) = decode(text)
  precondition(!d.hasErrors, "\(d)")
  return m!
}

private func listing(_ keys: [String], size: Int64 = 10) -> PrefixListing {
  PrefixListing(
    objects: keys.map { ListedObject(key: $0, size: size, etag: "\"e-\($0)\"") }, listedAt: now, requests: 1)
}

@Suite struct GlobTests {
  @Test func aStarStopsAtASlashAndTwoStarsDoNot() {
    #expect(Glob("*.bin").matches("a.bin"))
    #expect(!Glob("*.bin").matches("v2/a.bin"))
    #expect(Glob("**.bin").matches("v2/deep/a.bin"))
    #expect(Glob("**/a.bin").matches("a.bin") && Glob("**/a.bin").matches("x/y/a.bin"))
    #expect(Glob("v2/**").matches("v2/a/b.c") && !Glob("v2/**").matches("v3/a"))
    #expect(Glob("a?.bin").matches("a1.bin") && !Glob("a?.bin").matches("a/.bin"))
    #expect(Glob("[ab]*.txt").matches("b1.txt") && !Glob("[ab]*.txt").matches("c1.txt"))
    #expect(Glob("[!a]*").matches("b") && !Glob("[!a]*").matches("a"))
    #expect(Glob("[0-9][0-9].csv").matches("42.csv") && !Glob("[0-9][0-9].csv").matches("4x.csv"))
    #expect(Glob("[x").matches("[x"), "an unclosed class is the characters themselves")
    #expect(!Glob("a.bin").matches("a.bin.tmp"))
  }
}

@Suite struct PrefixExpansionTests {
  @Test func eachSelectedObjectBecomesATaskBelowThePrefixsIdAndFolder() {
    let m = prefixManifest("include: ['*.bin', 'v2/**']", "exclude: ['**.tmp']", "mode: 0600")
    let r = PrefixExpansion.expand(
      [m], sources: ["m/p": .listed(listing(["a.bin", "b.txt", "v2/c.csv", "v2/d.tmp", "v3/e.bin"]))], journal: [:])
    let files = r.manifests[0].files
    #expect(files.map(\.qualifiedID) == ["m/p/a.bin", "m/p/v2/c.csv"])
    #expect(files.map(\.destinationPath) == ["/srv/got/a.bin", "/srv/got/v2/c.csv"])
    #expect(files.map(\.destination) == ["got/a.bin", "got/v2/c.csv"])
    #expect(files.map(\.url.text.revealed) == ["s3://b/data/a.bin", "s3://b/data/v2/c.csv"])
    #expect(files.allSatisfy { $0.prefix == nil && $0.mode == 0o600 && $0.expectedBytes == 10 })
    #expect(r.listed["m/p/a.bin"]?.etag == "\"e-a.bin\"")
    #expect(r.prefixes.first?.selected == 2 && r.prefixes.first?.listed == 5)
  }

  @Test func keysThatAreNoFileBelowTheFolderAreSaidAndSkipped() {
    let keys = ["ok.bin", "../up.bin", "a/../b", "a//b", "dir/", "./x", "tab\there", ".f.syncfiles-partial"]
    let r = PrefixExpansion.expand([prefixManifest()], sources: ["m/p": .listed(listing(keys))], journal: [:])
    #expect(r.manifests[0].files.map(\.qualifiedID) == ["m/p/ok.bin"])
    #expect(r.prefixes[0].unusable.count == keys.count - 1, "\(r.prefixes[0].unusable)")
  }

  @Test func pruneNamesOnlyFilesThisEntryInstalledWhoseObjectsAreGoneFromAListingMadeNow() {
    let m = prefixManifest("prune: true")
    var journal: [String: TaskState] = [:]
    for id in ["m/p/kept.bin", "m/p/gone.bin", "m/p/never.bin", "m/other", "m/pp/gone.bin"] {
      var s = TaskState(id: id)
      if id != "m/p/never.bin" { s.installed = .init(size: 10, mtimeNs: 1, etag: "\"x\"") }
      journal[id] = s
    }
    let live = PrefixExpansion.expand([m], sources: ["m/p": .listed(listing(["kept.bin"]))], journal: journal)
    #expect(live.prefixes[0].prunes.map(\.path) == ["/srv/got/gone.bin"])
    let offline = PrefixExpansion.expand([m], sources: ["m/p": .recorded(listing(["kept.bin"]))], journal: journal)
    #expect(offline.prefixes[0].prunes.isEmpty, "a listing from the journal never prunes")
    let failed = PrefixExpansion.expand([m], sources: ["m/p": .failed("AccessDenied")], journal: journal)
    #expect(failed.prefixes[0].prunes.isEmpty && failed.manifests[0].files.isEmpty)
    let noPrune = PrefixExpansion.expand(
      [prefixManifest()], sources: ["m/p": .listed(listing(["kept.bin"]))], journal: journal)
    #expect(noPrune.prefixes[0].prunes.isEmpty, "without prune: true nothing is removed")
  }

  /// An object the listing shows with the installed ETag and size needs no
  /// request; one with another ETag is fetched whole, without asking first.
  @Test func theListingDecidesUnchangedOrChangedWithoutARequest() {
    let m = prefixManifest()
    let r = PrefixExpansion.expand([m], sources: ["m/p": .listed(listing(["a.bin", "b.bin"]))], journal: [:])
    var journal: [String: TaskState] = [:]
    var f = Facts(now: now, localMinuteOfDay: 0, onACPower: true)
    f.listed = r.listed
    for (key, etag) in [("a.bin", "\"e-a.bin\""), ("b.bin", "\"old\"")] {
      var s = TaskState(id: "m/p/" + key)
      let e = r.manifests[0].files.first { $0.qualifiedID == s.id }!
      s.fingerprint = Planner.fingerprint(e)
      s.installed = .init(size: 10, mtimeNs: 5, etag: etag)
      journal[s.id] = s
      f.files["/srv/got/" + key] = FileFact(size: 10, mtimeNs: 5)
    }
    let plan = Planner.plan(manifests: r.manifests, journal: journal, facts: f, journalPath: "/j")
    #expect(plan.tasks.map(\.action) == [.skip, .download], "\(plan.tasks.map(\.reason))")
    #expect(plan.tasks[0].reason.contains("unchanged in the listing"))
    #expect(plan.tasks[1].request == .whole && plan.tasks[1].bytesToTransfer == 10)
  }

  @Test func onlySelectsAPrefixsObjectsByThePrefixsId() {
    #expect(Planner.matches("m/p/v2/a.bin", patterns: ["m/p"]))
    #expect(!Planner.matches("m/pp/a.bin", patterns: ["m/p"]))
    #expect(Planner.matches("m/p/v2/a.bin", patterns: ["m/p/v2/*"]))
  }

  @Test func aListingRecordReadsBackAsWritten() throws {
    let l = PrefixListing(
      objects: [ListedObject(key: "a \"b\"/ü.bin", size: 7, etag: "\"e\"", lastModified: "2026-11-28T10:00:00.000Z")],
      listedAt: now, requests: 3)
    let line = JournalFormat.line(l.record(id: "m/p"))
    var bytes = Array(JournalFormat.header.utf8) + line
    let c = try #require(JournalFormat.decode(bytes))
    #expect(c.listings["m/p"] == l)
    // A later listing of the same prefix wins.
    bytes += JournalFormat.line(PrefixListing(objects: [], listedAt: now, requests: 1).record(id: "m/p"))
    #expect(JournalFormat.decode(bytes)?.listings["m/p"]?.objects.isEmpty == true)
  }

  @Test func aListingPageOfS3ReadsKeysSizesAndETags() throws {
    let xml = """
      <?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><Prefix>data/</Prefix>\
      <IsTruncated>true</IsTruncated><NextContinuationToken>tok+/=</NextContinuationToken>\
      <Contents><Key>data/a&amp;b.bin</Key><LastModified>2026-11-28T10:00:00.000Z</LastModified>\
      <ETag>&quot;abc&quot;</ETag><Size>42</Size></Contents></ListBucketResult>
      """
    let page = try #require(S3ListPage(xml: xml))
    #expect(page.truncated && page.next == "tok+/=")
    #expect(
      page.objects == [
        ListedObject(key: "data/a&b.bin", size: 42, etag: "\"abc\"", lastModified: "2026-11-28T10:00:00.000Z")
      ])
    #expect(S3ListPage(xml: "<Error><Code>AccessDenied</Code></Error>") == nil)
  }
}

/// Which prefixes `--only` may reach, so that the others are never listed.
@Suite struct OnlyPrefixTests {
  @Test func aPatternReachesAPrefixByItsIdOrByAnObjectBelowIt() {
    let id = "m/shards"
    for p in ["m/shards", "m/*", "*", "m/shards/*", "m/shards/v2/a.bin", "m/sh*", "m/shards/v?/*"] {
      #expect(Planner.mayMatchBelow(id, patterns: [p]), "\(p) may select an object below \(id)")
    }
    for p in ["m/good", "m/shardsX", "other/*", "m/shardsX/*", "m/good/*"] {
      #expect(!Planner.mayMatchBelow(id, patterns: [p]), "\(p) selects nothing below \(id)")
    }
    #expect(Planner.mayMatchBelow(id, patterns: []), "no --only selects everything")
    #expect(Planner.mayMatchBelow(id, patterns: ["m/good", "m/shards/x"]))
  }

  @Test func anUnselectedPrefixIsNotExpandedFromTheListingItWasGiven() {
    let m = prefixManifest("prune: true")
    let r = PrefixExpansion.expand(
      [m], sources: ["m/p": .listed(listing(["a"]))], journal: [:], only: ["m/other"])
    #expect(r.manifests[0].files.isEmpty)
    #expect(r.prefixes.first?.source == .unselected)
    #expect(r.prefixes.first?.prunes.isEmpty == true)
  }
}

/// `prune_max`: a count or a share of the installed files; one file may always go.
@Suite struct PruneLimitTests {
  @Test func parsesCountsAndPercentagesAndRefusesTheRest() {
    #expect(PruneLimit.parse("10") == .count(10) && PruneLimit.parse("50%") == .percent(50))
    #expect(PruneLimit.parse("12.5%") == .percent(12.5))
    for bad in ["-1", "101%", "x", "%", "1e3%", "5 %"] { #expect(PruneLimit.parse(bad) == nil, "\(bad)") }
  }

  @Test func oneFileMayAlwaysGoAndMoreOnlyWithinTheLimit() {
    #expect(PruneLimit.percent(0).allows(removing: 1, of: 1))
    #expect(PruneLimit.percent(50).allows(removing: 3, of: 6) && !PruneLimit.percent(50).allows(removing: 4, of: 6))
    #expect(!PruneLimit.percent(50).allows(removing: 6, of: 6), "an empty listing")
    #expect(PruneLimit.percent(100).allows(removing: 6, of: 6))
    #expect(PruneLimit.count(2).allows(removing: 2, of: 100) && !PruneLimit.count(2).allows(removing: 3, of: 100))
  }
}

@Suite struct PrefixWarningTests {
  @Test func aPrefixIsNotWarnedForLackingExpectedBytes() {
    let (_, d) = decode(
      "version: 1\nname: m\nroot: /srv\nfiles:\n  - {id: p, url: 's3://b/data/', destination: got/}\n")
    #expect(!d.contains { $0.message.contains("no expected_bytes") }, "\(d)")
  }
}
