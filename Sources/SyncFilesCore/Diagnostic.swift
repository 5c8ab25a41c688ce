/// A position in a source file, 1-based line and column (columns count characters).
public struct SourceMark: Sendable, Hashable, Comparable, CustomStringConvertible {
  // Four bytes each: every entry and every YAML node holds marks, and a
  // manifest is far below 4 GiB (YAMLLimits.maxBytes).
  private var storedLine: UInt32
  private var storedColumn: UInt32

  public var line: Int {
    get { Int(storedLine) }
    set { storedLine = UInt32(clamping: newValue) }
  }
  public var column: Int {
    get { Int(storedColumn) }
    set { storedColumn = UInt32(clamping: newValue) }
  }

  public init(line: Int, column: Int) {
    storedLine = UInt32(clamping: line)
    storedColumn = UInt32(clamping: column)
  }

  public static func < (a: SourceMark, b: SourceMark) -> Bool {
    (a.line, a.column) < (b.line, b.column)
  }

  public var description: String { "\(line):\(column)" }
}

public enum Severity: String, Sendable, Hashable {
  case error
  case warning
}

/// One problem found in a manifest, printed as `FILE:LINE:COL: severity: message`.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
  public var file: String
  public var mark: SourceMark?
  public var severity: Severity
  public var message: String

  public init(file: String, mark: SourceMark?, severity: Severity, message: String) {
    self.file = file
    self.mark = mark
    self.severity = severity
    self.message = message
  }

  public var description: String {
    if let mark {
      return "\(file):\(mark.line):\(mark.column): \(severity.rawValue): \(message)"
    }
    return "\(file): \(severity.rawValue): \(message)"
  }

  public var json: JSONValue {
    .object([
      ("file", .string(file)),
      ("line", mark.map { .int(Int64($0.line)) } ?? .null),
      ("column", mark.map { .int(Int64($0.column)) } ?? .null),
      ("severity", .string(severity.rawValue)),
      ("message", .string(message)),
    ])
  }
}

extension Array where Element == Diagnostic {
  public var errorCount: Int { self.lazy.filter { $0.severity == .error }.count }
  public var warningCount: Int { self.lazy.filter { $0.severity == .warning }.count }
  public var hasErrors: Bool { contains { $0.severity == .error } }
}
