import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// Renders a plan: a table for people, SPEC §6 JSON for scripts.
public enum PlanReport {
  public static func text(_ p: SessionPlan) -> String {
    var out = TextOut()
    write(p, to: &out)
    return out.text
  }

  /// The plan as text, its table written row by row: a 100,000-task plan is
  /// never held as rows of cells nor as one text (`out` passes it on as it fills).
  public static func write(_ p: SessionPlan, to out: inout TextOut) {
    let header = ["TASK", "ACTION", "BYTES", "WHY"]
    guard !p.tasks.isEmpty else {
      out.write("no tasks\n")
      return out.write(summary(p, counts: [:], unknown: 0) + prefixLines(p))
    }
    let counts = p.counts
    var unknown = 0
    // Widths first, with no cell made but the byte counts of running tasks:
    // the action column's widest is among the actions present. Tasks are
    // read in place: copying each task (and its entry) cost more than the table.
    p.tasks.withUnsafeBufferPointer { tasks in
      var widths = header.map(TextTable.width)
      for a in Action.allCases where counts[a] != nil { widths[1] = max(widths[1], TextTable.width(a.rawValue)) }
      for t in UnsafePointer(tasks.baseAddress!)..<tasks.baseAddress! + tasks.count {
        widths[0] = max(widths[0], TextTable.width(t.pointee.entry.qualifiedID))
        guard t.pointee.action.runs else { continue }
        let bytes = t.pointee.bytesToTransfer
        widths[2] = max(widths[2], TextTable.width(bytesCell(runs: true, bytes)))
        if bytes == nil { unknown += 1 }
      }
      TextTable.line(header, widths: widths, into: &out.bytes)
      // The action cell, and for a task that moves nothing the byte cell
      // after it, are a few texts: padded once, copied into each row.
      let fixed = Action.allCases.map { a -> (action: [UInt8], idle: [UInt8]) in
        var cell: [UInt8] = []
        TextTable.cell(a.rawValue, width: widths[1], into: &cell)
        var idle = cell
        TextTable.cell(bytesCell(runs: false, nil), width: widths[2], into: &idle)
        return (cell, idle)
      }
      for t in UnsafePointer(tasks.baseAddress!)..<tasks.baseAddress! + tasks.count {
        out.bytes.append(0x0A)
        TextTable.cell(t.pointee.entry.qualifiedID, width: widths[0], into: &out.bytes)
        let action = t.pointee.action
        if action.runs {
          out.bytes += fixed[action.ordinal].action
          TextTable.cell(bytesCell(runs: true, t.pointee.bytesToTransfer), width: widths[2], into: &out.bytes)
        } else {
          out.bytes += fixed[action.ordinal].idle
        }
        out.bytes.appendUTF8(t.pointee.reason)
        if action == .revalidate, let note = requestNote(t.pointee.request) { out.write("; " + note) }
        if action.runs && TrustCheck.applies(to: t.pointee.entry) {
          out.write("; checks: " + TrustCheck.planned(for: t.pointee.entry).joined(separator: "; "))
        }
        out.flushIfFull()
      }
    }
    out.write("\n")
    out.write(summary(p, counts: counts, unknown: unknown) + prefixLines(p))
  }

  /// Per prefix entry: where its objects came from, the keys that cannot be
  /// files, and what `prune` would remove.
  static func prefixLines(_ p: SessionPlan) -> String {
    var out = ""
    for s in p.prefixes {
      out += "\nprefix " + s.text
      for u in s.unusable { out += "\n  not a file: \(u)" }
      for r in s.prunes { out += "\n  prune \(r.path) (its object is gone; removed only if unchanged since installed)" }
      if let refused = s.pruneRefused { out += "\n  \(refused)" }
      if s.pruneAsked, case .recorded = s.source {
        out += "\n  prune: needs a listing made now (apply, or plan --remote)"
      }
    }
    return out
  }

