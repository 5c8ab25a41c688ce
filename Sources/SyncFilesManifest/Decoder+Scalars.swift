import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// Scalars: strings, booleans, numbers, sizes, durations and commands, each
/// checked against what its key allows.
extension ManifestDecoder {

  package mutating func string(_ node: YAMLNode, _ what: String) -> String? {
    guard case .scalar(let s, _) = node.kind, !node.isNull else {
      error(node.mark, "\(what) must be a string, found \(node.kindName)")
      return nil
    }
    return s
  }

  package mutating func bool(_ node: YAMLNode, _ what: String) -> Bool? {
    if case .scalar(let s, .plain) = node.kind {
      switch s {
      case "true", "True", "TRUE": return true
      case "false", "False", "FALSE": return false
      case "yes", "Yes", "YES", "on", "On", "ON", "y", "Y":
        error(node.mark, "\(what) must be true or false; '\(s)' is not a boolean here, write true")
        return nil
      case "no", "No", "NO", "off", "Off", "OFF", "n", "N":
        error(node.mark, "\(what) must be true or false; '\(s)' is not a boolean here, write false")
        return nil
      default: break
      }
    }
    error(node.mark, "\(what) must be true or false, found \(describe(node))")
    return nil
  }

  package mutating func integer(_ node: YAMLNode, _ what: String, range: ClosedRange<Int>) -> Int? {
    if case .scalar(let s, .plain) = node.kind {
      let digits = s.hasPrefix("+") ? String(s.dropFirst()) : s
      if !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) {
        if let v = Int(digits), range.contains(v) { return v }
        error(node.mark, "\(what) must be between \(range.lowerBound) and \(range.upperBound), found \(s)")
        return nil
      }
      if s.hasPrefix("-"), s.dropFirst().allSatisfy(\.isASCIIDigit) {
        error(node.mark, "\(what) must be between \(range.lowerBound) and \(range.upperBound), found \(s)")
        return nil
      }
    }
    error(node.mark, "\(what) must be a whole number, found \(describe(node))")
    return nil
  }

  package mutating func size(_ node: YAMLNode, _ what: String) -> Int64? {
    guard let s = scalarForUnit(node, what, example: "500, 4.5KiB or 10MiB") else { return nil }
    switch ByteSize.parse(s) {
    case .success(let v): return v
    case .failure(let e):
      error(node.mark, "\(what): \(e.message)")
      return nil
    }
  }

  package mutating func duration(_ node: YAMLNode, _ what: String, positive: Bool = true) -> TimeSpan? {
    guard let s = scalarForUnit(node, what, example: "30s, 15m or 1h30m") else { return nil }
    switch TimeSpan.parse(s) {
    case .success(let v):
      if positive && v.seconds == 0 {
        error(node.mark, "\(what) must be longer than 0s")
        return nil
      }
      return v
    case .failure(let e):
      error(node.mark, "\(what): \(e.message)")
      return nil
    }
  }

  private mutating func scalarForUnit(_ node: YAMLNode, _ what: String, example: String) -> String? {
    guard case .scalar(let s, _) = node.kind, !node.isNull else {
      error(node.mark, "\(what) must be a value such as \(example), found \(node.kindName)")
      return nil
    }
    return s
  }

  package mutating func command(_ node: YAMLNode, _ what: String) -> [String]? {
    guard case .sequence(let items) = node.kind else {
      if case .scalar(let s, _) = node.kind, !node.isNull {
        let words = s.split(separator: " ").map { "\"\($0)\"" }.joined(separator: ", ")
        error(
          node.mark,
          "\(what) is a command as a list of words (no shell is involved), as in [\(words)]")
      } else {
        error(node.mark, "\(what) must be a list of words, found \(node.kindName)")
      }
      return nil
    }
    var argv: [String] = []
    for item in items {
      guard let s = string(item, "each word of \(what)") else { return nil }
      argv.append(s)
    }
    guard let first = argv.first, !first.isEmpty else {
      error(node.mark, "\(what) must name a program to run")
      return nil
    }
    return argv
  }

  package func describe(_ node: YAMLNode) -> String {
    if case .scalar(let s, let style) = node.kind, !node.isNull {
      let shown = s.count > 40 ? String(s.prefix(40)) + "…" : s
      return style == .plain ? "'\(shown)'" : "the quoted string '\(shown)'"
    }
    return node.kindName
  }
}
