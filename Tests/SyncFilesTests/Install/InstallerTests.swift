import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private func put(_ p: PartialFile, _ s: String) throws {
  try p.write(Array(s.utf8))
}

private func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

@Suite final class InstallerTests {
  let dir = makeTempDir()
  var root: String { dir + "/root" }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func installsANewFileWithItsModeAndNoPartialLeft() throws {
    let p = try PartialFile(root: root, relative: "tables/new/iris.csv", resume: false)
    try put(p, "a,b\n1,2\n")
    #expect(FileManager.default.fileExists(atPath: root + "/tables/new/.iris.csv.syncfiles-partial"))
    #expect(!FileManager.default.fileExists(atPath: root + "/tables/new/iris.csv"))
    try p.commit(mode: 0o640)
    #expect(read(root + "/tables/new/iris.csv") == "a,b\n1,2\n")
    let attrs = try FileManager.default.attributesOfItem(atPath: root + "/tables/new/iris.csv")
    #expect((attrs[.posixPermissions] as? Int) == 0o640)
    #expect(!FileManager.default.fileExists(atPath: root + "/tables/new/.iris.csv.syncfiles-partial"))
    #expect(PartialFile.path(for: "/srv/a/b.bin") == "/srv/a/.b.bin.syncfiles-partial")
  }

  @Test func theOldFileStaysUntilCommit() throws {
    write("old", to: root + "/f.txt")
    let p = try PartialFile(root: root, relative: "f.txt", resume: false)
    try put(p, "new content")
    #expect(read(root + "/f.txt") == "old")
    try p.commit(mode: nil)
    #expect(read(root + "/f.txt") == "new content")
  }

  @Test func resumeAppendsAndAFreshStartDiscardsStaleData() throws {
    do {
      let p = try PartialFile(root: root, relative: "big.bin", resume: false)
      try put(p, "first half|")
    }
    let r = try PartialFile(root: root, relative: "big.bin", resume: true)
    #expect(r.size == 11)
    try put(r, "second half")
    try r.commit(mode: nil)
    #expect(read(root + "/big.bin") == "first half|second half")
    do {
      let p = try PartialFile(root: root, relative: "other.bin", resume: false)
      try put(p, "stale")
    }
    let fresh = try PartialFile(root: root, relative: "other.bin", resume: false)
    #expect(fresh.size == 0)
    try put(fresh, "x")
    try fresh.truncate()
    try put(fresh, "clean")
    try fresh.commit(mode: nil)
    #expect(read(root + "/other.bin") == "clean")
  }

  @Test func aSymlinkedFolderCannotSteerAWriteOutsideRoot() throws {
    let outside = dir + "/outside"
    try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: root + "/sub", withDestinationPath: outside)
    do {
      _ = try PartialFile(root: root, relative: "sub/evil.txt", resume: false)
      Issue.record("followed a symlink out of root")
    } catch {
      #expect(error.message.contains("is a symlink or not a folder"))
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
  }

