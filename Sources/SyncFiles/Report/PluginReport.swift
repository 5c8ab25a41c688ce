import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// `syncfiles plugins`: every plugin found, built-in and external.
public enum PluginReport {
  public static func text(_ plugins: [PluginInfo], searchPath: [String]) -> String {
    var table = TextTable(header: ["KIND", "NAME", "PROTOCOL", "PATH", "WHAT"])
    for p in plugins {
      var path = p.path ?? "(built in)"
      if let by = p.shadowedBy { path += " (hidden by \(by))" }
      table.rows.append([p.kind.rawValue, p.name, "\(p.protocolVersion)", path, p.summary])
    }
    let searched =
      searchPath.isEmpty ? "nothing (SYNCFILES_PLUGIN_PATH and PATH are empty)" : searchPath.joined(separator: ":")
    return table.render() + "\n\nexternal plugins are searched for in SYNCFILES_PLUGIN_PATH, then PATH: \(searched)"
  }

  public static func json(_ plugins: [PluginInfo], searchPath: [String]) -> JSONValue {
    .object([
      (
        "plugins",
        .array(
          plugins.map { p in
            .object([
              ("kind", .string(p.kind.rawValue)), ("name", .string(p.name)),
              ("path", p.path.map(JSONValue.string) ?? .null), ("built_in", .bool(p.isBuiltIn)),
              ("protocol", .int(Int64(p.protocolVersion))), ("summary", .string(p.summary)),
              ("shadowed_by", p.shadowedBy.map(JSONValue.string) ?? .null),
            ])
          })
      ),
      ("search_path", .array(searchPath.map(JSONValue.string))),
    ])
  }
}
