import Foundation
import Testing

/// External source plugins run for real: shell scripts the tests write into a
/// temp folder, found through SYNCFILES_PLUGIN_PATH, serving `SCHEME://NAME`
/// from a data folder. Each misbehaving plugin must fail only its own task.
@Suite final class SourcePluginTests: ApplyWorkspace {
  let dir = makeTempDir()
  var plugins: String { dir + "/plugins" }
  var data: String { dir + "/data" }

  init() {
    try? FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
  }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// Writes `syncfiles-source-SCHEME`: a shell prelude that reads the request
  /// (saved as request-SCHEME-N.json) into $partial, $offset, $url and $src
  /// (the data file the URL names), then `body`.
  func plugin(_ scheme: String, _ body: String) {
    let path = plugins + "/syncfiles-source-" + scheme
    write(
      """
      #!/bin/sh
      [ "$1" = fetch ] || { echo "usage: $0 fetch" >&2; exit 2; }
      req=$(cat)
      n=$(ls \(dir) | grep -c "^request-\(scheme)-")
      printf '%s\\n' "$req" > \(dir)/request-\(scheme)-$n.json
      str() { printf '%s' "$req" | sed -n "s/.*\\"$1\\":\\"\\([^\\"]*\\)\\".*/\\1/p"; }
      partial=$(str partial_path)
      url=$(str url)
      offset=$(printf '%s' "$req" | sed -n 's/.*"offset":\\([0-9]*\\).*/\\1/p')
      src=\(data)/${url#*://}
      \(body)
      """, to: path)
    chmod(path, 0o755)
  }

  func requests(_ scheme: String) -> [String] {
    (0..<10).compactMap { try? String(contentsOfFile: "\(dir)/request-\(scheme)-\($0).json", encoding: .utf8) }
  }

  var env: [String: String] { ["SYNCFILES_PLUGIN_PATH": plugins, "TOKEN": "s3cr3t-t0ken"] }

