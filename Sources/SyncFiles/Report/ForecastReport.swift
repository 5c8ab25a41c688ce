import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// Renders `plan --horizon`: the `forecast` object of the plan's JSON, and a
/// per-day summary after the plan's text.
extension Forecast {
  public var json: JSONValue {
    let runs: [JSONValue] = runs.map { r in
      .object([
        ("time", .string(r.time.rfc3339)), ("tasks", .array(r.tasks.map(JSONValue.string))), ("bytes", .int(r.bytes)),
        ("unknown_sizes", .int(Int64(r.unknownSizes))),
      ])
    }
    let days: [JSONValue] = days.map { d in
      .object([
        ("date", .string(d.date)), ("runs", .int(Int64(d.runs))), ("tasks", .int(Int64(d.tasks))),
        ("bytes", .int(d.bytes)),
      ])
    }
    let busiest: JSONValue =
      busiestHour.map { h in
        .object([("start", .string(h.start.rfc3339)), ("bytes", .int(h.bytes)), ("tasks", .int(Int64(h.tasks)))])
      } ?? .null
    return .object([
      ("from", .string(from.rfc3339)), ("until", .string(until.rfc3339)),
      ("horizon_seconds", .int(until.seconds - from.seconds)), ("runs", .array(runs)),
      ("total_bytes", .int(totalBytes)),
      ("unknown_sizes", .int(Int64(unknownSizes))), ("busiest_hour", busiest), ("days", .array(days)),
      ("warnings", .array(warnings.map(JSONValue.string))),
    ])
  }

  public var text: String {
    let span = TimeSpan(seconds: until.seconds - from.seconds)
    var out = "forecast for \(span), \(from.rfc3339) to \(until.rfc3339) (UTC days; expected_bytes as upper bounds):\n"
    if runs.isEmpty { out += "  nothing is due\n" }
    var table = TextTable(header: ["DAY", "RUNS", "TASKS", "BYTES"])
    for d in days { table.rows.append([d.date, "\(d.runs)", "\(d.tasks)", ByteSize.format(d.bytes)]) }
    if !runs.isEmpty { out += table.render().split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n" }
    out += "  total \(ByteSize.format(totalBytes))"
    if unknownSizes > 0 { out += " (+ \(unknownSizes) run(s) of tasks without expected_bytes)" }
    if let h = busiestHour {
      out += "; busiest hour \(h.start.rfc3339): \(ByteSize.format(h.bytes)) in \(h.tasks) task run(s)"
    }
    for w in warnings { out += "\n  warning: \(w)" }
    return out
  }
}
