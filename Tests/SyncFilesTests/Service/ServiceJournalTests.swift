import Foundation
import Testing

/// Where the journal goes in a service (SPEC §10.4): a systemd unit's
/// `STATE_DIRECTORY`, else the password database's home when `HOME` is
/// unset, else an error that says how to choose one. Run as `nobody`, with
/// an environment as bare as `env -i` makes it.
@Suite final class ServiceJournalTests {
  let dir = makeTempDir()
  init() throws {
    chmod(dir, 0o777)
    write(Array("hello\n".utf8), to: dir + "/src.txt")
    write(
      """
      version: 1
      name: svc
      root: out
      files:
        - {id: a, url: 'file:src.txt', destination: a.txt, max_bytes: 1K}

      """, to: dir + "/m.yaml")
    chmod(dir + "/m.yaml", 0o644)
    chmod(dir + "/src.txt", 0o644)
  }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// `syncfiles ARGS` as nobody, with only PATH and `env` set.
  func asNobody(_ args: [String], env: [String: String] = [:]) throws -> Run {
    let binary = try syncfilesBinary()
    let vars = ["PATH=/usr/bin:/bin"] + env.map { "\($0.key)=\($0.value)" }
    return try run(
      ["-u", "nobody", "--", "/usr/bin/env", "-i"] + vars + [binary] + args, cwd: dir, tool: "/usr/sbin/runuser")
  }

  @Test func aServiceKeepsItsJournalInItsStateDirectory() throws {
    let state = dir + "/state"
    mkdir(state, 0o755)
    chown(state, 65534, 65534)
    let r = try asNobody(["apply", "--format", "json", "m.yaml"], env: ["STATE_DIRECTORY": state])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(FileManager.default.fileExists(atPath: state + "/journal"), "\(r.stdout)")
    #expect(r.stdout.contains("\"journal\":\"\(state)/journal\""), "\(r.stdout)")
  }

  /// nobody's home is /nonexistent: no home to keep a journal in. The error
  /// names the ways to choose one, and nothing is written to `/`.
  @Test func noHomeAndNoStateDirectoryIsAnErrorThatSaysWhatToDo() throws {
    let r = try asNobody(["apply", "m.yaml"])
    #expect(r.status == 2, "\(r.stdout)\(r.stderr)")
    #expect(
      r.stderr.contains("no place for the journal: HOME is unset and user 65534 has no home folder"), "\(r.stderr)")
    #expect(r.stderr.contains("--journal PATH"))
    #expect(!FileManager.default.fileExists(atPath: "/.local/state/syncfiles"))
  }
}
