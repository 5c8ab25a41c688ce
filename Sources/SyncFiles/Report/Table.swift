import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// A plain text table: columns padded to their widest cell, two spaces apart.
struct TextTable {
  var header: [String]
  var rows: [[String]] = []

  /// Width on a terminal, counted in characters; ASCII (nearly every cell)
  /// is counted by bytes, which is far cheaper than finding characters.
  static func width(_ s: String) -> Int {
    let ascii = s.utf8.withContiguousStorageIfAvailable { bytes in
      // One pass with no early exit: the loop vectorizes.
      bytes.reduce(0 as UInt8) { $0 | $1 } < 0x80
    }
    return (ascii ?? s.utf8.allSatisfy { $0 < 0x80 }) ? s.utf8.count : s.count
  }

  /// Each column's widest cell, header included.
  static func widths(header: [String], rows: some Sequence<[String]>) -> [Int] {
    var widths = header.map(Self.width)
    for r in rows {
      for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], Self.width(c)) }
    }
    return widths
  }

  /// One line, without its newline: cells padded to `widths`, the last one unpadded.
  static func line(_ cells: [String], widths: [Int], into out: inout [UInt8]) {
    for (i, c) in cells.enumerated() {
      if i < cells.count - 1 && i < widths.count {
        cell(c, width: widths[i], into: &out)
      } else {
        out.appendUTF8(c)
      }
    }
  }

  /// One cell padded to `width`, and the two spaces before the next.
  static func cell(_ c: String, width: Int, into out: inout [UInt8]) {
    out.appendUTF8(c)
    out.appendSpaces(width - Self.width(c) + 2)
  }

  /// Written as bytes into one buffer: appending each cell and its padding
  /// to a String cost more than planning.
  func render() -> String {
    let widths = Self.widths(header: header, rows: rows)
    var out: [UInt8] = []
    Self.line(header, widths: widths, into: &out)
    for r in rows {
      out.append(0x0A)
      Self.line(r, widths: widths, into: &out)
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// Text output made as bytes: kept whole (`text`), or written to a file
/// descriptor every 64 KiB, so a 100,000-row plan is never held as one text.
public struct TextOut {
  var bytes: [UInt8] = []
  let fd: Int32?

  /// `fd` nil: the text is kept (`text`).
  public init(fd: Int32? = nil) {
    self.fd = fd
    bytes.reserveCapacity(fd == nil ? 4096 : 1 << 16)
  }

  public mutating func write(_ s: String) { bytes.append(contentsOf: s.utf8) }

  /// Hands the bytes so far to `fd` once there are enough of them.
  mutating func flushIfFull() {
    if bytes.count >= 1 << 16 { flush() }
  }

  public mutating func flush() {
    guard let fd, !bytes.isEmpty else { return }
    // As `print` did: standard output that cannot be written is not the plan's failure.
    _ = FileIO.writeAll(fd, bytes)
    bytes.removeAll(keepingCapacity: true)
  }

  public var text: String { String(decoding: bytes, as: UTF8.self) }
}
