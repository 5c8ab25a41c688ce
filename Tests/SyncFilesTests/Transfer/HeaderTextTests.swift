import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The byte-level readers of Transfer (origins, header lookups, response
/// fields, status lines) give the same answers as the general rules they
/// shortcut.
@Suite struct HeaderTextTests {
  @Test func originsOfURLs() {
    #expect(RemoteProbe.origin(of: "HTTP://Example.COM:8080/x?y") == "http://example.com:8080")
    #expect(RemoteProbe.origin(of: "https://user:pw@Host.example/x") == "https://host.example:443")
    #expect(RemoteProbe.origin(of: "http://h.example#frag") == "http://h.example:80")
    #expect(RemoteProbe.origin(of: "http://[::1]/a") == "http://[::1]:80")
    #expect(RemoteProbe.origin(of: "http://[::1]:81/a") == "http://[::1]:81")
    #expect(RemoteProbe.origin(of: "not a url") == "")
  }

  @Test func headerLookupIgnoresCaseAndTakesTheLast() {
    let lines = ["ETags: no\r\n", "etag: \"a\"\r\n", "Content-Length:  12 \r\n", "ETAG:\t\"b\"\r\n", "X-Ünï: v\r\n"]
    #expect(headerValue("ETag", in: lines) == "\"b\"")
    #expect(headerValue("content-length", in: lines) == "12")
    #expect(headerValue("Date", in: lines) == nil)
    #expect(headerValue("ETa", in: lines) == nil)
    #expect(headerValue("X-Ünï", in: lines) == "v")
    #expect("  \t a b \r\n".trimmingWhitespace() == "a b")
    #expect(" \r\n".trimmingWhitespace() == "")
  }

  /// The byte scans the decoder uses on each entry (Support/Bytes.swift)
  /// answer as the character rules they replace, on strings and substrings.

  @Test func responseFieldsAgreeWithHeaderLookup() {
    let blocks: [[String]] = [
      ["ETags: no\r\n", "etag: \"a\"\r\n", "Content-Length:  12 \r\n", "ETAG:\t\"b\"\r\n"],
      ["Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n", "LAST-modified:Sun, 06 Nov 1994 08:49:37 GMT\n"],
      ["Content-Range: bytes 0-9/10\r\n", "Retry-After: 5\r\n", "Transfer-Encoding: chunked\r\n"],
      ["Accept-Ranges: \r\n", "Content-Encoding:gzip", "X-Date: 1\r\n", "Date : 2\r\n", ": v\r\n", "no colon\r\n"],
      ["Content-Length: 1\r\n", "Content-Length: 2\r\n", "content-length:\u{FF}3 \r\n", "retry-after: \u{E9}\r\n"],
    ]
    for lines in blocks {
      var fields = ResponseFields()
      for line in lines { Array(line.utf8).withUnsafeBytes { fields.take($0) } }
      for name in ResponseFields.Name.allCases {
        let text = name.text.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        #expect(fields[name] == headerValue(text, in: lines), "\(text) in \(lines)")
      }
      fields.removeAll()
      #expect(ResponseFields.Name.allCases.allSatisfy { fields[$0] == nil })
    }
  }

  /// Each field is found by its own name, in any case, and sets only itself.
  @Test func everyFieldIsFoundByItsName() {
    for name in ResponseFields.Name.allCases {
      let text = name.text.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
      for written in [text, text.uppercased(), text.prefix(1).uppercased() + text.dropFirst()] {
        var fields = ResponseFields()
        Array("\(written): v\r\n".utf8).withUnsafeBytes { fields.take($0) }
        #expect(ResponseFields.Name.allCases.allSatisfy { fields[$0] == ($0 == name ? "v" : nil) }, "\(written)")
      }
    }
    // Names one byte longer or shorter than every field's, and a long one.
    var fields = ResponseFields()
    for line in ["E: 1\r\n", "Transfer-Encodings: 2\r\n", String(repeating: "x", count: 300) + ": 3\r\n"] {
      Array(line.utf8).withUnsafeBytes { fields.take($0) }
    }
    #expect(ResponseFields.Name.allCases.allSatisfy { fields[$0] == nil })
  }

  @Test func statusLinesGiveTheirCode() {
    let cases: [(String, Int?)] = [
      ("HTTP/1.1 304 Not Modified\r\n", 304), ("HTTP/2 200 \r\n", 200), ("HTTP/1.0  206 Partial\r\n", 206),
      ("HTTP/1.1 abc\r\n", 0), ("HTTP/1.1\r\n", 0), ("HTTP/1.1 \r\n", 0), ("ETag: x\r\n", nil), ("HTTP", nil),
      ("http/1.1 200 OK\r\n", nil),
    ]
    for (line, code) in cases {
      #expect(Array(line.utf8).withUnsafeBytes { statusLineCode($0) } == code, "\(line)")
    }
  }
}
