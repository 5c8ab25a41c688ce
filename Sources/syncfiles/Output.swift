import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// stdout carries only results; everything else goes to stderr (SPEC §2).
enum Output {
  /// The session's values from the environment, masked in everything
  /// printed once the manifests are read (`mask`): the last line of defence
  /// for a path built from a `${VAR}` (`root:`, `journal:`).
  private static let secrets = Locked(Secrets())

  static func mask(_ values: Secrets) { secrets.withLock { $0 = values } }

  private static func masked(_ text: String) -> String { secrets.withLock { $0 }.redacting(text) }

  static func result(_ text: String) {
    print(masked(text))
  }

  /// Keeps values alive until the process exits: freeing a large session
  /// piece by piece (entries, their tasks and rows) is work the kernel
  /// does all at once anyway when the process exits.
  static func keepUntilExit(_ values: Any...) {
    final class Holder {
      let values: [Any]
      init(_ v: [Any]) { values = v }
    }
    _ = Unmanaged.passRetained(Holder(values))
  }

  static func error(_ text: String, newline: Bool = true) {
    var line = masked(text)
    if newline && !line.hasSuffix("\n") { line += "\n" }
    // write(2) directly: stdio's `stderr` is shared mutable state to Swift 6.
    FileIO.writeAll(2, Array(line.utf8))
  }

  static var stderrIsTTY: Bool { isatty(2) == 1 }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
  case text
  case json
}
