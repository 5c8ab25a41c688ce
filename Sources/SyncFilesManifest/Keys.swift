import SyncFilesCore

/// The keys of the manifest format (SPEC §4), per context.
package enum Keys {
  package static let top = SettingKeySpec.names(in: .top)
  /// The file keys and the keys of their mappings, from their declarations (`FileKeySpec`).
  package static let file = FileKeySpec.names
  /// Keys that name one particular file and so cannot have a default.
  package static let perFileOnly = FileKeySpec.names(in: .perFile)
  /// Keys of a prefix entry (a url ending in `/`), which select and prune its objects.
  package static let prefixOnly = FileKeySpec.names(in: .prefix)
  package static let retry = FileKey.retry.spec.children.map(\.name)
  package static let timeout = FileKey.timeout.spec.children.map(\.name)
  package static let verify = FileKey.verify.spec.children.map(\.name)
  package static let tls = FileKey.tls.spec.children.map(\.name)
  package static let s3 = FileKey.s3.spec.children.map(\.name)
  package static let checksums = FileKey.checksums.spec.children.map(\.name)
  package static let signature = FileKey.signature.spec.children.map(\.name)
  package static let limits = SettingKeySpec.names(in: .limits)
  package static let conditions = SettingKeySpec.names(in: .conditions)
  package static let hooks = SettingKeySpec.names(in: .hooks)

  /// Where a key belongs when it is used in the wrong place.
  package static func home(of key: String) -> String? {
    if limits.contains(key) { return "limits" }
    if conditions.contains(key) { return "conditions" }
    if hooks.contains(key) { return "hooks" }
    if retry.contains(key) { return "retry" }
    if timeout.contains(key) { return "timeout" }
    if tls.contains(key) { return "tls" }
    if file.contains(key) { return "a file entry (under files:)" }
    if top.contains(key) { return "the top level of the manifest" }
    return nil
  }

  /// Headers syncfiles sets itself for resume and revalidation.
  package static let managedHeaders = [
    "range", "if-range", "if-none-match", "if-modified-since", "if-match", "if-unmodified-since",
    "accept-encoding", "content-length", "transfer-encoding", "host", "connection", "te", "upgrade",
  ]
}
