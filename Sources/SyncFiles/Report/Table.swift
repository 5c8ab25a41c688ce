/// A plain text table: columns padded to their widest cell, two spaces apart.
struct TextTable {
  var header: [String]
  var rows: [[String]] = []

  func render() -> String {
    var widths = header.map(\.count)
    for r in rows { for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
    func line(_ cells: [String]) -> String {
      var out = ""
      for (i, c) in cells.enumerated() {
        if i == cells.count - 1 {
          out += c
        } else {
          out += c + String(repeating: " ", count: widths[i] - c.count + 2)
        }
      }
      return out
    }
    return ([line(header)] + rows.map(line)).joined(separator: "\n")
  }
}
