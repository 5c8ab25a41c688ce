import ArgumentParser
import Testing

@testable import SyncFiles
@testable import syncfiles

/// `apply` lines are read without argument-parser where they are plain
/// (`ApplySettings.plain`); the run takes that reading only when it
/// validates. Whenever it does, argument-parser must read the same line to
/// the same settings.
@Suite struct PlainApplyTests {
  /// The settings argument-parser makes of `arguments`, or nil when it refuses the line.
  func parsed(_ arguments: [String]) -> ApplySettings? {
    guard let command = try? SyncFilesCommand.parseCommand(arguments) else { return nil }
    return (command as? Apply)?.settings
  }

  /// What the run does with `arguments`: the plain reading when it validates.
  func taken(_ arguments: [String]) -> ApplySettings? {
    guard let plain = ApplySettings.plain(arguments), (try? plain.validate()) != nil else { return nil }
    return plain
  }

  @Test func theShippedLinesAreReadPlainlyAsArgumentParserReadsThem() throws {
    let lines = [
      ["apply", "m.yaml"], ["apply", "/etc/syncfiles.d", "more.yml", "a b.yaml"],
      // Examples/cron, Examples/systemd and the benchmark's line.
      [
        "apply", "--quiet", "--progress", "never", "--deadline", "50m", "--metrics",
        "/var/lib/node_exporter/textfile_collector/syncfiles.prom", "/etc/syncfiles.d",
      ],
      ["apply", "--progress", "never", "--deadline", "50m", "/etc/syncfiles.d"], ["apply", "--quiet", "m.yaml"],
      ["apply", "--format=json", "-v", "--only", "a/*", "--only=b", "m.yaml", "--force", "--parallel", "3"],
      ["apply", "--rate", "20MB/s", "--journal", "j", "x=y", "é"],
    ]
    for line in lines {
      let plain = try #require(taken(line), "\(line)")
      #expect(plain == parsed(line), "\(line)")
    }
  }

  @Test func anythingElseGoesToArgumentParser() {
    for line in [
      ["apply"], ["apply", "--force"], ["apply", "--", "-m.yaml"], ["apply", ""], ["apply", "help"],
      ["plan", "m.yaml"], ["m.yaml"], [], ["apply", "-h", "m.yaml"], ["apply", "--help"],
      ["apply", "--version", "m.yaml"], ["apply", "--force", "--force", "m.yaml"],
      ["apply", "--rate", "1", "--rate", "2", "m.yaml"], ["apply", "--parallel", "x", "m.yaml"],
      ["apply", "--parallel", "-1", "m.yaml"], ["apply", "--progress", "sometimes", "m.yaml"],
      ["apply", "--format", "yaml", "m.yaml"], ["apply", "--deadline", "m.yaml"], ["apply", "m.yaml", "--deadline"],
      ["apply", "--force=true", "m.yaml"], ["apply", "-vq", "m.yaml"], ["apply", "--only=", "m.yaml"],
      ["apply", "--no-such-option", "m.yaml"], ["apply", "-", "m.yaml"],
    ] {
      #expect(ApplySettings.plain(line) == nil, "\(line)")
    }
  }

  /// A value that does not validate (`--parallel 0`) is read plainly, but
  /// the run leaves the line to argument-parser, which says why.
  @Test func aLineThatDoesNotValidateIsLeftToArgumentParser() {
    for line in [
      ["apply", "--parallel", "0", "m.yaml"], ["apply", "--deadline", "0s", "m.yaml"],
      ["apply", "--now", "2026-11-22T03:00:00Z", "m.yaml"], ["apply", "--rate", "fast", "m.yaml"],
    ] {
      #expect(ApplySettings.plain(line) != nil && taken(line) == nil && parsed(line) == nil, "\(line)")
    }
  }

  /// Lines drawn from every option, value and shape: whenever the run
  /// would take the plain reading, argument-parser reads the same.
  @Test func randomLinesAreReadAsArgumentParserReadsThem() {
    let words: [[String]] = [
      ["m.yaml"], ["d/"], ["x=y"], ["--force"], ["--dry-run"], ["--quiet"], ["-v"], ["--verbose"],
      ["--only", "a/*"], ["--only=b"], ["--parallel", "4"], ["--parallel=2"], ["--parallel", "0"],
      ["--parallel", "+3"], ["--rate", "1MB"], ["--rate=20MB/s"], ["--rate", "x"], ["--deadline", "30m"],
      ["--deadline=1h"], ["--deadline", "0s"], ["--progress", "never"], ["--progress=always"],
      ["--progress", "auto"], ["--metrics", "m.prom"], ["--metrics="], ["--format", "json"],
      ["--format=text"], ["--journal", "j"], ["--journal=/tmp/j"], ["--now", "2026-11-22T03:00:00Z"],
      ["--"], ["-x"], ["help"], [""], ["--format"], ["--only"], ["-"], ["--force=1"],
    ]
    var rng = SplitMix(seed: 2_026)
    var plainly = 0
    for _ in 0..<6_000 {
      var line = ["apply"]
      for _ in 0..<Int(rng.next() % 7) { line += words[Int(rng.next() % UInt64(words.count))] }
      guard let plain = taken(line) else { continue }
      plainly += 1
      #expect(parsed(line) == plain, "\(line)")
    }
    #expect(plainly > 250)  // the draw reaches the plain reading, not only its refusals
  }
}
