import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The reference's table of file keys and the JSON Schema's file entry are
/// made from the keys' declarations (`FileKeySpec`): both files must say
/// what the declarations say. `scripts/docs` (which sets
/// SYNCFILES_REGENERATE) rewrites them instead of checking.
@Suite struct KeyReferenceTests {
  static let reference = packageRoot + "/Docs/manifest.md"
  static let schema = packageRoot + "/manifests/syncfiles.schema.json"
  static var regenerate: Bool { ProcessInfo.processInfo.environment["SYNCFILES_REGENERATE"] == "1" }

  /// Each table of the reference, by the heading it follows, and its rows as declared.
  static let tables: [(heading: String, rows: [String])] = [
    ("## Top level", KeyReference.settingRows(.top)),
    ("## `limits`", KeyReference.settingRows(.limits)),
    ("## `conditions`", KeyReference.settingRows(.conditions)),
    ("## `hooks`", KeyReference.settingRows(.hooks)),
    ("## File entries", KeyReference.fileRows()),
  ]

  /// Where the rows of the table after `heading` are.
  static func rows(after heading: String, in lines: [String]) throws -> Range<Int> {
    let head = try #require(lines.firstIndex { $0.hasPrefix(heading) }, "no \(heading) in Docs/manifest.md")
    let first = try #require(lines[head...].firstIndex { $0.hasPrefix("| `") })
    let end = lines[first...].firstIndex { !$0.hasPrefix("| `") } ?? lines.endIndex
    return first..<end
  }

  @Test func theReferenceShowsEachKeyAsDeclared() throws {
    var lines = try String(contentsOfFile: Self.reference, encoding: .utf8).components(separatedBy: "\n")
    for (heading, declared) in Self.tables {
      let rows = try Self.rows(after: heading, in: lines)
      if Self.regenerate {
        lines.replaceSubrange(rows, with: declared)
        continue
      }
      let written = Array(lines[rows])
      for (i, row) in declared.enumerated() {
        #expect(i < written.count && written[i] == row, "Docs/manifest.md \(heading), row \(i + 1): run scripts/docs")
      }
      #expect(
        written.count == declared.count, "Docs/manifest.md \(heading): \(written.count) rows, \(declared.count) keys")
    }
    if Self.regenerate {
      try lines.joined(separator: "\n").write(toFile: Self.reference, atomically: true, encoding: .utf8)
    }
  }

  @Test func theSchemaDescribesEachFileKeyAsDeclared() throws {
    let text = try String(contentsOfFile: Self.schema, encoding: .utf8)
    var root = try JSONValue.parse(text)
    let updates: [([String], JSONValue)] = [
      (["$defs", "file", "properties"], try KeyReference.schemaProperties(defaults: false)),
      (["$defs", "file", "required"], .array(KeyReference.requiredKeys.map(JSONValue.string))),
      (["$defs", "fileDefaults", "properties"], try KeyReference.schemaProperties(defaults: true)),
    ]
    if Self.regenerate {
      for (path, value) in updates { root = Self.setting(root, at: path[...], to: value) }
      try (root.serialized(pretty: true) + "\n").write(toFile: Self.schema, atomically: true, encoding: .utf8)
      return
    }
    for (path, value) in updates {
      let same = Self.value(root, at: path[...]) == value
      #expect(same, "manifests/syncfiles.schema.json \(path.joined(separator: ".")): run scripts/docs")
    }
    // The keys of a mapping-valued key are its own definition's properties.
    for (key, children) in KeyReference.childKeys {
      let def = key == "verify" ? ["$defs", key, "items", "properties"] : ["$defs", key, "properties"]
      guard case .object(let props)? = Self.value(root, at: def[...]) else {
        Issue.record("the schema has no \(def.joined(separator: "."))")
        continue
      }
      #expect(props.map(\.0) == children, "\(key)")
    }
  }

  @Test func linksReadAsTheirText() {
    #expect(KeyReference.plainText("a ([large files](large-files.md)) b") == "a (large files) b")
    #expect(KeyReference.plainText("[x] and [y](z)") == "[x] and y")
    #expect(KeyReference.row("`a`", "", "c") == "| `a` | | c |")
  }

  static func value(_ v: JSONValue, at path: ArraySlice<String>) -> JSONValue? {
    guard let key = path.first else { return v }
    guard case .object(let pairs) = v, let next = pairs.first(where: { $0.0 == key })?.1 else { return nil }
    return value(next, at: path.dropFirst())
  }

  static func setting(_ v: JSONValue, at path: ArraySlice<String>, to new: JSONValue) -> JSONValue {
    guard let key = path.first else { return new }
    guard case .object(var pairs) = v else { return v }
    if let i = pairs.firstIndex(where: { $0.0 == key }) {
      pairs[i].1 = setting(pairs[i].1, at: path.dropFirst(), to: new)
    } else {
      pairs.append((key, setting(.object([]), at: path.dropFirst(), to: new)))
    }
    return .object(pairs)
  }
}
