import Foundation
import Testing

@testable import SyncFilesVerify

/// `syncfiles index` (SPEC §10.1): the control file is byte for byte what
/// zsyncmake 0.6.2 writes for the same file, and the zsync client rebuilds
/// a changed file from an old one with it, over nginx.
@Suite final class ZsyncIndexTests {
  let dir = makeTempDir()
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test(arguments: [(1, 2048), (2048, 2048), (10_000, 512), (1_000_003, 2048), (3_000_000, 4096)])
  func theIndexIsZsyncmakes(size: Int, blockSize: Int) throws {
    let file = dir + "/f\(size)-\(blockSize).bin"
    write(testBytes(size, seed: UInt64(size)), to: file)
    let name = (file as NSString).lastPathComponent
    let ref = try run(["-b", "\(blockSize)", "-u", name, "-o", file + ".ref", file], tool: "zsyncmake")
    #expect(ref.status == 0, "\(ref.stderr)")
    let ours = try run(["index", "--block-size", "\(blockSize)", "--url", name, file])
    #expect(ours.status == 0, "\(ours.stderr)")
    #expect(readBytes(file + ".zsync") == readBytes(file + ".ref"), "\(name): ours differs from zsyncmake's")
  }

  @Test func theZsyncClientRebuildsAChangedFileFromAnOldOne() throws {
    let nginx = try NginxServer()
    // The new version: the old one with 5,000 bytes inserted near its middle.
    let old = testBytes(600_000, seed: 41)
    var new = Array(old[..<300_001])
    new += testBytes(5_000, seed: 42)
    new += old[300_001...]
    nginx.put("rel/disk.img", new, mtime: timeFromNow(-60))
    write(new, to: dir + "/disk.img")
    let made = try run(["index", "--url", nginx.base + "/rel/disk.img", dir + "/disk.img"])
    #expect(made.status == 0, "\(made.stderr)")
    write(old, to: dir + "/seed.img")
    let z = try run(
      ["-q", "-i", dir + "/seed.img", "-o", dir + "/out.img", dir + "/disk.img.zsync"], cwd: dir, tool: "zsync")
    #expect(z.status == 0, "\(z.stdout)\(z.stderr)")
    #expect(readBytes(dir + "/out.img") == new, "zsync rebuilt another file")
    let log = (try? String(contentsOfFile: nginx.dir + "/bytes.log", encoding: .utf8)) ?? ""
    let sent = log.split(separator: "\n").compactMap { Int($0.split(separator: " ").first ?? "") }.reduce(0, +)
    #expect(sent > 0 && sent < 100_000, "zsync fetched \(sent) bytes of a 605,000-byte file with 5,000 new")
  }

  @Test func badBlockSizesAreRefused() throws {
    write(testBytes(10, seed: 1), to: dir + "/a")
    for b in ["1000", "256", "2097152"] {
      let r = try run(["index", "--block-size", b, dir + "/a"])
      #expect(r.status == 2 && r.stderr.contains("--block-size must be a power of 2 from 512 to 1048576"))
    }
    let many = try run(["index", "--url", "https://x/a", dir + "/a", dir + "/a"])
    #expect(many.status == 2 && many.stderr.contains("must end in /"))
  }
}

/// A fetched index is read whole or refused with its reason (SPEC §10.1),
/// never allocating more than its own bytes.
@Suite struct ZsyncIndexParseTests {
  func index(_ size: Int, blockSize: Int = 2048) throws -> ZsyncIndex {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(testBytes(size, seed: 7), to: dir + "/f")
    return try ZsyncIndex.make(fileAt: dir + "/f", blockSize: blockSize, url: "f", filename: "f").get()
  }

  @Test func whatIsWrittenReadsBackAsItWas() throws {
    for (size, block) in [(1, 512), (5000, 2048), (1_000_000, 4096)] {
      let i = try index(size, blockSize: block)
      #expect(try ZsyncIndex.parse(i.bytes).get() == i)
    }
  }

  @Test func hostileIndexesAreRefusedWithTheirReason() throws {
    let good = try index(10_000)
    func refused(_ bytes: [UInt8], maxBytes: Int64? = nil) -> String {
      guard case .failure(let e) = ZsyncIndex.parse(bytes, maxBytes: maxBytes) else { return "accepted" }
      return e.description
    }
    func header(_ name: String, _ value: String) -> [UInt8] {
      let text = String(decoding: good.bytes, as: UTF8.self)
      let edited = text.split(separator: "\n", omittingEmptySubsequences: false).map {
        $0.hasPrefix(name + ":") ? name + ": " + value : String($0)
      }.joined(separator: "\n")
      return Array(edited.utf8)
    }
    #expect(refused(Array("<html>not found</html>\n\n".utf8)).contains("not a zsync control file"))
    #expect(refused(header("Blocksize", "1000")).contains("block size 1000 is not a power of two"))
    #expect(refused(header("Blocksize", "2097152")).contains("not a power of two from 512 B to 1 MiB"))
    #expect(refused(good.bytes, maxBytes: 5000).contains("more than max_bytes (5000)"))
    // A Length of a petabyte with the table of 10 KB: refused by its size, nothing allocated for it.
    #expect(refused(header("Length", "1000000000000000")).contains("block checksums stop after"))
    #expect(refused(good.bytes + [0, 1, 2]).contains("holds \(good.blocks.count + 3) bytes of block checksums"))
    #expect(refused(Array(good.bytes.dropLast(4))).contains("stop after"))
    #expect(refused(header("Hash-Lengths", "2,9,3")).contains("Hash-Lengths"))
    #expect(refused(header("SHA-1", "xyz")).contains("SHA-1"))
    #expect(refused(Array("zsync: 0.6.2\nZ-Map2: 3\nBlocksize: 2048\n\n".utf8)).contains("gzip"))
  }
}
