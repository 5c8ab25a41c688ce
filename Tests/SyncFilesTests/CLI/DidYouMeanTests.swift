import Foundation
import Testing

/// "Did you mean" where a new user slips (issue 55): a command, a URL
/// scheme, a schedule written as a word. Each was refused with no hint.
@Suite struct DidYouMeanTests {
  @Test func aMisspeltCommand() throws {
    let r = try run(["aply", "m.yaml"], cwd: packageRoot)
    #expect(r.status == 2 && r.stderr.contains("unknown command 'aply'; did you mean 'apply'?"), "\(r.stderr)")
    let far = try run(["frobnicate"], cwd: packageRoot)
    #expect(far.status == 2 && !far.stderr.contains("did you mean"), "\(far.stderr)")
  }

  @Test(arguments: [
    ("url: 'htp://x.example/a'", "did you mean 'http:'?"),
    ("url: 'htps://x.example/a'", "did you mean 'https:'?"),
    ("url: 'http://x.example/a', schedule: daily", "did you mean '@daily'?"),
    ("url: 'http://x.example/a', schedule: 15m", "did you mean 'every 15m'?"),
    ("url: 'http://x.example/a', schedule: every6h", "did you mean 'every 6h'?"),
  ])
  func aManifestSlip(entry: (keys: String, hint: String)) throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write("version: 1\nfiles:\n  - {id: a, \(entry.keys), destination: a}\n", to: dir + "/m.yaml")
    let r = try run(["validate", "m.yaml"], cwd: dir)
    #expect(r.status == 2 && r.stderr.contains(entry.hint), "\(r.stderr)")
  }
}