  @Test func misbehavingPluginsFailOnlyTheirOwnTaskAndNeverTouchTheDestination() throws {
    let good = testBytes(300_000, seed: 40)
    let server = try FaultServer()
    server.put("h.bin", testBytes(20_000, seed: 41))
    server.routes(["/h.bin": ["file": "h.bin"]])
    for n in ["a", "b", "c", "d", "e", "f", "g"] { write(good, to: data + "/\(n).bin") }
    plugin("good", #"tail -c +$((offset + 1)) "$src" >> "$partial"; echo '{"status":"complete","etag":"v1"}'"#)
    plugin("crash", #"head -c 1000 "$src" >> "$partial"; kill -SEGV $$"#)
    plugin("hang", #"head -c 1000 "$src" >> "$partial"; exec sleep 60"#)
    plugin("junk", #"cat "$src" >> "$partial"; echo 'all done, probably'"#)
    plugin("fails", #"echo "denied for $url" >&2; exit 3"#)
    plugin(
      "escape",
      #"rm -f "$partial"; ln -s \#(dir)/elsewhere "$partial"; cat "$src" >> "$partial"; echo '{"status":"complete"}'"#)
    plugin("dest", #"cat "$src" > "${partial%/*}/g.bin"; echo '{"status":"complete"}'"#)
    manifest([
      "{id: a, url: 'good://a.bin', destination: a.bin, headers: {X-Token: '${TOKEN}'}}",
      "{id: b, url: 'crash://b.bin', destination: b.bin, retry: {attempts: 1}}",
      "{id: c, url: 'hang://c.bin', destination: c.bin, retry: {attempts: 1}, timeout: {stall: 1s}}",
      "{id: d, url: 'junk://d.bin', destination: d.bin, retry: {attempts: 1}}",
      "{id: e, url: 'fails://${TOKEN}/e.bin', destination: e.bin, retry: {attempts: 1}}",
      "{id: f, url: 'escape://f.bin', destination: f.bin, retry: {attempts: 1}}",
      "{id: g, url: 'dest://g.bin', destination: g.bin, retry: {attempts: 1}}",
      "{id: h, url: '\(server.base)/h.bin', destination: h.bin}",
    ])
    let old = Array("old content\n".utf8)
    for n in ["b", "c", "d", "e", "f"] { write(old, to: dir + "/out/\(n).bin") }
    let started = Date()
    let r = try apply(env: env)
    #expect(r.run.status == 1, "\(r.run.stderr)")
    #expect(Date().timeIntervalSince(started) < 20, "the hanging plugin was stopped")

    // The well-behaved plugin and the HTTP task complete.
    #expect(r.outcome("m/a") == "installed", "\(r.tasks["m/a"] ?? [:])")
    #expect(out("a.bin") == good)
    #expect(r.outcome("m/h") == "installed")
    let request = requests("good").first ?? ""
    for field in [
      #""protocol":1"#, #""url":"good://a.bin""#, #""partial_path":"\#(dir)/out/.a.bin.syncfiles-partial""#,
      #""offset":0"#, #""validators":{}"#, #""headers":{"X-Token":"s3cr3t-t0ken"}"#,
    ] {
      #expect(request.contains(field), "\(field) in \(request)")
    }

    // Every other one fails alone, with a clear error; the old file stays byte for byte.
    func error(_ id: String) -> String { r.tasks["m/\(id)"]?["error"] as? String ?? "" }
    for n in ["b", "c", "d", "e", "f"] {
      #expect(r.outcome("m/\(n)") == "failed", "\(n)")
      #expect(out("\(n).bin") == old, "\(n)")
      #expect(!partialExists("\(n).bin"), "\(n)")
    }
    #expect(error("b").contains("syncfiles-source-crash crashed (killed by signal 11)"), "\(error("b"))")
    #expect(error("c").contains("syncfiles-source-hang made no progress for 1s (timeout.stall)"), "\(error("c"))")
    #expect(error("d").contains("printed no JSON result"), "\(error("d"))")
    #expect(error("d").contains("all done, probably"))
    #expect(error("e").contains("syncfiles-source-fails failed (exit 3) without a result: denied for"), "\(error("e"))")
    #expect(error("f").contains("wrote outside its partial_path"), "\(error("f"))")
    #expect(error("g").contains("changed \(dir)/out/g.bin itself"), "\(error("g"))")
    // The secret reached the plugin, and no output.
    #expect(requests("fails").first?.contains("s3cr3t-t0ken") == true)
    #expect(!r.run.stdout.contains("s3cr3t-t0ken") && !r.run.stderr.contains("s3cr3t-t0ken"))
    let journal = (try? String(contentsOfFile: dir + "/state/journal", encoding: .utf8)) ?? ""
    #expect(!journal.contains("s3cr3t-t0ken"))
  }

  @Test func aPartialFromAFailedCallIsResumedFromItsOffset() throws {
    let content = testBytes(200_000, seed: 42)
    write(content, to: data + "/r.bin")
    // Sends half and loses the connection; a call with an offset sends the rest.
    plugin(
      "half",
      #"""
      if [ "$offset" = 0 ]; then
        head -c 100000 "$src" >> "$partial"
        echo '{"status":"failed","error":"connection lost","retryable":true,"etag":"v7","bytes":100000}'
      else
        tail -c +$((offset + 1)) "$src" >> "$partial"
        echo '{"status":"complete","etag":"v7"}'
      fi
      """#)
    manifest(["{id: r, url: 'half://r.bin', destination: r.bin, sha256: \(sha256Hex(content)), retry: {attempts: 1}}"])
    let first = try apply(env: env)
    #expect(first.run.status == 1)
    #expect(first.outcome("m/r") == "failed")
    #expect((first.tasks["m/r"]?["error"] as? String)?.contains("connection lost") == true)
    #expect(partialExists("r.bin"))
    #expect(out("r.bin") == nil)

    let second = try apply(["--force"], env: env)
    #expect(second.run.status == 0, "\(second.run.stderr)")
    #expect(second.outcome("m/r") == "installed")
    #expect(second.int("m/r", "resumed_from") == 100_000)
    #expect(second.int("m/r", "bytes_transferred") == 100_000)
    #expect(out("r.bin") == content)
    let calls = requests("half")
    #expect(calls.count == 2)
    #expect(calls.last?.contains(#""offset":100000"#) == true)
    #expect(calls.last?.contains(#""validators":{"etag":"v7"}"#) == true, "\(calls)")

    // Unchanged next time: the plugin is asked with the installed file's validators.
    plugin("half", #"echo '{"status":"not_modified","etag":"v7"}'"#)
    let third = try apply(["--force"], env: env)
    #expect(third.run.status == 0, "\(third.run.stderr)")
    #expect(third.outcome("m/r") == "unchanged")
    #expect(requests("half").last?.contains(#""offset":0,"validators":{"etag":"v7"}"#) == true)
    #expect(out("r.bin") == content)
    #expect(!partialExists("r.bin"))
  }

  @Test func bytesWithoutAVersionAreNeverContinued() throws {
    let content = testBytes(30_000, seed: 45)
    write(content, to: data + "/n.bin")
    // The first call leaves junk and names no version; the retry must start from 0.
    plugin(
      "nover",
      #"""
      if [ ! -e \#(dir)/tried ]; then
        touch \#(dir)/tried
        head -c 1000 /dev/zero >> "$partial"
        echo '{"status":"failed","error":"hiccup","retryable":true}'
      else
        tail -c +$((offset + 1)) "$src" >> "$partial"
        echo '{"status":"complete"}'
      fi
      """#)
    manifest(["{id: n, url: 'nover://n.bin', destination: n.bin, retry: {attempts: 2, backoff: 1s}}"])
    let r = try apply(env: env)
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("n.bin") == content)
    #expect(requests("nover").map { $0.contains(#""offset":0"#) } == [true, true])
  }

  @Test func aChangedVersionDuringAResumeStartsOver() throws {
    write(testBytes(50_000, seed: 43), to: data + "/v.bin")
    // The first call leaves half of version 1; the source then holds version 2.
    plugin(
      "moving",
      #"""
      if [ "$offset" = 0 ] && [ ! -e \#(dir)/moved ]; then
        head -c 25000 "$src" >> "$partial"
        echo '{"status":"failed","error":"reset","retryable":true,"etag":"one"}'
      else
        touch \#(dir)/moved
        tail -c +$((offset + 1)) "$src" >> "$partial"
        echo '{"status":"complete","etag":"two"}'
      fi
      """#)
    manifest(["{id: v, url: 'moving://v.bin', destination: v.bin, retry: {attempts: 3, backoff: 1s}}"])
    let r = try apply(env: env)
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("v.bin") == testBytes(50_000, seed: 43))
    let offsets = requests("moving").map { $0.contains(#""offset":0"#) ? 0 : 1 }
    #expect(offsets == [0, 1, 0], "resumed once, then started over: \(offsets)")
    #expect(r.run.stderr.contains("version changed during a resume"))
  }

  @Test func theManualsExampleWorksAsPrinted() throws {
    let readme = try String(contentsOfFile: packageRoot + "/Docs/plugins.md", encoding: .utf8)
    let start = try #require(readme.range(of: "#!/bin/sh\n# syncfiles-source-copy"))
    let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
    write(String(readme[start.lowerBound..<end.lowerBound]), to: plugins + "/syncfiles-source-copy")
    chmod(plugins + "/syncfiles-source-copy", 0o755)
    let content = testBytes(70_000, seed: 44)
    write(content, to: data + "/c.bin")
    manifest(["{id: c, url: 'copy://\(data)/c.bin', destination: c.bin}"])
    let r = try apply(env: env)
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("c.bin") == content)
  }
}
