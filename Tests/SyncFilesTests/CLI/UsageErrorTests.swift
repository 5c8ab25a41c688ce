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

  /// `--rate 10M` and `300K` as curl, wget and aria2c read them (SPEC §9.5); they were refused.
  @Test func rateTakesCurlSuffixes() throws {
    for rate in ["10M", "300K", "1G/s"] {
      let r = try run(["apply", "--dry-run", "--rate", rate, "Examples/quickstart"], cwd: packageRoot)
      #expect(r.status == 0, "--rate \(rate): \(r.stderr)")
    }
    let bad = try run(["apply", "--dry-run", "--rate", "10Q", "Examples/quickstart"], cwd: packageRoot)
    #expect(bad.status == 2 && bad.stderr.contains("unknown unit 'Q'"), "\(bad.stderr)")
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

  /// A subcommand parses its own arguments first (`parseCommand`); anything
  /// it rejects is parsed again from the root, so help and usage errors
  /// name the whole command and keep their exit codes.
  @Test func aSubcommandsUsageAndHelpNameTheWholeCommand() throws {
    let bad = try run(["apply", "--no-such-option", "m.yaml"], cwd: packageRoot)
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("Unknown option '--no-such-option'"), "\(bad.stderr)")
    #expect(bad.stderr.contains("Usage: syncfiles apply [<options>] <paths> ..."), "\(bad.stderr)")
    let help = try run(["status", "--help"], cwd: packageRoot)
    #expect(help.status == 0 && help.stdout.contains("USAGE: syncfiles status"), "\(help.stdout)")
    let version = try run(["plan", "--version"], cwd: packageRoot)
    #expect(version.status == 0 && version.stdout.hasPrefix("syncfiles "), "\(version.stdout) \(version.stderr)")
    let ok = try run(["validate", "Examples/quickstart"], cwd: packageRoot)
    #expect(ok.status == 0, "\(ok.stderr)")
  }
}
