/// The query parameters of a presigned URL that are bearer credentials for
/// as long as the URL lives: S3's and GCS's signatures, credentials and
/// session tokens, and an Azure SAS's `sig` (SPEC §10.3). `--verbose`
/// shows their values as `***` wherever a URL appears in a line: the
/// request line, a `Location` header, libcurl's own notes.
public enum PresignedQuery {
  package static let names: Set<String> = [
    "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential", "sig",
  ]

  /// `line` with the value of each such parameter replaced by `mark`.
  public static func masking(_ line: String, with mark: String = "***") -> String {
    let bytes = Array(line.utf8)
    guard bytes.contains(UInt8(ascii: "?")) else { return line }
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var i = 0
    var inQuery = false
    while i < bytes.count {
      let b = bytes[i]
      out.append(b)
      i += 1
      if b == UInt8(ascii: "?") { inQuery = true }
      if ends(b) { inQuery = false }
      guard inQuery, b == UInt8(ascii: "?") || b == UInt8(ascii: "&") else { continue }
      // A parameter starts here: its name runs to '='.
      var j = i
      while j < bytes.count, bytes[j] != UInt8(ascii: "="), bytes[j] != UInt8(ascii: "&"), !ends(bytes[j]) { j += 1 }
      guard j < bytes.count, bytes[j] == UInt8(ascii: "="),
        names.contains(String(decoding: bytes[i..<j], as: UTF8.self).lowercased())
      else { continue }
      out.append(contentsOf: bytes[i...j])
      out.append(contentsOf: mark.utf8)
      i = j + 1
      while i < bytes.count, bytes[i] != UInt8(ascii: "&"), !ends(bytes[i]) { i += 1 }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// A byte that ends a URL's query in a line of text.
  private static func ends(_ b: UInt8) -> Bool {
    b == UInt8(ascii: " ") || b == UInt8(ascii: "#") || b == UInt8(ascii: "'") || b == UInt8(ascii: "\"")
      || b == UInt8(ascii: ">") || b < 0x20
  }
}
