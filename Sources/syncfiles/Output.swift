import ArgumentParser
import SyncFiles

#if canImport(Glibc)
  import Glibc
#endif

/// stdout carries only results; everything else goes to stderr (SPEC §2).
enum Output {
  static func result(_ text: String) {
    print(text)
  }

  /// Keeps values alive until the process exits: freeing a large session
  /// piece by piece (100,000 entries, their tasks and rows) costs a few
  /// percent of a `plan`, and the kernel reclaims it all at once anyway.
  static func keepUntilExit(_ values: Any...) {
    final class Holder {
      let values: [Any]
      init(_ v: [Any]) { values = v }
    }
    _ = Unmanaged.passRetained(Holder(values))
  }

  static func error(_ text: String, newline: Bool = true) {
    var line = text
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
