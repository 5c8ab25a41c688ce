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
