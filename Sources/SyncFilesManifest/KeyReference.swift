import SyncFilesCore

/// The file keys as the reference (`Docs/manifest.md`) and the JSON Schema
/// (`manifests/syncfiles.schema.json`) show them, made from their
/// declarations so that neither can drift from the decoder. A test holds
/// both files to these; `scripts/docs` rewrites them.
package enum KeyReference {
  /// The rows of the reference's table of file keys, a key's own keys
  /// after it (`retry.attempts`).
  package static func fileRows() -> [String] {
    FileKeySpec.table.flatMap { s in
      [row("`\(s.name)`", s.type, s.defaultText, s.example, s.rule)]
        + s.children.map { row("`\(s.name).\($0.name)`", $0.type, $0.defaultText, $0.example, $0.rule) }
    }
  }

  /// The rows of the reference's table of one section's keys (the top level, `limits`, ...).
  package static func settingRows(_ section: SettingKeySpec.Section) -> [String] {
    SettingKeySpec.table.filter { $0.section == section }.map {
      row("`\($0.path)`", $0.type, $0.defaultText, $0.example, $0.rule)
    }
  }

  /// A Markdown table row; an empty cell is one space.
  package static func row(_ cells: String...) -> String {
    "|" + cells.map { $0.isEmpty ? " " : " \($0) " }.joined(separator: "|") + "|"
  }

  /// The schema's `properties` of a file entry, or of `defaults` (the keys it may set).
  package static func schemaProperties(defaults: Bool) throws(JSONValue.ParseError) -> JSONValue {
    var out: [(String, JSONValue)] = []
    for s in FileKeySpec.table where !defaults || s.scope == .defaultable {
      guard case .object(var pairs) = try JSONValue.parse(s.schema) else { continue }
      if !s.rule.isEmpty { pairs.append(("description", .string(plainText(s.rule)))) }
      out.append((s.name, .object(pairs)))
    }
    return .object(out)
  }

  /// The keys a file entry must have.
  package static var requiredKeys: [String] { FileKeySpec.table.filter(\.required).map(\.name) }

  /// The keys of each mapping-valued file key (`retry`: attempts, backoff, max_backoff).
  static var childKeys: [(key: String, children: [String])] {
    FileKeySpec.table.filter { !$0.children.isEmpty }.map { ($0.name, $0.children.map(\.name)) }
  }

  /// Markdown links as their text: `[large files](large-files.md)` reads "large files".
  static func plainText(_ markdown: String) -> String {
    var out = ""
    var rest = Substring(markdown)
    while let open = rest.firstIndex(of: "[") {
      out += rest[..<open]
      let after = rest[rest.index(after: open)...]
      guard let close = after.firstIndex(of: "]"), after[close...].dropFirst().hasPrefix("("),
        let end = after[close...].firstIndex(of: ")")
      else {
        out += "["
        rest = after
        continue
      }
      out += after[..<close]
      rest = after[after.index(after: end)...]
    }
    return out + rest
  }
}
