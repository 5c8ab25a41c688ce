import ArgumentParser
import Testing

@testable import syncfiles

/// `apply PATH...` is read without argument-parser (`ApplySettings.plain`);
/// what it reads must be what argument-parser reads from the same line.
@Suite struct PlainApplyTests {
  /// The settings argument-parser makes of `apply` and `arguments`.
  func parsed(_ arguments: [String]) throws -> ApplySettings {
    let command = try SyncFilesCommand.parseCommand(["apply"] + arguments)
    let apply = try #require(command as? Apply)
    return apply.settings
  }

  @Test func plainPathsReadAsArgumentParserReadsThem() throws {
    for paths in [["m.yaml"], ["/etc/syncfiles.d", "more.yml", "a b.yaml"], ["./x", "x=y", "é"]] {
      let plain = try #require(ApplySettings.plain(["apply"] + paths))
      #expect(plain == (try parsed(paths)), "\(paths)")
      #expect(plain.paths == paths)
    }
  }

  @Test func anythingElseGoesToArgumentParser() {
    for arguments in [
      ["apply"], ["apply", "-v", "m.yaml"], ["apply", "m.yaml", "--force"], ["apply", "--", "-m.yaml"],
      ["apply", ""], ["apply", "help"], ["plan", "m.yaml"], ["m.yaml"], [],
    ] {
      #expect(ApplySettings.plain(arguments) == nil, "\(arguments)")
    }
  }

  /// A flag argument-parser reads changes what the plain reading would have
  /// made: the comparison above would see a default that differs.
  @Test func theComparisonSeesEachFlag() throws {
    let plain = try #require(ApplySettings.plain(["apply", "m.yaml"]))
    for flags in [
      ["--force"], ["--dry-run"], ["--quiet"], ["-v"], ["--only", "a"], ["--parallel", "2"], ["--rate", "1MB"],
      ["--deadline", "1m"], ["--progress", "never"], ["--metrics", "m.prom"], ["--format", "json"],
      ["--journal", "j"],
    ] {
      #expect(try parsed(flags + ["m.yaml"]) != plain, "\(flags)")
    }
  }
}
