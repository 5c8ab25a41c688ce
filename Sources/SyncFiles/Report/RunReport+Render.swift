import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// Renders what `apply` did: a short table for people, SPEC §6 JSON for scripts.
extension RunReport {
  /// Rows for the tasks that did something worth reading (installed, failed,
  /// interrupted); counts for the rest, so a no-op run over 100,000 entries
  /// prints two lines.
  public var text: String {
    var table = TextTable(header: ["TASK", "OUTCOME", "BYTES", "NOTE"])
    for i in tasks.indices where [.installed, .failed, .interrupted].contains(tasks[i].outcome) {
      let t = tasks[i]
      var note = t.error ?? ""
      if t.outcome == .installed {
        note =
          t.resumedFrom > 0 ? "resumed at \(ByteSize.format(t.resumedFrom))" : (t.changed ? "changed" : "same content")
        if let from = t.copiedFrom { note += "; \(t.copyMethod ?? "copy") of \(from) (same sha256)" }
        if let n = t.segments { note += "; in \(n) ranges" }
        if let h = t.hookError { note += "; \(h)" }
      }
      if !t.warnings.isEmpty { note += (note.isEmpty ? "" : "; ") + t.warnings.joined(separator: "; ") }
      // A task the run stopped before it began moved nothing: "-", not "0 B" (and the note says "not started").
      let bytes =
        t.attempts == 0 && t.bytesTransferred == 0 && t.copiedFrom == nil ? "-" : ByteSize.format(t.bytesTransferred)
      table.rows.append([t.id, t.outcome.rawValue, bytes, note])
    }
    var out = table.rows.isEmpty ? "" : table.render() + "\n\n"
    let counts = TaskOutcome.allCases.map { "\(count($0)) \($0.rawValue)" }.joined(separator: ", ")
    out += "\(tasks.count) task\(tasks.count == 1 ? "" : "s"): \(counts); "
    out += "\(ByteSize.format(bytesTransferred)) transferred in \(Self.seconds(elapsed))"
    if let s = stopped { out += "\nstopped early (\(s)): re-run to continue" }
    for h in hookErrors { out += "\nhook failed: \(h)" }
    if let j = journalError { out += "\njournal: \(j)" }
    for p in prefixes {
      out += "\nprefix " + p.line
      for u in p.unusable { out += "\n  not a file: \(u)" }
      for path in p.pruned { out += "\n  pruned \(path) (its object is gone)" }
      for why in p.kept { out += "\n  kept \(why)" }
    }
    return out
  }

  static func seconds(_ s: Double) -> String {
    s < 10 ? "\((s * 100).rounded() / 100)s" : "\(Int(s.rounded()))s"
  }

  public var json: JSONValue {
    func opt(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
    let list: [JSONValue] = tasks.map { t in
      var o: [(String, JSONValue)] = [
        ("id", .string(t.id)), ("outcome", .string(t.outcome.rawValue)),
        ("bytes_transferred", .int(t.bytesTransferred)), ("bytes_discarded", .int(t.bytesDiscarded)),
        ("resumed_from", .int(t.resumedFrom)), ("http_status", t.httpStatus.map { .int(Int64($0)) } ?? .null),
        ("error", opt(t.error)), ("url", .string(t.url)), ("destination", .string(t.destination)),
        ("action", .string(t.action.rawValue)), ("reason", .string(t.reason)), ("attempts", .int(Int64(t.attempts))),
      ]
      if t.outcome == .installed { o.append(("changed", .bool(t.changed))) }
      if let s = t.sha256 { o.append(("sha256", .string(s))) }
      if let from = t.copiedFrom {
        o.append(("copied_from", .string(from)))
        o.append(("copy_method", .string(t.copyMethod ?? "copy")))
      }
      if let n = t.segments { o.append(("segments", .int(Int64(n)))) }
      if !t.checks.isEmpty { o.append(("checks", .array(t.checks.map(JSONValue.string)))) }
      if !t.warnings.isEmpty { o.append(("warnings", .array(t.warnings.map(JSONValue.string)))) }
      if let h = t.hookError { o.append(("hook_error", .string(h))) }
      return .object(o)
    }
    var totals: [(String, JSONValue)] = [("tasks", .int(Int64(tasks.count)))]
    for o in TaskOutcome.allCases { totals.append((o.rawValue, .int(Int64(count(o))))) }
    totals.append(("bytes_transferred", .int(bytesTransferred)))
    totals.append(("bytes_discarded", .int(bytesDiscarded)))
    return .object([
      ("session", .string(session)), ("started", .string(started.rfc3339)), ("journal", .string(journal)),
      ("tasks", .array(list)), ("totals", .object(totals)), ("stopped", opt(stopped)),
      ("elapsed_seconds", .double(elapsed)), ("phases", .object(phases.map { ($0.name, .double($0.seconds)) })),
      ("hook_errors", .array(hookErrors.map(JSONValue.string))),
      ("journal_error", opt(journalError)), ("prefixes", .array(prefixes.map(\.json))),
      ("exit_code", .int(Int64(exitCode))),
    ])
  }
}

extension PrefixOutcome {
  /// `{"id", "summary", "error", "pruned": [PATH], "kept": [WHY], "unusable": [KEY: WHY]}`.
  var json: JSONValue {
    .object([
      ("id", .string(id)), ("summary", .string(line)), ("error", error.map(JSONValue.string) ?? .null),
      ("pruned", .array(pruned.map(JSONValue.string))), ("kept", .array(kept.map(JSONValue.string))),
      ("unusable", .array(unusable.map(JSONValue.string))),
    ])
  }
}
