import Foundation
import Testing

/// Listing as a capability an external source offers (SPEC §9.4): a
/// plugin that answers `list` serves prefixes through the same expansion,
/// journal and prune as `s3://`; one that does not fails the prefix, and
/// only it.
@Suite final class ListingPluginTests: ApplyWorkspace {
  let dir = makeTempDir()
  var data: String { dir + "/data" }

  init() {
    try? FileManager.default.createDirectory(atPath: dir + "/plugins", withIntermediateDirectories: true)
    // `tree://PATH/` lists the files below data/PATH; `fetch` copies one.
    let script = """
      #!/usr/bin/env python3
      import json, os, sys
      req = json.loads(sys.stdin.readline())
      root = "\(dir)/data/" + req["url"].split("://", 1)[1]
      if sys.argv[1] == "list":
          objs = []
          for top, _, names in os.walk(root):
              for n in names:
                  p = os.path.join(top, n)
                  st = os.stat(p)
                  objs.append({"key": os.path.relpath(p, root), "size": st.st_size, "etag": '"%d"' % st.st_mtime_ns})
          print(json.dumps({"protocol": 1, "status": "complete", "objects": objs}))
      else:
          with open(root, "rb") as f, open(req["partial_path"], "ab") as out:
              out.write(f.read())
          print(json.dumps({"status": "complete", "etag": '"%d"' % os.stat(root).st_mtime_ns}))
      """
    write(script, to: dir + "/plugins/syncfiles-source-tree")
    chmod(dir + "/plugins/syncfiles-source-tree", 0o755)
    write("#!/bin/sh\necho 'usage: fetch' >&2; exit 2\n", to: dir + "/plugins/syncfiles-source-flat")
    chmod(dir + "/plugins/syncfiles-source-flat", 0o755)
  }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  var env: [String: String] { ["SYNCFILES_PLUGIN_PATH": dir + "/plugins"] }

  /// `--only` selects prefixes too (SPEC §10.3): one it does not select is
  /// not listed, so its failure cannot fail the run; one whose objects it
  /// selects by a glob below it is listed.
  @Test func onlyLeavesAnUnselectedPrefixUnlisted() throws {
    write(Array("one".utf8), to: data + "/set/a.txt")
    write(Array("two".utf8), to: data + "/set/sub/b.txt")
    write(Array("single".utf8), to: data + "/single.txt")
    manifest([
      "{id: good, url: 'tree://single.txt', destination: single.txt}",
      "{id: set, url: 'tree://set/', destination: set}",
      "{id: broken, url: 'flat://x/', destination: flat}",
    ])
    let r = try apply(["--only", "m/good"], env: env)
    #expect(r.run.status == 0, "\(r.run.stdout)\(r.run.stderr)")
    #expect(r.outcome("m/good") == "installed")
    #expect(r.outcome("m/set/a.txt") == nil, "an unselected prefix makes no task")
    let prefixes = r.object["prefixes"] as? [[String: Any]] ?? []
    #expect(prefixes.allSatisfy { $0["source"] as? String == "unselected" }, "\(prefixes)")
    let plan = try run(["plan", "--remote", "--only", "m/good", "m.yaml"], cwd: dir, env: env)
    #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
    #expect(plan.stdout.contains("m/broken: not selected by --only"), "\(plan.stdout)")

    let below = try apply(["--only", "m/set/sub/*"], env: env)
    #expect(below.run.status == 0, "\(below.run.stdout)\(below.run.stderr)")
    #expect(below.outcome("m/set/sub/b.txt") == "installed")
    #expect(below.outcome("m/set/a.txt") == "skipped", "listed, not selected")
  }

  /// `prune` never empties a folder by surprise (SPEC §10.3): a listing
  /// that would remove more than `prune_max` (50% by default) removes
  /// nothing and fails the prefix, naming the key; the other objects are
  /// still fetched. An empty listing counts as removing everything.
  @Test func aPruneOverPruneMaxRemovesNothingAndFailsThePrefix() throws {
    for k in 1...6 { write(Array("file \(k)".utf8), to: data + "/set/f\(k).txt") }
    manifest(["{id: set, url: 'tree://set/', destination: set, prune: true}"])
    #expect(try apply([], env: env).run.status == 0)
    for k in 1...4 { try FileManager.default.removeItem(atPath: data + "/set/f\(k).txt") }
    write(Array("new".utf8), to: data + "/set/new.txt")
    let most = try apply([], env: env)
    #expect(most.run.status == 1, "\(most.run.stdout)")
    #expect(most.outcome("m/set/new.txt") == "installed", "the other objects are still fetched")
    #expect((1...6).allSatisfy { out("set/f\($0).txt") != nil }, "nothing removed")
    let error = (most.object["prefixes"] as? [[String: Any]])?.first?["error"] as? String ?? ""
    #expect(error.contains("remove 4 of the 6 files") && error.contains("prune_max: 100%"), "\(error)")

    try FileManager.default.removeItem(atPath: data + "/set")
    let empty = try apply([], env: env)
    #expect(empty.run.status == 1, "an empty listing removes nothing")
    #expect((1...6).allSatisfy { out("set/f\($0).txt") != nil } && out("set/new.txt") != nil)

    manifest(["{id: set, url: 'tree://set/', destination: set, prune: true, prune_max: 100%}"])
    let allowed = try apply([], env: env)
    #expect(allowed.run.status == 0, "\(allowed.run.stdout)")
    #expect((1...6).allSatisfy { out("set/f\($0).txt") == nil } && out("set/new.txt") == nil)
  }

