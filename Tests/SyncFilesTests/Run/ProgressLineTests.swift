import Foundation
import Testing

/// The progress line's total follows the sizes learned during the run, and
/// the line ends at 100 % (SPEC §10.3), not at the share of the
/// `expected_bytes` upper bounds that the files turned out to use.
@Suite final class ProgressLineTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func theLineEndsAtAHundredPercentOfWhatArrived() throws {
    server.put("a.bin", testBytes(60_000, seed: 68))
    server.put("b.bin", testBytes(30_000, seed: 69))
    server.routes(["/a.bin": ["file": "a.bin"], "/b.bin": ["file": "b.bin"]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, expected_bytes: 100000}",
      "{id: b, url: '\(server.base)/b.bin', destination: b.bin, expected_bytes: 50000}",
    ])
    let r = try run(["apply", "--progress", "always", "m.yaml"], cwd: dir)
    #expect(r.status == 0, "\(r.stderr)")
    let shown = r.stderr.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).filter { $0.contains("%)") }
    try #require(!shown.isEmpty, "no progress line: \(r.stderr)")
    #expect(shown.last!.contains("(100%)"), "the last line: \(shown.last!)")
    #expect(shown.last!.contains("2/2"), "\(shown.last!)")
  }
}
