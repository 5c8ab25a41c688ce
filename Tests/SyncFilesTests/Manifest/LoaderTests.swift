import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private func manifest(name: String? = nil, root: String? = nil, journal: String? = nil, files: [(String, String)])
  -> String
{
  var s = "version: 1\n"
  if let name { s += "name: \(name)\n" }
  if let root { s += "root: \(root)\n" }
  if let journal { s += "journal: \(journal)\n" }
  s += "files:\n"
  for (id, dest) in files {
    s +=
      "  - id: \(id)\n    url: https://example.org/\(id)\n    destination: \(dest)\n    max_bytes: 1MiB\n    expected_bytes: 1\n"
  }
  return s
}

@Suite struct LoaderTests {
  func load(_ dir: String, _ paths: [String]) -> ManifestSet {
    ManifestLoader(environment: [:], plugins: PluginLocator(searchPath: []), workingDirectory: dir).load(paths: paths)
  }

  /// An entry's id and destination are the ends of its qualified id and its
  /// absolute path (one text each), also past a root that is not ASCII.
  @Test func idAndDestinationAreTheEndsOfTheirLongerTexts() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(
      manifest(name: "data.v2", root: "racine-é", files: [("cafe_1", "été/ça.csv"), ("x", "y")]), to: dir + "/m.yaml")
    let set = load(dir, ["m.yaml"])
    #expect(set.diagnostics.isEmpty, "\(set.diagnostics)")
    let files = set.manifests.flatMap(\.files)
    #expect(files.map(\.qualifiedID) == ["data.v2/cafe_1", "data.v2/x"])
    #expect(files.map(\.id) == ["cafe_1", "x"])
    #expect(files.map(\.destination) == ["été/ça.csv", "y"])
    #expect(files.map(\.destinationPath) == [dir + "/racine-é/été/ça.csv", dir + "/racine-é/y"])
  }

  @Test func folderIsDropInsInNameOrder() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(manifest(files: [("x", "b/x")]), to: dir + "/conf.d/20-b.yml")
    write(manifest(files: [("x", "a/x")]), to: dir + "/conf.d/10-a.yaml")
    write("not a manifest", to: dir + "/conf.d/README.txt")
    write("version: 9", to: dir + "/conf.d/.hidden.yaml")
    try FileManager.default.createDirectory(atPath: dir + "/conf.d/sub.yaml", withIntermediateDirectories: true)
    let set = load(dir, ["conf.d"])
    #expect(set.diagnostics.isEmpty, "\(set.diagnostics)")
    #expect(set.manifests.map(\.path) == ["conf.d/10-a.yaml", "conf.d/20-b.yml"])
    #expect(set.manifests.flatMap(\.files).map(\.qualifiedID) == ["10-a/x", "20-b/x"])
    #expect(set.manifests.first?.root == dir + "/conf.d")
  }

  @Test func missingPathsAndEmptyFolders() {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try? FileManager.default.createDirectory(atPath: dir + "/empty", withIntermediateDirectories: true)
    let set = load(dir, ["nope.yaml", "empty"])
    #expect(
      set.diagnostics.map(\.description) == [
        "nope.yaml: error: cannot read: No such file or directory",
        "empty: warning: folder holds no *.yaml or *.yml manifest",
      ])
  }

  @Test func sameFileTwiceIsReadOnce() {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(manifest(files: [("x", "x")]), to: dir + "/m/a.yaml")
    let set = load(dir, ["m", "m/a.yaml"])
    #expect(set.manifests.count == 1)
    #expect(!set.hasErrors)
    #expect(set.diagnostics.first?.message == "named more than once; read once")
  }

  @Test func duplicateDestinationsAcrossManifests() {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(manifest(name: "one", root: "/srv", files: [("x", "shared/f.csv")]), to: dir + "/a.yaml")
    write(manifest(name: "two", root: "/srv/shared", files: [("y", "f.csv")]), to: dir + "/b.yaml")
    let set = load(dir, ["a.yaml", "b.yaml"])
    let e = errors(set.diagnostics)
    #expect(e.count == 1)
    #expect(e.first?.file == "b.yaml")
    #expect(e.first?.mark == SourceMark(line: 7, column: 18))
    #expect(
      e.first?.message
        == "destination '/srv/shared/f.csv' of 'two/y' is also the destination of 'one/x' (a.yaml:7:18)")
  }

  @Test func duplicateDestinationsInOneManifest() {
    let (_, d0) = decode(manifest(files: [("x", "f"), ("y", "./f")]))
    #expect(d0.isEmpty)  // decode() checks one manifest; the session check is in load()
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(manifest(files: [("x", "f"), ("y", "./f")]), to: dir + "/a.yaml")
    let e = errors(load(dir, ["a.yaml"]).diagnostics)
    #expect(e.first?.message.contains("is also the destination of 'a/x'") == true)
    #expect(e.first?.mark?.line == 10)
  }

  @Test func aFileCannotStandWhereAnotherNeedsAFolder() {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(manifest(files: [("deep", "data/x/y.csv"), ("blocker", "data/x")]), to: dir + "/a.yaml")
    let e = errors(load(dir, ["a.yaml"]).diagnostics)
    #expect(e.count == 1)
    #expect(
      e.first?.message.contains("needs a folder at '\(dir)/data/x', which is the destination file of 'a/blocker'")
        == true)
  }

  /// Every later writer of a path names the first; only the first writer's
  /// folders are checked, so a blocked folder is reported once.
  @Test func threeWritersOfOnePathAndABlockedFolder() {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let files = [("a", "d/f"), ("b", "d/f"), ("c", "./d/f"), ("blocker", "d"), ("e", "x/y")]
    write(manifest(files: files), to: dir + "/a.yaml")
    let e = errors(load(dir, ["a.yaml"]).diagnostics).map(\.message)
    #expect(e.filter { $0.hasSuffix("is also the destination of 'a/a' (a.yaml:5:18)") }.count == 2, "\(e)")
    #expect(e.contains { $0.contains("of 'a/b' is also") } && e.contains { $0.contains("of 'a/c' is also") })
    #expect(e.filter { $0.contains("needs a folder at '\(dir)/d'") }.count == 1, "\(e)")
    #expect(e.count == 3, "\(e)")
  }

  @Test func duplicateManifestNames() {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(manifest(name: "same", files: [("x", "a")]), to: dir + "/a.yaml")
    write(manifest(name: "same", files: [("x", "b")]), to: dir + "/b.yaml")
    let e = errors(load(dir, ["a.yaml", "b.yaml"]).diagnostics)
    #expect(e.first?.message == "manifest name 'same' is also the name of a.yaml; task ids would collide (set 'name:')")
  }

  @Test func oneSessionOneJournal() {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(manifest(journal: "j1", files: [("x", "a")]), to: dir + "/a.yaml")
    write(manifest(journal: "j1", files: [("x", "b")]), to: dir + "/b.yaml")
    write(manifest(journal: "j2", files: [("x", "c")]), to: dir + "/c.yaml")
    let e = errors(load(dir, ["a.yaml", "b.yaml", "c.yaml"]).diagnostics)
    #expect(e.count == 1)
    #expect(e.first?.file == "c.yaml")
    #expect(e.first?.mark == SourceMark(line: 2, column: 10))
  }

  @Test func largeManifestLoadsLinearly() {
    var text = "version: 1\nfiles:\n"
    for i in 0..<10_000 {
      text +=
        "  - {id: f\(i), url: 'https://example.org/\(i)', destination: 'd/f\(i)', expected_bytes: 1MiB, max_bytes: 2MiB}\n"
    }
    let (m, d) = decode(text)
    #expect(m?.files.count == 10_000)
    #expect(errors(d).isEmpty)
  }
}
