import Foundation
import Testing

/// Runs the built `syncfiles` binary, as a user or a script would.
struct Run {
  var status: Int32
  var stdout: String
  var stderr: String
}

func syncfilesBinary() throws -> String {
  if let env = ProcessInfo.processInfo.environment["SYNCFILES_BIN"] { return env }
  // The test bundle sits beside the binaries it was built with.
  var candidates: [URL] = []
  for bundle in Bundle.allBundles {
    candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("syncfiles"))
    candidates.append(bundle.bundleURL.appendingPathComponent("syncfiles"))
  }
  candidates.append(URL(fileURLWithPath: packageRoot + "/.build/debug/syncfiles"))
  for c in candidates where FileManager.default.isExecutableFile(atPath: c.path) { return c.path }
  throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "syncfiles binary"])
}

/// Runs the built binary, or with `tool` another program (an absolute path, or a name found on PATH).
func run(_ args: [String], cwd: String? = nil, env: [String: String] = [:], tool: String? = nil) throws -> Run {
  let p = Process()
  var args = args
  switch tool {
  case nil: p.executableURL = URL(fileURLWithPath: try syncfilesBinary())
  case let path? where path.hasPrefix("/"): p.executableURL = URL(fileURLWithPath: path)
  case let name?:
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    args.insert(name, at: 0)
  }
  p.arguments = args
  if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
  var environment = ProcessInfo.processInfo.environment
  for (k, v) in env { environment[k] = v }
  p.environment = environment
  let out = Pipe()
  let err = Pipe()
  p.standardOutput = out
  p.standardError = err
  try p.run()
  // Read both pipes before waiting, so a large output cannot block the child.
  let o = out.fileHandleForReading.readDataToEndOfFile()
  let e = err.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  return Run(
    status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
}

/// Starts the built binary in the background, its output discarded: for a
/// test that kills it, or reads its files while it runs.
/// `stderr`: a file to write its standard error to (else it is dropped).
func startInBackground(_ args: [String], cwd: String, env: [String: String] = [:], stderr: String? = nil) throws
  -> Process
{
  let p = Process()
  p.executableURL = URL(fileURLWithPath: try syncfilesBinary())
  p.arguments = args
  p.currentDirectoryURL = URL(fileURLWithPath: cwd)
  if !env.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(env) { $1 } }
  p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
  if let stderr { _ = FileManager.default.createFile(atPath: stderr, contents: nil) }
  p.standardError = FileHandle(forWritingAtPath: stderr ?? "/dev/null")
  try p.run()
  return p
}