  /// The lines under the table: counts, bytes, disks, limits, journal.
  private static func summary(_ p: SessionPlan, counts byAction: [Action: Int], unknown: Int) -> String {
    let counts = Action.allCases.map { "\(byAction[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
    var out = "\n\(p.tasks.count) task\(p.tasks.count == 1 ? "" : "s"): \(counts); "
    out += "\(ByteSize.format(p.expectedBytes)) to transfer"
    out += unknown > 0 ? " (+ \(unknown) of unknown size)\n" : "\n"
    for d in p.disk {
      out += "disk \(d.path): \(ByteSize.format(d.neededBytes)) needed, \(ByteSize.format(d.freeBytes)) free: "
      if d.ok {
        out += "ok\n"
      } else {
        let shown = d.tasks.prefix(10).joined(separator: ", ")
        out += "DOES NOT FIT (\(shown)\(d.tasks.count > 10 ? ", … \(d.tasks.count - 10) more" : ""))\n"
      }
    }
    let l = p.limits
    out += "limits: parallel \(l.parallel ?? Limits.defaultParallel), per_host \(l.perHost ?? Limits.defaultPerHost)"
    out +=
      ", rate \(l.rate.map(\.description) ?? "none"), deadline \(l.deadline.map(\.description) ?? "none")\n"
    out += "journal: \(p.journal)"
    return out
  }

  /// The reason, and for a revalidation that cannot be conditional, why not.
  /// A task's BYTES cell: `-` when it moves nothing, `?` when the size is unknown.
  private static func bytesCell(runs: Bool, _ bytes: Int64?) -> String {
    runs ? (bytes.map(ByteSize.format) ?? "?") : "-"
  }

  /// The reason, and for a revalidation that cannot be conditional, why it fetches whole.
  static func why(_ t: PlannedTask) -> String {
    guard t.action == .revalidate, let note = requestNote(t.request) else { return t.reason }
    return t.reason + "; " + note
  }

  /// What a revalidation's reason adds about its request: nothing when it is conditional.
  private static func requestNote(_ request: RequestPolicy) -> String? {
    request.isConditional ? nil : request.note
  }

  /// `limits.rate`: bytes per second, a timetable as written, or null.
  static func rateJSON(_ cap: RateCap?) -> JSONValue {
    guard let cap else { return .null }
    if cap.isConstant, let r = cap.steps[0].rate { return .int(r) }
    return .string(cap.description)
  }

  public static func json(_ p: SessionPlan) -> JSONValue {
    func time(_ t: Timestamp?) -> JSONValue { t.map { .string($0.rfc3339) } ?? .null }
    func int(_ v: Int64?) -> JSONValue { v.map(JSONValue.int) ?? .null }
    let tasks: [JSONValue] = p.tasks.map { t in
      .object([
        ("id", .string(t.id)), ("url", .string(t.entry.url.display)),
        ("destination", .string(t.entry.destinationPath)), ("action", .string(t.action.rawValue)),
        ("reason", .string(why(t))), ("request", t.runs ? .string(t.request.note) : .null),
        ("resume_offset", .int(t.resumeOffset)),
        ("expected_bytes", int(t.entry.expectedBytes)), ("bytes_to_transfer", int(t.bytesToTransfer)),
        ("next_due", time(t.nextDue)), ("segments", t.segments.map { .int(Int64($0)) } ?? .null),
        ("cache_max_age", .int(t.entry.cacheMaxAge.seconds)),
        ("checks", .array(TrustCheck.planned(for: t.entry).map(JSONValue.string))),
      ])
    }
    var totals: [(String, JSONValue)] = [("tasks", .int(Int64(p.tasks.count)))]
    let byAction = p.counts
    for a in Action.allCases { totals.append((a.rawValue, .int(Int64(byAction[a] ?? 0)))) }
    totals.append(("expected_bytes", .int(p.expectedBytes)))
    let disk: [JSONValue] = p.disk.map { d in
      var o: [(String, JSONValue)] = [
        ("path", .string(d.path)), ("free_bytes", .int(d.freeBytes)), ("needed_bytes", .int(d.neededBytes)),
        ("ok", .bool(d.ok)),
      ]
      if !d.ok { o.append(("tasks", .array(d.tasks.map(JSONValue.string)))) }
      if d.unknownSizes > 0 { o.append(("unknown_sizes", .int(Int64(d.unknownSizes)))) }
      return .object(o)
    }
    let l = p.limits
    return .object([
      ("session", .string(p.session)), ("now", .string(p.now.rfc3339)), ("journal", .string(p.journal)),
      ("tasks", .array(tasks)), ("totals", .object(totals)), ("disk", .array(disk)),
      ("prefixes", .array(p.prefixes.map(\.json))),
      (
        "limits",
        .object([
          ("parallel", .int(Int64(l.parallel ?? Limits.defaultParallel))),
          ("per_host", .int(Int64(l.perHost ?? Limits.defaultPerHost))), ("rate", rateJSON(l.rate)),
          ("deadline_seconds", int(l.deadline?.seconds)),
        ])
      ),
    ])
  }
}

/// Renders `syncfiles status`: what the journal knows per task.
public enum StatusReport {
  public struct Row: Sendable {
    public var id: String
    public var state: TaskState?
    public var nextDue: Timestamp?
    public var action: Action?
    /// Versions kept for `rollback` (`keep_versions`), the newest first.
    public var versions: [KeptVersions.Version] = []
  }

