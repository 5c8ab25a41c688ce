/// Where the parts of a URL's authority (what follows `//`) lie, as byte
/// offsets, found in one pass; the delimiters are all ASCII. Read by the
/// manifest decoder (host, port, user) and by the engine (a user in a URL).
package struct AuthorityParts {
  package enum Problem { case unclosedIPv6, afterIPv6, forbiddenInHost, badPort }
  package var userinfo: Range<Int>? = nil
  package var host: Range<Int>
  package var port: Range<Int>? = nil
  package var portNumber: Int? = nil
  package var problem: Problem? = nil

  package init(_ b: UnsafeBufferPointer<UInt8>) {
    // The authority ends at the first / ? or #; userinfo ends at its last @.
    var end = b.count
    var at: Int? = nil
    for i in 0..<b.count {
      let c = b[i]
      if c == 0x2F || c == 0x3F || c == 0x23 {
        end = i
        break
      }
      if c == 0x40 { at = i }
    }
    let start = at.map { $0 + 1 } ?? 0
    if let at { userinfo = 0..<at }
    host = start..<end
    if start < end && b[start] == 0x5B {  // [IPv6]
      guard let close = (start..<end).first(where: { b[$0] == 0x5D }) else {
        problem = .unclosedIPv6
        return
      }
      host = start..<(close + 1)
      if close + 1 < end {
        guard b[close + 1] == 0x3A else {
          problem = .afterIPv6
          return
        }
        port = (close + 2)..<end
      }
    } else if let colon = (start..<end).last(where: { b[$0] == 0x3A }) {
      host = start..<colon
      port = (colon + 1)..<end
    }
    if host.contains(where: { Self.isForbidden(b[$0]) }) {
      problem = .forbiddenInHost
      return
    }
    if let port {
      var value = 0
      for i in port {
        guard b[i] >= 0x30 && b[i] <= 0x39 else {
          problem = .badPort
          return
        }
        value = min(value * 10 + Int(b[i] - 0x30), 1 << 20)
      }
      guard !port.isEmpty, (1...65535).contains(value) else {
        problem = .badPort
        return
      }
      portNumber = value
    }
  }

  /// \ { } | ^ ` " < >
  package static func isForbidden(_ b: UInt8) -> Bool {
    switch b {
    case 0x5C, 0x7B, 0x7D, 0x7C, 0x5E, 0x60, 0x22, 0x3C, 0x3E: return true
    default: return false
    }
  }
}
