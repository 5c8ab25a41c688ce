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

  /// Written as bytes into one buffer: a plan can have 100,000 rows, and
  /// appending each cell and its padding to a String cost more than planning.
  func render() -> String {
    var widths = header.map(Self.width)
    var bytes = 0
    for r in rows {
      for (i, c) in r.enumerated() {
        bytes += c.utf8.count
        if i < widths.count { widths[i] = max(widths[i], Self.width(c)) }
      }
    }
    var out: [UInt8] = []
    out.reserveCapacity(bytes + (rows.count + 1) * (2 * widths.count + 1) + widths.reduce(0, +) * 2)
    func line(_ cells: [String]) {
      for (i, c) in cells.enumerated() {
        out.append(contentsOf: c.utf8)
        if i < cells.count - 1 && i < widths.count {
          out.append(contentsOf: repeatElement(0x20, count: widths[i] - Self.width(c) + 2))
        }
      }
    }
    line(header)
    for r in rows {
      out.append(0x0A)
      line(r)
    }
    return String(decoding: out, as: UTF8.self)
  }
}