@Suite struct ValidateCommandTests {
  @Test func quickstartIsValid() throws {
    let r = try run(["validate", "Examples/quickstart"], cwd: packageRoot)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout == "ok: 1 manifest, 2 files, 0 warnings\n")
    #expect(r.stderr.isEmpty)
  }

  @Test func errorsGoToStderrWithFileLineColumnAndExit2() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(
      "version: 1\nfiles:\n  - id: a\n    url: https://example.org/a\n    destinaton: a.bin\n    max_bytes: 1MiB\n",
      to: dir + "/m.yaml")
    let r = try run(["validate", "m.yaml"], cwd: dir)
    #expect(r.status == 2)
    #expect(
      r.stderr.contains("m.yaml:5:5: error: unknown key 'destinaton' in a file entry; did you mean 'destination'?\n"))
    #expect(r.stderr.contains("m.yaml:3:5: error: file entry 'a' is missing required key 'destination'\n"))
    #expect(r.stdout == "invalid: 2 errors, 0 warnings\n")
  }

  /// On a terminal each problem is followed by its line of the manifest and
  /// a caret under its column (`script` gives the run a terminal).
  @Test func onATerminalEachProblemShowsItsLineAndColumn() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(
      "version: 1\nfiles:\n  - id: a\n    url: https://example.org/é\n    destinaton: a.bin\n    max_bytes: 1MiB\n",
      to: dir + "/m.yaml")
    let r = try run(
      ["-qec", "'\(try syncfilesBinary())' validate m.yaml", "/dev/null"], cwd: dir, tool: "script")
    let shown = r.stdout.replacingOccurrences(of: "\r\n", with: "\n")
    #expect(
      shown.contains("m.yaml:5:5: error: unknown key 'destinaton' in a file entry; did you mean 'destination'?\n"))
    #expect(
      shown.contains(
        "error: unknown key 'destinaton' in a file entry; did you mean 'destination'?\n    destinaton: a.bin\n    ^\n"))
    #expect(shown.contains("missing required key 'destination'\n  - id: a\n    ^\n"), "\(shown)")
  }

  @Test func warningsAloneExit0() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(
      "version: 1\nfiles:\n  - id: a\n    url: https://example.org/a\n    destination: a\n    schedule: every 1m\n",
      to: dir + "/m.yaml")
    let r = try run(["validate", dir + "/m.yaml"])
    #expect(r.status == 0)
    #expect(r.stderr.contains("/m.yaml:6:15: warning: schedule 'every 1m' is due as often as every 1m"))
  }

  @Test func jsonIsOneObjectOnStdout() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write("version: 1\nfiles:\n  - id: a\n    url: nope\n    destination: a\n", to: dir + "/m.yaml")
    let r = try run(["validate", "--format", "json", "m.yaml"], cwd: dir)
    #expect(r.status == 2)
    #expect(r.stderr.isEmpty)
    let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    #expect(obj["valid"] as? Bool == false)
    #expect(obj["errors"] as? Int == 1)
    let diags = try #require(obj["diagnostics"] as? [[String: Any]])
    #expect(diags.first?["file"] as? String == "m.yaml")
    #expect(diags.first?["line"] as? Int == 4)
    #expect(diags.first?["column"] as? Int == 10)
    #expect(diags.first?["severity"] as? String == "error")
  }

  @Test func secretsNeverReachOutput() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(
      "version: 1\nfiles:\n  - id: a\n    url: 'https://example.org/a?t=${TOK}'\n    destination: a\n    headers: { Authorization: \"Bearer ${TOK}\", X-Bad: \"${BAD}\" }\n",
      to: dir + "/m.yaml")
    let r = try run(
      ["validate", "--format", "json", "m.yaml"], cwd: dir, env: ["TOK": "topsecret-123", "BAD": "a\nb-topsecret"])
    #expect(r.status == 2)
    #expect(!r.stdout.contains("topsecret") && !r.stderr.contains("topsecret"))
    #expect(r.stdout.contains("header 'X-Bad' contains a line break"))
  }

  /// The session's checks (destinations that collide, journals that differ)
  /// run after the decoder, on expanded paths: a `${VAR}` in `root:` or
  /// `journal:` must be masked there too. Found by the manifest fuzzer.
  @Test func sessionChecksMaskExpandedValues() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let entry = { (id: String, dest: String) in "  - id: \(id)\n    url: http://h/\(id)\n    destination: \(dest)\n" }
    write(
      "version: 1\nroot: out/${TOK}\njournal: j/${TOK}\nfiles:\n" + entry("a", "d") + entry("b", "d/b")
        + entry("c", "d"),
      to: dir + "/one.yaml")
    write("version: 1\njournal: other/${TOK}\nfiles:\n" + entry("x", "x"), to: dir + "/two.yaml")
    let r = try run(["validate", "one.yaml", "two.yaml"], cwd: dir, env: ["TOK": "topsecret-123"])
    #expect(r.status == 2)
    // Text diagnostics go to stderr.
    #expect(r.stderr.contains("needs a folder at") && r.stderr.contains("is also the destination of"))
    #expect(r.stderr.contains("one session has one journal"))
    #expect(!r.stdout.contains("topsecret") && !r.stderr.contains("topsecret"))
    #expect(r.stderr.contains("out/<redacted>/d"))
  }

  @Test func usageErrorsExit2() throws {
    var r = try run(["validate"])
    #expect(r.status == 2)
    #expect(r.stderr.contains("Missing expected argument"))
    r = try run(["validate", "--format", "xml", "x.yaml"])
    #expect(r.status == 2)
    r = try run(["frobnicate"])
    #expect(r.status == 2)
    r = try run(["validate", "/nonexistent/m.yaml"])
    #expect(r.status == 2)
    #expect(r.stderr == "/nonexistent/m.yaml: error: cannot read: No such file or directory\n")
  }

  @Test func helpAndVersion() throws {
    var r = try run(["--help"])
    #expect(r.status == 0)
    for word in ["apply", "plan", "validate", "status", "plugins", "Exit codes"] {
      #expect(r.stdout.contains(word), "\(word)")
    }
    r = try run(["--version"])
    #expect(r.status == 0)
    #expect(r.stdout.hasPrefix("syncfiles 0.1.0 (libcurl 7."))
    #expect(r.stdout.contains("libyaml 0.2.5"))
  }
}
