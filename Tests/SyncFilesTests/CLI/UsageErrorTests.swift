import Foundation
import Testing

/// Mistakes that used to pass silently (SPEC §8.2): each is an error now.
@Suite struct UsageErrorTests {
  @Test func onlyThatSelectsNoTaskIsAUsageError() throws {
    for command in [["plan"], ["apply"], ["apply", "--dry-run"]] {
      let r = try run(command + ["--only", "zzz/*", "Examples/quickstart"], cwd: packageRoot)
      #expect(r.status == 2, "\(command): \(r.stdout)")
      #expect(
        r.stderr.contains("--only 'zzz/*' selects no task") && r.stderr.contains("quickstart/iris"), "\(r.stderr)")
      #expect(r.stdout.isEmpty)
    }
  }

  @Test func aDeadlineOfZeroIsAUsageError() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write("version: 1\nfiles:\n", to: dir + "/m.yaml")
    let r = try run(["apply", "--deadline", "0s", "m.yaml"], cwd: dir)
    #expect(r.status == 2 && r.stderr.contains("--deadline 0s leaves no time"), "\(r.stderr)")
  }

  @Test func aDuplicateIdIsStillCheckedInFull() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(
      """
      version: 1
      files:
        - {id: a, url: 'https://example.org/a', destination: a.bin, max_bytes: 1MB}
        - {id: a, url: 'https://example.org/b', destination: ../escape, max_bytes: 1MB}

      """, to: dir + "/m.yaml")
    let r = try run(["validate", "m.yaml"], cwd: dir)
    #expect(r.status == 2)
    #expect(r.stderr.contains("m.yaml:4:10: error: duplicate id 'a'"), "\(r.stderr)")
    #expect(r.stderr.contains("m.yaml:4:") && r.stderr.contains("'../escape'"), "\(r.stderr)")
  }
}
