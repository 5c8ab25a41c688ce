import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// A folder's entries are read up to each name's end (issue 15's CI run:
/// the facts' second thread crashed reading 256 bytes of the last entry's
/// name, past the end of its buffer).
@Suite struct FolderListingTests {
  /// An entry whose short name ends just before a page nobody may read,
  /// as the last record of `readdir`'s buffer can end its heap. Before the
  /// fix the whole 256-byte `d_name` was copied, and this crashed.
  @Test func anEntryAtTheEndOfAMappingIsReadUpToItsName() throws {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let map = try #require(
      mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0).flatMap {
        $0 == MAP_FAILED ? nil : $0
      })
    defer { munmap(map, 2 * page) }
    #expect(mprotect(map + page, page, PROT_NONE) == 0)
    let name = Array("abcdefgh.bin".utf8) + [0]
    let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    // The record 8-byte aligned, as the kernel lays records out; its name's NUL the page's last byte.
    let record = map + page - name.count - offset
    #expect(Int(bitPattern: record) % 8 == 0)
    memset(record, 0, offset)
    name.withUnsafeBytes { (record + offset).copyMemory(from: $0.baseAddress!, byteCount: name.count) }
    let read = String(decoding: FileIO.nameBytes(record.assumingMemoryBound(to: dirent.self)), as: UTF8.self)
    #expect(read == "abcdefgh.bin")
  }

  /// The names a real folder lists, `.` and `..` left out.
  @Test func aFolderListsItsNames() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("listing-\(getpid())-\(UUID())").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let names = (0..<300).map { "f\($0)-" + String(repeating: "x", count: $0 % 200) }
    for n in names { #expect(FileManager.default.createFile(atPath: dir + "/" + n, contents: nil)) }
    #expect(FileIO.listFolder(dir)?.sorted() == names.sorted())
  }

  /// Only the names that end with the suffix, compared as bytes, whatever
  /// comes before it; the others are passed over (the facts list a crowded
  /// folder for its partials).
  @Test func aFolderListsTheNamesEndingWithASuffix() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("suffix-\(getpid())-\(UUID())").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let suffix = PartialFile.suffix
    let wanted = [".a.bin" + suffix, ".é-ü" + suffix, suffix, ".\u{600}" + suffix, ".x" + suffix + suffix]
    let others = ["a.bin", suffix + ".bin", "a" + suffix.dropLast(), String(suffix.dropFirst()), "x"]
    for n in wanted + others { #expect(FileManager.default.createFile(atPath: dir + "/" + n, contents: nil)) }
    #expect(FileIO.listFolder(dir, endingWith: suffix)?.sorted() == wanted.sorted())
    #expect(FileIO.listFolder(dir, endingWith: "")?.sorted() == (wanted + others).sorted())
    #expect(FileIO.listFolder(dir + "/absent", endingWith: suffix) == nil)
  }
}
