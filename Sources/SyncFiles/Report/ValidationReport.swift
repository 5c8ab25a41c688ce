import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// Renders the result of `syncfiles validate`.
public struct ValidationReport: Sendable {
  public var set: ManifestSet

  public init(set: ManifestSet) {
    self.set = set
  }

  /// Diagnostics in the order of the files as read, then by position.
  public var sortedDiagnostics: [Diagnostic] {
    var order: [String: Int] = [:]
    for d in set.diagnostics where order[d.file] == nil { order[d.file] = order.count }
    return set.diagnostics.enumerated().sorted { a, b in
      let fa = order[a.element.file]!
      let fb = order[b.element.file]!
      if fa != fb { return fa < fb }
      let ma = a.element.mark ?? SourceMark(line: 0, column: 0)
      let mb = b.element.mark ?? SourceMark(line: 0, column: 0)
      if ma != mb { return ma < mb }
      return a.offset < b.offset
    }.map(\.element)
  }

  /// One diagnostic as text; with `source` (the file's lines) adds the line
  /// and a caret under the column, as compilers do.
  public static func text(_ d: Diagnostic, sourceLine: String?) -> String {
    var out = d.description
    if let line = sourceLine, let mark = d.mark {
      out += "\n" + line + "\n"
      var caret = ""
      for (i, ch) in line.enumerated() where i < mark.column - 1 {
        caret.append(ch == "\t" ? "\t" : " ")
      }
      if mark.column - 1 > line.count {
        caret += String(repeating: " ", count: mark.column - 1 - line.count)
      }
      out += caret + "^"
    }
    return out
  }

  /// The verdict line for stdout.
  public var summary: String {
    let e = set.diagnostics.errorCount
    let w = set.diagnostics.warningCount
    let manifests = "\(set.manifests.count) manifest\(set.manifests.count == 1 ? "" : "s")"
    let files = "\(set.fileCount) file\(set.fileCount == 1 ? "" : "s")"
    let warnings = "\(w) warning\(w == 1 ? "" : "s")"
    if e > 0 {
      return "invalid: \(e) error\(e == 1 ? "" : "s"), \(warnings)"
    }
    return "ok: \(manifests), \(files), \(warnings)"
  }

  public var json: JSONValue {
    .object([
      ("valid", .bool(!set.hasErrors)),
      ("errors", .int(Int64(set.diagnostics.errorCount))),
      ("warnings", .int(Int64(set.diagnostics.warningCount))),
      (
        "manifests",
        .array(
          set.manifests.map { m in
            .object([
              ("path", .string(m.path)), ("name", .string(m.name)), ("root", .string(m.root)),
              ("files", .int(Int64(m.files.count))),
            ])
          })
      ),
      ("diagnostics", .array(sortedDiagnostics.map(\.json))),
    ])
  }
}