  @Test func aSymlinkAtTheDestinationIsReplacedNotFollowed() throws {
    write("precious", to: dir + "/outside.txt")
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: root + "/f.txt", withDestinationPath: dir + "/outside.txt")
    let p = try PartialFile(root: root, relative: "f.txt", resume: false)
    try put(p, "mine")
    try p.commit(mode: nil)
    #expect(read(dir + "/outside.txt") == "precious")
    #expect(read(root + "/f.txt") == "mine")
    let type = try FileManager.default.attributesOfItem(atPath: root + "/f.txt")[.type] as? FileAttributeType
    #expect(type == .typeRegular)
  }

  @Test func aSymlinkedPartialIsNeverWrittenThrough() throws {
    write("precious", to: dir + "/outside.txt")
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: root + "/.f.txt.syncfiles-partial", withDestinationPath: dir + "/outside.txt")
    let p = try PartialFile(root: root, relative: "f.txt", resume: true)
    try put(p, "mine")
    try p.commit(mode: nil)
    #expect(read(dir + "/outside.txt") == "precious")
    #expect(read(root + "/f.txt") == "mine")
  }

  @Test func aFailedInstallKeepsTheOldDestinationAndDropsThePartial() throws {
    try FileManager.default.createDirectory(atPath: root + "/taken/inside", withIntermediateDirectories: true)
    write("keep", to: root + "/taken/inside/x")
    let p = try PartialFile(root: root, relative: "taken", resume: false)
    try put(p, "cannot replace a folder")
    #expect(throws: InstallError.self) { try p.commit(mode: nil) }
    #expect(read(root + "/taken/inside/x") == "keep")
    #expect(!FileManager.default.fileExists(atPath: root + "/.taken.syncfiles-partial"))
  }

  /// Partials in one folder share its descriptor while any of them is
  /// alive (one open for a run's files, not one each); the last one closes it.
  @Test func partialsInOneFolderShareItsDescriptorUntilTheLastGoes() throws {
    var a: PartialFile? = try PartialFile(root: root, relative: "shared/a.bin", resume: false)
    var b: PartialFile? = try PartialFile(root: root, relative: "shared/b.bin", resume: false)
    let other = try PartialFile(root: root, relative: "elsewhere/c.bin", resume: false)
    #expect(a?.folder === b?.folder)
    #expect(a?.folder !== other.folder)
    let fd = try #require(a?.folder?.fd)
    let folder = try #require(
      realpath(root + "/shared", nil).map { p in
        defer { free(p) }; return String(cString: p)
      })
    /// What the descriptor names now (another test may have been given the number since).
    func named() -> String? { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)") }
    #expect(named() == folder)
    a?.discard()
    a = nil
    #expect(named() == folder)
    b?.discard()
    b = nil
    #expect(named() != folder)
    other.discard()
  }

  /// A folder open already is found again for a partial in it at any depth,
  /// for a path written with a double slash too, and never across roots;
  /// each partial lands in its own folder.
  @Test func aFolderOpenAlreadyIsFoundForEachPathThatNamesIt() throws {
    let otherRoot = root + "/other-root"
    try FileManager.default.createDirectory(atPath: otherRoot, withIntermediateDirectories: true)
    // Each folder opened before the ones inside it, so that a lookup that
    // took a parent for the folder would find one.
    let relatives = ["top.bin", "deep/d.bin", "deep/er/a.bin", "deep/er/b.bin", "deep//er/c.bin", "top2.bin"]
    let parts = try relatives.map { try PartialFile(root: root, relative: $0, resume: false) }
    let elsewhere = try PartialFile(root: otherRoot, relative: "deep/er/a.bin", resume: false)
    #expect(parts[2].folder === parts[3].folder && parts[3].folder === parts[4].folder)
    #expect(parts[1].folder !== parts[2].folder && parts[0].folder !== parts[2].folder)
    #expect(parts[0].folder === parts[5].folder && parts[0].folder !== parts[1].folder)
    #expect(elsewhere.folder !== parts[2].folder)
    for (p, relative) in zip(parts + [elsewhere], relatives + ["deep/er/a.bin"]) {
      try put(p, relative)
      try p.commit(mode: nil)
    }
    for relative in relatives { #expect(read(root + "/" + relative) == relative) }
    #expect(read(otherRoot + "/deep/er/a.bin") == "deep/er/a.bin")
  }

  /// A folder removed while partials hold it open is walked to and made again
  /// for the next partial there.
  @Test func aFolderRemovedMeanwhileIsMadeAgain() throws {
    let first = try PartialFile(root: root, relative: "gone/a.bin", resume: false)
    first.discard()
    try FileManager.default.removeItem(atPath: root + "/gone")
    let second = try PartialFile(root: root, relative: "gone/b.bin", resume: false)
    try put(second, "here")
    try second.commit(mode: nil)
    #expect(read(root + "/gone/b.bin") == "here")
    withExtendedLifetime(first) {}
  }

  /// A small body held in memory makes no file (and no folder) until it is
  /// written out or installed; then the file holds exactly its bytes.
  @Test func aHeldBodyMakesNoFileUntilItIsWrittenOutOrInstalled() throws {
    let p = try PartialFile(holding: root, relative: "new/held.txt", capacity: 16)
    try put(p, "held ")
    try put(p, "bytes")
    #expect(p.isHeld && p.size == 10)
    #expect(!FileManager.default.fileExists(atPath: root + "/new"))
    try p.materialize()
    #expect(!p.isHeld && p.size == 10)
    #expect(read(root + "/new/.held.txt.syncfiles-partial") == "held bytes")
    try put(p, "!")
    try p.commit(mode: nil)
    #expect(read(root + "/new/held.txt") == "held bytes!")

    let q = try PartialFile(holding: root, relative: "new/q.txt", capacity: 4)
    try put(q, "abcd")
    try q.truncate(to: 1)
    try q.commit(mode: 0o600)
    #expect(read(root + "/new/q.txt") == "a")
    #expect(!FileManager.default.fileExists(atPath: root + "/new/.q.txt.syncfiles-partial"))
  }

  /// Discarding a held body removes nothing; a held body whose file cannot be
  /// made fails at its install, naming the way it could not take.
  @Test func aHeldBodyThatCannotBeWrittenFailsAtItsInstall() throws {
    let p = try PartialFile(holding: root, relative: "d/x.txt", capacity: 1)
    try put(p, "x")
    p.discard()
    #expect(!p.isHeld && p.size == 0)
    #expect(!FileManager.default.fileExists(atPath: root + "/d"))

    write("a file where a folder must go", to: root + "/blocked")
    let q = try PartialFile(holding: root, relative: "blocked/y.txt", capacity: 1)
    try put(q, "y")
    #expect {
      try q.commit(mode: nil)
    } throws: { error in
      guard case .unsafeFolder(let component, let destination)? = error as? InstallError else { return false }
      return component == "blocked" && destination == root + "/blocked/y.txt"
    }
    #expect(!q.isHeld)
    #expect(read(root + "/blocked") == "a file where a folder must go")
  }

  /// A partial is named after its destination's last component, found byte
  /// by byte for a plain path and by splitting for any other; a path with a
  /// `.` or `..` component is refused before anything is made.
  @Test func aPartialIsNamedAfterTheLastComponentOfItsDestination() throws {
    for (relative, file) in [("p/q/plain.bin", "p/q/plain.bin"), ("p//twice.bin", "p/twice.bin")] {
      let p = try PartialFile(holding: root, relative: relative, capacity: 4)
      try put(p, "abc")
      try p.materialize()
      let folder = Paths.folder(of: root + "/" + file)
      #expect(read(folder + "/." + Paths.fileName(of: file) + ".syncfiles-partial") == "abc", "\(relative)")
      try p.commit(mode: nil)
      #expect(read(root + "/" + file) == "abc", "\(relative)")
    }
    for relative in ["p/../escape.bin", "./here.bin", "p/..", ""] {
      #expect(throws: InstallError.self, "\(relative)") {
        _ = try PartialFile(holding: root, relative: relative, capacity: 4)
      }
    }
  }
}