  /// One row per task. A partial shows what its file holds now: the journal's
  /// offset lags behind a transfer (and stops where a kill -9 left it).
  public static func rows(
    journal: [String: TaskState], plan: SessionPlan?, held: (String) -> Int64? = heldBytes
  ) -> [Row] {
    func state(_ id: String) -> TaskState? {
      guard var s = journal[id] else { return nil }
      // A segmented partial is as long as the whole file: its journal offset says what it holds.
      if let p = s.partial, p.ranges == nil { s.partial?.offset = held(p.path) ?? p.offset }
      return s
    }
    if let plan {
      return plan.tasks.map { t in
        var r = Row(id: t.id, state: state(t.id), nextDue: t.nextDue, action: t.action)
        // Only entries that keep versions look for them: no folder is listed per task otherwise.
        if t.entry.keepVersions > 0 || r.state?.rolledBack != nil {
          r.versions = KeptVersions.list(t.entry.destinationPath)
        }
        return r
      }
    }
    return journal.keys.sorted().map { Row(id: $0, state: state($0), nextDue: nil, action: nil) }
  }

  /// The size of a partial file as it is now (nil when it is gone or not a file).
  public static func heldBytes(_ path: String) -> Int64? {
    guard let f = FactGatherer.fact(at: path), f.isRegular else { return nil }
    return f.size
  }

  public static func text(_ rows: [Row], journalPath: String) -> String {
    var table = TextTable(header: ["TASK", "LAST", "WHEN", "BYTES", "PARTIAL", "NEXT DUE", "FAILURES"])
    for r in rows {
      let s = r.state
      let partial = s?.partial.map { p in
        ByteSize.format(p.offset) + (p.totalBytes.map { " of " + ByteSize.format($0) } ?? "")
      }
      var failures = "-"
      if let s, s.failures > 0 {
        failures = "\(s.failures)" + (s.backoffUntil.map { ", backoff until \($0.rfc3339)" } ?? "")
      }
      var next = r.nextDue?.rfc3339 ?? "-"
      if let a = r.action, a != .skip { next = a == .wait ? (r.nextDue?.rfc3339 ?? "held") : "now (\(a.rawValue))" }
      if s?.rolledBack != nil { next = "rolled back (held)" }
      table.rows.append([
        r.id, s?.lastOutcome?.rawValue ?? "never", s?.lastCheck?.rfc3339 ?? "-",
        s?.lastBytes.map(ByteSize.format) ?? "-", partial ?? "-", next, failures,
      ])
    }
    var versions = ""
    for r in rows where !r.versions.isEmpty {
      let list = r.versions.map { "\($0.replaced.rfc3339) (\(ByteSize.format($0.size)))" }
      versions += "\nversions of \(r.id), newest first: " + list.joined(separator: ", ")
    }
    return (rows.isEmpty ? "the journal knows no tasks" : table.render()) + versions + "\njournal: \(journalPath)"
  }

