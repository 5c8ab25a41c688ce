import SyncFilesCore

/// A key of a file entry (or of `defaults`). Its name, type, default, doc,
/// schema, decoding and merge are declared once, in its `FileKeySpec`
/// (`FileKeySpec.table`); the case is only its identity, so that a lookup
/// compares integers.
package enum FileKey: Int, CaseIterable, Sendable {
  case id, url, mirrors, destination, expectedBytes, maxBytes, sha256, checksums, signature, schedule, notBefore, discretionary
  case headers, mode, retry, timeout, onChange, verify, tls, proxy, netrc, cacheMaxAge, segments, s3
  case rate, keepVersions, include, exclude, prune, pruneMax

  package var spec: FileKeySpec { FileKeySpec.table[rawValue] }
  /// The key as written in a manifest.
  var name: String { spec.name }

  /// The key written `name`.
  init?(named name: String) {
    guard let k = FileKeySpec.byName[name] else { return nil }
    self = k
  }
}

/// One key of a file entry, declared once. The decoder's lookup and
/// dispatch, the merge over `defaults`, the key lists, the JSON Schema and
/// the rows of `Docs/manifest.md` all read it (`KeyReference`). A class: the
/// decoder reads a declaration for every key of every entry, and a
/// reference is one count to keep where a struct is a dozen.
package final class FileKeySpec: Sendable {
  /// Where the key may be written.
  package enum Scope: Sendable {
    /// In an entry or in `defaults`.
    case defaultable
    /// In an entry only: it names one file.
    case perFile
    /// In a prefix's entry only: it selects and prunes its objects.
    case prefix
  }

  /// A key of a mapping-valued key (`retry.attempts`), as the reference shows it.
  package struct Child: Sendable {
    package let name: String
    package let type: String
    package let defaultText: String
    package let example: String
    package let rule: String
  }

  package typealias Decode = @Sendable (inout ManifestDecoder, YAMLNode, _ label: String, inout FileFields) -> Void
  package typealias Merge = @Sendable (inout FileFields, _ defaults: FileFields) -> Void

  package let key: FileKey
  package let name: String
  package let scope: Scope
  /// An entry without it fails (`id`, `url`, `destination`).
  package let required: Bool
  /// Whether it makes the entry's options (`EntryOptions`); the entry's own
  /// values (id, url, destination, sizes, sha256, not_before) do not.
  package let makesOptions: Bool
  /// The reference's columns.
  package let type: String
  package let defaultText: String
  package let example: String
  package let rule: String
  /// Its JSON Schema, without the description (which is `rule`), as JSON text.
  package let schema: String
  package let children: [Child]
  package let decode: Decode
  /// Takes the value of `defaults` when the entry sets none; mappings merge key by key.
  package let merge: Merge

  package init(
    key: FileKey, name: String, scope: Scope, required: Bool = false, makesOptions: Bool = true, type: String,
    defaultText: String, example: String, rule: String, schema: String, children: [Child] = [],
    decode: @escaping Decode, merge: @escaping Merge
  ) {
    self.key = key
    self.name = name
    self.scope = scope
    self.required = required
    self.makesOptions = makesOptions
    self.type = type
    self.defaultText = defaultText
    self.example = example
    self.rule = rule
    self.schema = schema
    self.children = children
    self.decode = decode
    self.merge = merge
  }

  /// A key whose value is one field of `FileFields`, taken whole from
  /// `defaults` when the entry does not set it.
  package static func value<T>(
    _ key: FileKey, _ name: String, _ field: WritableKeyPath<FileFields, T?> & Sendable, scope: Scope = .defaultable,
    required: Bool = false, makesOptions: Bool = true, type: String, default defaultText: String, example: String,
    rule: String, schema: String,
    decode: @escaping @Sendable (inout ManifestDecoder, YAMLNode, String) -> T?
  ) -> FileKeySpec {
    FileKeySpec(
      key: key, name: name, scope: scope, required: required, makesOptions: makesOptions, type: type,
      defaultText: defaultText, example: example, rule: rule,
      schema: schema,
      decode: { d, node, label, r in r[keyPath: field] = decode(&d, node, label) },
      merge: { r, d in if r[keyPath: field] == nil { r[keyPath: field] = d[keyPath: field] } })
  }

  /// Every file key, in the order of the reference.
  static let table: [FileKeySpec] = {
    let all = sourceKeys + trustKeys + requestKeys + prefixKeys
    return FileKey.allCases.map { k in all.first { $0.key == k }! }
  }()

  static let byName: [String: FileKey] = Dictionary(uniqueKeysWithValues: table.map { ($0.name, $0.key) })

  /// Every key's name, in the order of the reference.
  static var names: [String] { table.map(\.name) }
  static func names(in scope: Scope) -> [String] { table.filter { $0.scope == scope }.map(\.name) }
}