  /// A prefix's destination is a folder and may be written as one
  /// (`models/`); a file entry inside it is allowed, and a listed key that
  /// would land on it is said and skipped (SPEC §10.3).
  @Test func aPrefixFolderWrittenWithASlashHoldsAFileEntryWhoseKeyIsSkipped() throws {
    write(Array("shard".utf8), to: data + "/set/a.bin")
    write(Array("listed readme".utf8), to: data + "/set/README.md")
    write(Array("our readme".utf8), to: dir + "/readme.src")
    manifest([
      "{id: shards, url: 'tree://set/', destination: models/}",
      "{id: readme, url: 'file://\(dir)/readme.src', destination: models/README.md}",
    ])
    let v = try run(["validate", "m.yaml"], cwd: dir, env: env)
    #expect(v.status == 0, "\(v.stdout)\(v.stderr)")
    let r = try apply([], env: env)
    #expect(r.run.status == 0, "\(r.run.stdout)\(r.run.stderr)")
    #expect(out("models/a.bin") == Array("shard".utf8))
    #expect(out("models/README.md") == Array("our readme".utf8))
    #expect(r.outcome("m/shards/README.md") == nil)
    let unusable = (r.object["prefixes"] as? [[String: Any]])?.first?["unusable"] as? [String] ?? []
    #expect(unusable.contains { $0.contains("README.md: lands on the destination of 'm/readme'") }, "\(unusable)")
  }

  @Test func twoPrefixesWhoseFoldersNestAreAnErrorNamingBothAsPrefixes() throws {
    manifest([
      "{id: outer, url: 'tree://set/', destination: models/}",
      "{id: inner, url: 'tree://set/sub/', destination: models/sub/}",
    ])
    let v = try run(["validate", "m.yaml"], cwd: dir, env: env)
    #expect(v.status == 2)
    #expect(
      v.stderr.contains("prefix 'm/inner' lists into the folder") && v.stderr.contains("of prefix 'm/outer'")
        && v.stderr.contains("two prefixes' folders may not nest"), "\(v.stderr)")
    #expect(!v.stderr.contains("destination file"), "a folder is not called a file: \(v.stderr)")
  }

  @Test func aPluginThatListsServesAPrefixAndOneThatDoesNotFailsOnlyItsPrefix() throws {
    write(Array("one".utf8), to: data + "/set/a.txt")
    write(Array("two".utf8), to: data + "/set/sub/b.txt")
    manifest([
      "{id: set, url: 'tree://set/', destination: set, prune: true}",
      "{id: flat, url: 'flat://x/', destination: flat}",
    ])
    let first = try apply([], env: env)
    #expect(first.outcome("m/set/a.txt") == "installed" && first.outcome("m/set/sub/b.txt") == "installed")
    #expect(out("set/sub/b.txt") == Array("two".utf8))
    let prefixes = first.object["prefixes"] as? [[String: Any]] ?? []
    let flat = prefixes.first { $0["id"] as? String == "m/flat" }?["error"] as? String ?? ""
    #expect(flat.contains("syncfiles-source-flat gave no listing"), "\(flat)")
    #expect(first.run.status == 1, "a prefix that cannot be listed fails the run")

    try FileManager.default.removeItem(atPath: data + "/set/a.txt")
    manifest(["{id: set, url: 'tree://set/', destination: set, prune: true}"])
    let second = try apply([], env: env)
    #expect(second.run.status == 0, "\(second.run.stdout)")
    #expect(out("set/a.txt") == nil, "pruned: its object is gone from the plugin's listing")
    #expect(second.outcome("m/set/sub/b.txt") == "skipped", "unchanged in the listing: no fetch")
  }
}
