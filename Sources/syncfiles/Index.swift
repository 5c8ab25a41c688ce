import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

struct Index: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "index",
    abstract: "Write FILE.zsync beside each file, for clients that fetch only the blocks that changed.",
    discussion: """
      For people who publish files (SPEC §10.1): a zsync control file as \
      zsyncmake 0.6.2 writes it (headers, then a weak and a strong checksum \
      per block), readable by the zsync client and by syncfiles' delta. \
      Each is written whole, then renamed into place.

      Examples:
        syncfiles index disk.img
        syncfiles index --block-size 4096 --url https://images.example.org/disk.img disk.img
        syncfiles index --url https://mirror.example.org/isos/ *.iso
      """)

  @Option(help: "Block size, a power of 2 from 512 to 1048576 (default: 2048, or 4096 from 100 MB).")
  var blockSize: Int?
  @Option(
    help:
      "Where clients fetch the file: a URL for one file, or a URL ending in / that each file's name is appended to (default: the file's name, relative to the .zsync)."
  ) var url: String?
  @Argument(help: "The files to index.", completion: .file()) var files: [String]

  func validate() throws {
    if let b = blockSize, b < 512 || b > 1 << 20 || b & (b - 1) != 0 {
      throw ValidationError("--block-size must be a power of 2 from 512 to 1048576, not \(b)")
    }
    if let u = url, files.count > 1, !u.hasSuffix("/") {
      throw ValidationError("--url for \(files.count) files must end in / (each file's name is appended)")
    }
  }

  func run() throws {
    var failed = false
    for file in files {
      let path = Paths.normalize(file, relativeTo: Runtime.workingDirectory)
      let name = Paths.fileName(of: path)
      var st = stat()
      guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
        Output.error("syncfiles: \(file): not a regular file")
        failed = true
        continue
      }
      let size = Int64(st.st_size)
      let block = blockSize ?? (size < 100_000_000 ? 2048 : 4096)
      let target = url.map { $0.hasSuffix("/") ? $0 + name : $0 } ?? name
      switch ZsyncIndex.make(fileAt: path, blockSize: block, url: target, filename: name) {
      case .failure(let e):
        Output.error("syncfiles: \(file): \(e.message)")
        failed = true
      case .success(let index):
        if let why = Self.write(index.bytes, to: path + ".zsync") {
          Output.error("syncfiles: \(file).zsync: \(why)")
          failed = true
        } else {
          Output.error("syncfiles: wrote \(file).zsync (\(index.blockCount) blocks of \(block) B)")
        }
      }
    }
    if failed { throw ExitCode(ExitStatus.failed.rawValue) }
  }

  /// Written whole beside it, synced, renamed over: a reader never sees half an index.
  static func write(_ bytes: [UInt8], to path: String) -> String? {
    FileIO.replaceWhole(path, with: bytes, mode: 0o644, durable: true).map { "cannot write: \($0.errno.text)" }
  }

}
