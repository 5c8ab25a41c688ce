import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The planner finds each destination's partial beside it, folder by folder,
/// however crowded the folders and however many threads gather the facts.
@Suite final class PartialLookupTests {
  let dir = makeTempDir()
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// Destinations that alternate between crowded folders (each listed
  /// once) still find each folder's own partials, and only them.
  @Test func alternatingCrowdedFoldersFindTheirOwnPartials() throws {
    let n = FactGatherer.PartialLookup.listFrom + 2
    var yaml = "version: 1\nname: m\nroot: \(dir)/alt\njournal: \(dir)/journal\nfiles:\n"
    for i in 0..<(2 * n) {
      yaml += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: d\(i % 2)/f\(i).bin}\n"
    }
    for d in ["d0", "d1"] {
      try FileManager.default.createDirectory(atPath: dir + "/alt/" + d, withIntermediateDirectories: true)
    }
    try yaml.write(toFile: dir + "/alt.yaml", atomically: true, encoding: .utf8)
    // f4 belongs in d0 and f7 in d1; a partial named for f4 in d1 is nobody's.
    for p in ["d0/.f4.bin", "d1/.f7.bin", "d1/.f4.bin"] {
      try Data("held".utf8).write(to: URL(fileURLWithPath: dir + "/alt/" + p + ".syncfiles-partial"))
    }
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/alt.yaml"])
    let facts = FactGatherer.gather(for: set.manifests, journal: [:], now: Timestamp.current())
    let found = facts.files.keys.filter { $0.hasSuffix(".syncfiles-partial") }.sorted()
    #expect(found == [dir + "/alt/d0/.f4.bin.syncfiles-partial", dir + "/alt/d1/.f7.bin.syncfiles-partial"])
    #expect(facts.siblingPartials == 2)
  }

  /// The crowded folders, counted a run of destinations at a time, are the
  /// ones counted one destination at a time: folders that interleave, come
  /// back later, continue into the next manifest, or hold only a few.
  @Test func crowdedFoldersCountedByRunsAreThoseCountedOneByOne() throws {
    var x: UInt64 = 0x2545_F491_4F6C_DD1D
    func next(_ n: UInt64) -> Int {
      x ^= x << 13
      x ^= x >> 7
      x ^= x << 17
      return Int(x % n)
    }
    let folders = ["a", "a/b", "a/b/c", "ab", "z", ""]
    var paths: [String] = []
    for name in ["m1", "m2"] {
      var yaml = "version: 1\nname: \(name)\nroot: \(dir)/runs\njournal: \(dir)/journal\nfiles:\n"
      var k = 0
      while k < 300 {
        let folder = folders[next(UInt64(folders.count))]
        for _ in 0..<(1 + next(40)) where k < 300 {
          let dest = (folder.isEmpty ? "" : folder + "/") + "\(name)-\(k).bin"
          yaml += "  - {id: f\(k), url: 'https://example.org/\(k)', destination: '\(dest)'}\n"
          paths.append(dir + "/runs/" + dest)
          k += 1
        }
      }
      if name == "m2" {
        // Last, one run of exactly `listFrom` destinations: crowded only if the final run counts.
        for i in 0..<FactGatherer.PartialLookup.listFrom {
          yaml += "  - {id: last\(i), url: 'https://example.org/l\(i)', destination: 'last/\(i).bin'}\n"
          paths.append(dir + "/runs/last/\(i).bin")
        }
      }
      try yaml.write(toFile: dir + "/\(name).yaml", atomically: true, encoding: .utf8)
    }
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/m1.yaml", dir + "/m2.yaml"])
    #expect(!set.hasErrors)
    var count: [String: Int] = [:]
    for p in paths { count[Paths.folder(of: p), default: 0] += 1 }
    let expected = Set(count.filter { $0.value >= FactGatherer.PartialLookup.listFrom }.keys)
    #expect(!expected.isEmpty && expected.count < count.count, "some folders crowded, some not")
    #expect(FactGatherer.PartialLookup.crowded(set.manifests) == expected)
  }

  @Test func aPathIsInTheFolderBeforeItsLastSlash() {
    typealias L = FactGatherer.PartialLookup
    #expect(L.isIn("/a/b/c", folder: "/a/b"))
    #expect(!L.isIn("/a/bc", folder: "/a/b"))
    #expect(!L.isIn("/a/b/c/d", folder: "/a/b"))
    #expect(L.isIn("/x", folder: "/"))
    #expect(!L.isIn("/x", folder: ""))
    #expect(L.isIn("x", folder: "."))
    for p in ["/a/b/c", "/x", "x", "/a/b/"] { #expect(L.isIn(p, folder: Paths.folder(of: p)), "\(p)") }
  }

  /// From `splitFrom` destinations the facts are gathered on two threads:
  /// they are the facts one thread gathers, for destinations on either side
  /// of the split and in either manifest (files, partials beside them and
  /// held by the journal, a folder that does not exist, the disks).
  @Test func factsGatheredOnTwoThreadsAreOneThreadsFacts() throws {
    let n = FactGatherer.splitFrom
    var journal: [String: TaskState] = [:]
    for (name, count) in [("a", n / 2 + 3), ("b", n)] {
      var yaml = "version: 1\nname: \(name)\nroot: \(dir)/two/\(name)\njournal: \(dir)/journal\nfiles:\n"
      for i in 0..<count {
        let folder = i % 7 == 0 ? "gone" : "d\(i % 3)"
        yaml += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: \(folder)/f\(i).bin}\n"
      }
      try yaml.write(toFile: dir + "/\(name).yaml", atomically: true, encoding: .utf8)
      for d in ["d0", "d1", "d2"] {
        try FileManager.default.createDirectory(atPath: dir + "/two/\(name)/\(d)", withIntermediateDirectories: true)
      }
      // Every fifth destination exists; every eleventh has a partial beside it.
      for i in 0..<count where i % 7 != 0 {
        let folder = dir + "/two/\(name)/d\(i % 3)"
        if i % 5 == 0 { try Data(repeating: 1, count: i).write(to: URL(fileURLWithPath: folder + "/f\(i).bin")) }
        if i % 11 == 0 { try Data("p".utf8).write(to: URL(fileURLWithPath: folder + "/.f\(i).bin.syncfiles-partial")) }
      }
      // A partial the journal holds, in a folder of its own.
      let held = dir + "/two/\(name)/held-\(count - 2)"
      try Data("held".utf8).write(to: URL(fileURLWithPath: held))
      var state = TaskState(id: "\(name)/f\(count - 2)")
      state.partial = TaskState.Partial(
        path: held, offset: 4, totalBytes: nil, etag: "\"e\"", lastModified: nil, dateIsStrong: false)
      journal[state.id] = state
    }
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/a.yaml", dir + "/b.yaml"])
    #expect(set.manifests.count == 2 && !set.hasErrors)
    let total = set.manifests.reduce(0) { $0 + $1.files.count }
    // The split falls inside the second manifest; no held task has a partial beside it too.
    #expect(total / 2 > n / 2 + 3 && (n / 2 + 1) % 11 != 0 && (n - 2) % 11 != 0)
    let split = FactGatherer.gather(for: set.manifests, journal: journal, now: Timestamp.current())
    let one = FactGatherer.Part(set.manifests, journal, 0..<total, digests: true)
    #expect(split.files == one.files)
    // The same disk for each folder; its free bytes are read twice, while other tests write to it.
    #expect(
      split.disks.mapValues { "\($0.device) \($0.mountPoint)" }
        == one.disks.mapValues { "\($0.device) \($0.mountPoint)" })
    #expect(split.siblingPartials == one.siblingPartials)
    // What the files are: each existing destination, each partial, the two held ones.
    let existing = [("a", n / 2 + 3), ("b", n)].map { (_, c) in (0..<c).filter { $0 % 7 != 0 && $0 % 5 == 0 }.count }
    let partials = [("a", n / 2 + 3), ("b", n)].map { (_, c) in (0..<c).filter { $0 % 7 != 0 && $0 % 11 == 0 }.count }
    #expect(split.files.count == existing.reduce(0, +) + partials.reduce(0, +) + 2)
    #expect(split.siblingPartials == partials.reduce(0, +))
  }

  /// The gatherer counts the partials it finds beside destinations; with
  /// none counted the planner looks for none, and with one it finds it.
  @Test func aPartialBesideItsDestinationIsCountedAndPlanned() throws {
    try FileManager.default.createDirectory(atPath: dir + "/p", withIntermediateDirectories: true)
    try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/p/a.bin"))
    let yaml =
      "version: 1\nname: m\nroot: \(dir)/p\njournal: \(dir)/journal\nfiles:\n"
      + "  - {id: a, url: 'https://example.org/a', destination: a.bin}\n"
    try yaml.write(toFile: dir + "/p.yaml", atomically: true, encoding: .utf8)
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/p.yaml"])
    func planned() -> (Facts, PlannedTask) {
      let facts = FactGatherer.gather(for: set.manifests, journal: [:], now: Timestamp.current())
      return (facts, Planner.plan(manifests: set.manifests, journal: [:], facts: facts, journalPath: "/j").tasks[0])
    }
    var (facts, task) = planned()
    #expect(facts.siblingPartials == 0 && !task.leftoverPartial)
    try Data("held".utf8).write(to: URL(fileURLWithPath: dir + "/p/.a.bin.syncfiles-partial"))
    (facts, task) = planned()
    #expect(facts.siblingPartials == 1 && task.leftoverPartial)
    // Facts made by hand (not counted) are looked up path by path.
    var byHand = Facts(now: facts.now, localMinuteOfDay: 0, onACPower: true)
    byHand.files = facts.files
    byHand.disks = facts.disks
    let t = Planner.plan(manifests: set.manifests, journal: [:], facts: byHand, journalPath: "/j").tasks[0]
    #expect(byHand.siblingPartials == nil && t.leftoverPartial)
  }

  /// Each folder is looked at once, by its bytes: a folder's first
  /// destination decides whether it is missing, the rest share that answer.
  @Test func eachFolderIsLookedAtOnce() throws {
    var table = FactGatherer.FolderTable()
    var seen: [String] = []
    let paths = ["/a", "/srv/x/1", "/srv/x/2", "/srv/y/1", "/srv/x/3", "/b", "rel"]
    let answers = paths.map { path in
      table.folder(of: path) { folder in
        seen.append(folder)
        return folder.hasSuffix("y")
      }
    }
    #expect(seen == ["/", "/srv/x", "/srv/y", "."])
    #expect(answers.map(\.0) == ["/", "/srv/x", "/srv/x", "/srv/y", "/srv/x", "/", "."])
    #expect(answers.map(\.1) == [false, false, false, true, false, false, false])
    // Gathered facts: a destination present, one absent, one in a missing folder.
    try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
    try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/data/a.bin"))
    var yaml = "version: 1\nname: m\nroot: \(dir)\njournal: \(dir)/journal\nfiles:\n"
    for d in ["data/a.bin", "data/b.bin", "gone/c.bin", "data/d.bin"] {
      yaml += "  - {id: '\(d.prefix(6).suffix(1))', url: 'https://example.org/\(d)', destination: \(d)}\n"
    }
    try yaml.write(toFile: dir + "/m.yaml", atomically: true, encoding: .utf8)
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/m.yaml"])
    #expect(!set.hasErrors, "\(set.diagnostics)")
    let facts = FactGatherer.gather(for: set.manifests, journal: [:], now: Timestamp.current())
    #expect(Set(facts.files.keys) == [dir + "/data/a.bin"])
    #expect(Set(facts.disks.keys) == [dir + "/data", dir + "/gone"])
  }

  /// A folder with many destinations is listed once; a partial in it is still found, and only it.
  @Test func crowdedFolderFindsItsPartials() throws {
    let n = FactGatherer.PartialLookup.listFrom + 6
    var yaml = "version: 1\nname: m\nroot: \(dir)/data\njournal: \(dir)/journal\nfiles:\n"
    for i in 0..<n { yaml += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: f\(i).bin}\n" }
    try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
    try yaml.write(toFile: dir + "/m.yaml", atomically: true, encoding: .utf8)
    try Data("held".utf8).write(to: URL(fileURLWithPath: dir + "/data/.f3.bin.syncfiles-partial"))
    let set = ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(
      paths: [dir + "/m.yaml"])
    let facts = FactGatherer.gather(for: set.manifests, journal: [:], now: Timestamp.current())
    #expect(facts.files[dir + "/data/.f3.bin.syncfiles-partial"]?.size == 4)
    #expect(facts.files.keys.filter { $0.hasSuffix(".syncfiles-partial") }.count == 1)
  }
}
