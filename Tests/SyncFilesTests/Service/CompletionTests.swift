import Foundation
import Testing

/// The shipped completions complete manifest paths (issue 55: `syncfiles
/// apply mir<TAB>` gave nothing), tried in real bash; the zsh and fish
/// files name a file action for the paths.
@Suite struct CompletionTests {
  @Test(arguments: ["apply", "plan", "validate", "status"])
  func bashCompletesManifestPaths(command: String) throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write("version: 1\n", to: dir + "/mirror.yaml")
    try FileManager.default.createDirectory(atPath: dir + "/mirrors.d", withIntermediateDirectories: true)
    let script = """
      source '\(packageRoot)/Docs/completions/syncfiles.bash'
      cd '\(dir)'
      COMP_WORDS=(syncfiles \(command) mir); COMP_CWORD=2; COMP_LINE="syncfiles \(command) mir"; COMP_POINT=${#COMP_LINE}
      _syncfiles syncfiles mir \(command)
      printf '%s\\n' "${COMPREPLY[@]}"
      """
    let r = try run(["-c", script], tool: "bash")
    let offered = Set(r.stdout.split(separator: "\n").map(String.init))
    #expect(offered.isSuperset(of: ["mirror.yaml", "mirrors.d"]), "offered: \(offered) \(r.stderr)")
  }

  /// `--only` offers the task ids of the manifests on the line (the binary
  /// is asked, as argument-parser's custom completions do), and `--journal`
  /// and `--metrics` complete file names.
  @Test func bashCompletesTaskIdsForOnlyAndFilesForJournalAndMetrics() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(
      "version: 1\nname: m\nfiles:\n  - {id: one, url: 'https://e.org/1', destination: a}\n"
        + "  - {id: two, url: 'https://e.org/2', destination: b}\n  - {id: set, url: 's3://b/p/', destination: p/}\n",
      to: dir + "/m.yaml")
    write("", to: dir + "/state.journal")
    let bin = URL(fileURLWithPath: try syncfilesBinary()).deletingLastPathComponent().path
    func offered(_ words: [String], prev: String) throws -> Set<String> {
      let script = """
        source '\(packageRoot)/Docs/completions/syncfiles.bash'
        cd '\(dir)'; PATH='\(bin)':$PATH
        COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); COMP_CWORD=\(words.count - 1)
        COMP_LINE="\(words.joined(separator: " "))"; COMP_POINT=${#COMP_LINE}
        _syncfiles syncfiles '\(words.last!)' '\(prev)'
        printf '%s\\n' "${COMPREPLY[@]}"
        """
      let r = try run(["-c", script], tool: "bash")
      return Set(r.stdout.split(separator: "\n").map(String.init))
    }
    let ids = try offered(["syncfiles", "apply", "m.yaml", "--only", "m/"], prev: "--only")
    #expect(ids == ["m/one", "m/two", "m/set"], "\(ids)")
    let planIds = try offered(["syncfiles", "plan", "--only", "m/t", "m.yaml"].dropLast() + [], prev: "--only")
    #expect(planIds.isEmpty, "no manifest on the line yet: \(planIds)")
    let help = try offered(["syncfiles", "help", "ap"], prev: "help")
    #expect(help.contains("apply"), "help <TAB>: \(help)")
    for option in ["--journal", "--metrics"] {
      let files = try offered(["syncfiles", "apply", option, "sta"], prev: option)
      #expect(files.contains("state.journal"), "\(option): \(files)")
    }
  }

  @Test func zshAndFishCompleteFilesForThePaths() throws {
    let zsh = try String(contentsOfFile: packageRoot + "/Docs/completions/_syncfiles", encoding: .utf8)
    #expect(zsh.contains(":paths:_files"), "zsh: no file action for the paths")
    let fish = try String(contentsOfFile: packageRoot + "/Docs/completions/syncfiles.fish", encoding: .utf8)
    #expect(fish.contains("__fish_complete_path") || fish.contains("-F"), "fish: no file completion")
  }
}
