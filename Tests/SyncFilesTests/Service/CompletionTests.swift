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

  @Test func zshAndFishCompleteFilesForThePaths() throws {
    let zsh = try String(contentsOfFile: packageRoot + "/Docs/completions/_syncfiles", encoding: .utf8)
    #expect(zsh.contains(":paths:_files"), "zsh: no file action for the paths")
    let fish = try String(contentsOfFile: packageRoot + "/Docs/completions/syncfiles.fish", encoding: .utf8)
    #expect(fish.contains("__fish_complete_path") || fish.contains("-F"), "fish: no file completion")
  }
}
