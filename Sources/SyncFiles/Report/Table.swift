/// A plain text table: columns padded to their widest cell, two spaces apart.
struct TextTable {
  var header: [String]
  var rows: [[String]] = []

  /// Width on a terminal, counted in characters; ASCII (nearly every cell)
  /// is counted by bytes, which is far cheaper than finding characters.
  static func width(_ s: String) -> Int {
    let bytes = s.utf8
    return bytes.allSatisfy { $0 < 0x80 } ? bytes.count : s.count
  }

  func render() -> String {
    var widths = header.map(Self.width)
    var cellWidths: [[Int]] = []
    cellWidths.reserveCapacity(rows.count)
    var bytes = 0
    for r in rows {
      let w = r.map(Self.width)
      for (i, c) in w.enumerated() where i < widths.count { widths[i] = max(widths[i], c) }
      for c in r { bytes += c.utf8.count }
      cellWidths.append(w)
    }
    var out = ""
    out.reserveCapacity(bytes + (rows.count + 1) * (widths.reduce(0, +) + 2 * widths.count + 1))
    func line(_ cells: [String], _ w: [Int]) {
      for (i, c) in cells.enumerated() {
        out += c
        if i < cells.count - 1 && i < widths.count {
          out += String(repeating: " ", count: widths[i] - w[i] + 2)
        }
      }
    }
    line(header, header.map(Self.width))
    for (r, w) in zip(rows, cellWidths) {
      out += "\n"
      line(r, w)
    }
    return out
  }
}
