import SyncFilesCore

/// A key outside file entries: of the top level, `limits`, `conditions` or
/// `hooks`. Each is declared once, here: the decoder's lists of allowed keys
/// and the reference's rows (`Docs/manifest.md`) come from this table.
package struct SettingKeySpec: Sendable {
  package enum Section: String, Sendable, CaseIterable {
    case top, limits, conditions, hooks
  }

  package let section: Section
  package let name: String
  package let type: String
  package let defaultText: String
  package let example: String
  package let rule: String

  package init(_ section: Section, _ name: String, type: String, default d: String, example: String, rule: String) {
    self.section = section
    self.name = name
    self.type = type
    self.defaultText = d
    self.example = example
    self.rule = rule
  }

  /// The key's path in the reference: `limits.rate`; a top-level key is its name.
  package var path: String { section == .top ? name : "\(section.rawValue).\(name)" }

  static func names(in section: Section) -> [String] { table.filter { $0.section == section }.map(\.name) }

  static let table: [SettingKeySpec] = [
    SettingKeySpec(
      .top, "version", type: "integer", default: "required", example: "`version: 1`",
      rule: "must be 1"),
    SettingKeySpec(
      .top, "name", type: "string", default: "the file name without extension", example: "`name: datasets`",
      rule: "task ids become `name/id`"),
    SettingKeySpec(
      .top, "root", type: "path", default: "the manifest's folder", example: "`root: /srv/mirror`",
      rule: "destinations resolve inside it; relative to the manifest's folder"),
    SettingKeySpec(
      .top, "journal", type: "path",
      default:
        "`--journal`, `SYNCFILES_JOURNAL`, else `$STATE_DIRECTORY/journal` (a systemd service), else `~/.local/state/syncfiles/journal` (root: `/var/lib/syncfiles/journal`)",
      example: "`journal: state/journal`",
      rule: "one `apply` at a time per journal"),
    SettingKeySpec(
      .top, "metrics", type: "path", default: "none", example: "`metrics: /var/lib/node_exporter/syncfiles.prom`",
      rule: "a Prometheus text file written after every apply"),
    SettingKeySpec(
      .top, "notify", type: "http(s) URL", default: "none (`apply --notify` overrides)",
      example: "`notify: https://hc-ping.com/${HC_UUID}`",
      rule:
        "pinged at `URL/start` and `URL/EXIT_CODE` (the JSON report as body), as healthchecks.io expects; at most 10 s a ping, never changes the exit code ([service](service.md))"
    ),
    SettingKeySpec(
      .top, "defaults", type: "mapping of file keys", default: "none", example: "`defaults: {schedule: every 6h}`",
      rule: "any file key but `id`, `url`, `mirrors`, `destination`, `sha256`"),
    SettingKeySpec(
      .top, "limits", type: "mapping", default: "see below", example: "`limits: {parallel: 8}`",
      rule: "where manifests of one session disagree, the most restrictive wins"),
    SettingKeySpec(
      .top, "conditions", type: "mapping", default: "none", example: "`conditions: {window: \"01:00-06:00\"}`",
      rule: "hold back `discretionary` files"),
    SettingKeySpec(
      .top, "hooks", type: "mapping", default: "none", example: "`hooks: {on_complete: [notify]}`",
      rule: ""),
    SettingKeySpec(
      .top, "files", type: "list of file entries", default: "required", example: "",
      rule: "an empty list is a warning"),
    SettingKeySpec(
      .limits, "parallel", type: "integer 1–1024", default: "8", example: "`parallel: 16`",
      rule: "transfers at once in the session"),
    SettingKeySpec(
      .limits, "per_host", type: "integer 1–1024", default: "6", example: "`per_host: 4`",
      rule:
        "transfers at once per host: connections on HTTP/1.1, streams on HTTP/2 ([networks](networks.md)); above `parallel` it is a warning"
    ),
    SettingKeySpec(
      .limits, "rate", type: "size per second, or a timetable", default: "none",
      example: "`rate: 20MB/s`, `rate: \"08:00,512K 18:00,10M 23:30,off\"`",
      rule:
        "shared by all transfers; a timetable (rclone's `--bwlimit` syntax, local time) changes the cap at each boundary during a run, and wraps around midnight"
    ),
    SettingKeySpec(
      .limits, "deadline", type: "duration", default: "none", example: "`deadline: 30m`",
      rule: "stop cleanly after it: exit 75, resumable"),
    SettingKeySpec(
      .limits, "segments", type: "integer 1–1024", default: "16", example: "`segments: 8`",
      rule: "byte ranges in flight in the session; 1 turns ranges off"),
    SettingKeySpec(
      .conditions, "window", type: "`HH:MM-HH:MM`", default: "none", example: "`window: \"22:00-06:00\"`",
      rule: "local time; may wrap midnight"),
    SettingKeySpec(
      .conditions, "ac_power", type: "boolean", default: "false", example: "`ac_power: true`",
      rule: "only on mains power (Linux `power_supply`; a machine with no battery is on mains)"),
    SettingKeySpec(
      .hooks, "on_complete", type: "command as a list", default: "none",
      example: "`on_complete: [\"/usr/local/bin/notify\", \"datasets\"]`",
      rule:
        "once per run when any file of this manifest changed; a failed hook runs again on later applies until it succeeds"
    ),
  ]
}