  /// When the task is due: now when the next apply would run it (a
  /// download, resume or revalidation), as the text's "now (resume)" says;
  /// the schedule's time otherwise. (A resume showed the schedule's next time.)
  static func due(_ r: Row, now: Timestamp) -> Timestamp? {
    guard let a = r.action, a == .download || a == .resume || a == .revalidate else { return r.nextDue }
    return now
  }

  public static func json(_ rows: [Row], journalPath: String, now: Timestamp, dropped: Int) -> JSONValue {
    func time(_ t: Timestamp?) -> JSONValue { t.map { .string($0.rfc3339) } ?? .null }
    let tasks: [JSONValue] = rows.map { r in
      let s = r.state
      let partial: JSONValue =
        s?.partial.map { p in
          .object([
            ("path", .string(p.path)), ("offset", .int(p.offset)), ("total", p.totalBytes.map(JSONValue.int) ?? .null),
            ("etag", p.etag.map(JSONValue.string) ?? .null),
          ])
        } ?? .null
      let installed: JSONValue =
        s?.installed.map { i in
          .object([
            ("size", .int(i.size)), ("etag", i.etag.map(JSONValue.string) ?? .null),
            ("last_modified", i.lastModified.map(JSONValue.string) ?? .null),
            ("sha256", i.sha256.map(JSONValue.string) ?? .null),
          ])
        } ?? .null
      return .object([
        ("id", .string(r.id)), ("last_outcome", s?.lastOutcome.map { .string($0.rawValue) } ?? .null),
        ("last_check", time(s?.lastCheck)), ("last_success", time(s?.lastSuccess)),
        ("bytes", s?.lastBytes.map(JSONValue.int) ?? .null),
        ("http_status", s?.httpStatus.map { .int(Int64($0)) } ?? .null),
        ("error", s?.lastError.map(JSONValue.string) ?? .null), ("installed", installed), ("partial", partial),
        ("failures", .int(Int64(s?.failures ?? 0))), ("backoff_until", time(s?.backoffUntil)),
        ("action", r.action.map { .string($0.rawValue) } ?? .null), ("next_due", time(due(r, now: now))),
        ("rolled_back", time(s?.rolledBack)),
        (
          "versions",
          .array(
            r.versions.map {
              .object([("replaced", .string($0.replaced.rfc3339)), ("size", .int($0.size)), ("path", .string($0.path))])
            })
        ),
      ])
    }
    return .object([
      ("journal", .string(journalPath)), ("now", .string(now.rfc3339)), ("dropped_records", .int(Int64(dropped))),
      ("tasks", .array(tasks)),
    ])
  }
}

extension PrefixSummary {
  /// `{"id", "url", "source": listed|journal|failed|unlisted, "listed_at", "requests", "objects", "selected", "unusable", "error", "prune": [PATH]}`.
  var json: JSONValue {
    var o: [(String, JSONValue)] = [("id", .string(id)), ("url", .string(url))]
    switch source {
    case .listed(let l), .recorded(let l):
      if case .listed = source {
        o.append(("source", .string("listed")))
      } else {
        o.append(("source", .string("journal")))
      }
      o.append(("listed_at", .string(l.listedAt.rfc3339)))
      o.append(("requests", .int(Int64(l.requests))))
    case .failed(let why):
      o.append(("source", .string("failed")))
      o.append(("error", .string(why)))
    case .unlisted: o.append(("source", .string("unlisted")))
    case .unselected: o.append(("source", .string("unselected")))
    }
    o += [
      ("objects", .int(Int64(listed))), ("selected", .int(Int64(selected))),
      ("unusable", .array(unusable.map(JSONValue.string))), ("prune", .array(prunes.map { .string($0.path) })),
      ("prune_refused", pruneRefused.map(JSONValue.string) ?? .null),
    ]
    return .object(o)
  }
}
