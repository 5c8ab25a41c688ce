import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// One invalid case: extra lines for the entry of `entry()`, and where and what the error is.
struct Bad: CustomTestStringConvertible, Sendable {
  var lines: [String]
  var line: Int
  var column: Int
  var says: String
  init(_ lines: String..., at line: Int, _ column: Int, _ says: String) {
    self.lines = lines
    self.line = line
    self.column = column
    self.says = says
  }
  var testDescription: String { lines.joined(separator: " | ") }
}

@Suite struct FileEntryRulesTests {
  static let valid: [[String]] = [
    ["expected_bytes: 4.5KiB"], ["expected_bytes: 4608"], ["max_bytes: 10MiB"], ["max_bytes: 4.7GB"],
    ["sha256: " + String(repeating: "aB", count: 32)], ["schedule: once"], ["schedule: every 6h"],
    ["schedule: \"0 3 * * *\""], ["schedule: '@daily'"], ["schedule: every 15m"],
    ["not_before: 2026-12-01T00:00:00Z"], ["not_before: \"2026-12-01T01:00:00+01:00\""],
    ["discretionary: false"], ["mode: \"0644\""], ["mode: 0755"], ["mode: '600'"],
    ["retry: { attempts: 3 }"], ["retry: { attempts: 5, backoff: 30s, max_backoff: 1h }"],
    ["timeout: { connect: 15s, stall: 60s }"], ["on_change: [systemctl, reload, nginx]"],
    ["mirrors: [https://mirror.example.net/a, 'http://[::1]:8080/a']"],
    ["headers: { Accept: text/csv, X-Trace: '1' }"], ["destination: /srv/deep/inside/a.bin"],
    ["destination: ./x/./y.bin"],
  ]

  @Test(arguments: valid)
  func validEntries(lines: [String]) {
    var text = entry(lines: [])
    for l in lines {
      // Replace a key the base entry already has, or add it.
      let key = l.split(separator: ":")[0]
      if text.contains("    \(key):") {
        text =
          text.split(separator: "\n").map { $0.hasPrefix("    \(key):") ? "    " + l : String($0) }
          .joined(separator: "\n") + "\n"
      } else {
        text += "    " + l + "\n"
      }
    }
    let (m, d) = decode(text)
    #expect(errors(d).isEmpty, "\(errors(d))")
    #expect(m?.files.count == 1)
  }

  static let invalid: [Bad] = [
    Bad("expected_bytes: -4KiB", at: 8, 21, "negative size"),
    Bad("expected_bytes: lots", at: 8, 21, "malformed size"),
    Bad("expected_bytes: 4.5 kilobytes", at: 8, 21, "unknown unit"),
    Bad("expected_bytes: [1]", at: 8, 21, "found a list"),
    Bad("max_bytes: 0", at: 8, 16, "would abort every transfer"),
    Bad("expected_bytes: 2MiB", "max_bytes: 1MiB", at: 8, 21, "larger than max_bytes"),
    Bad("sha256: 3f2a", at: 8, 13, "64 hexadecimal digits"),
    Bad("sha256: " + String(repeating: "g", count: 64), at: 8, 13, "character 1 is 'g', not a hexadecimal digit"),
    Bad("schedule: sometimes", at: 8, 15, "malformed schedule"),
    Bad("schedule: every 6", at: 8, 15, "needs a unit"),
    Bad("schedule: \"61 * * * *\"", at: 8, 15, "minute value 61"),
    Bad("schedule: \"0 0 31 2 *\"", at: 8, 15, "never fires"),
    Bad("not_before: 2026-12-01", at: 8, 17, "RFC 3339"),
    Bad("not_before: 2026-02-30T00:00:00Z", at: 8, 17, "RFC 3339"),
    Bad("discretionary: yes", at: 8, 20, "write true"),
    Bad("discretionary: 'true'", at: 8, 20, "must be true or false"),
    Bad("mode: \"0999\"", at: 8, 11, "not octal permission bits"),
    Bad("mode: \"rw-r--r--\"", at: 8, 11, "not octal permission bits"),
    Bad("mode: \"17777\"", at: 8, 11, "not octal permission bits"),
    Bad("mode: -644", at: 8, 11, "not octal permission bits"),
    Bad("retry: { attempts: 0 }", at: 8, 24, "between 1 and 100"),
    Bad("retry: { attempts: three }", at: 8, 24, "whole number"),
    Bad("retry: { backoff: 2 }", at: 8, 23, "needs a unit"),
    Bad("retry: { backoff: 1h, max_backoff: 1m }", at: 8, 40, "shorter than retry.backoff"),
    Bad("retry: { atempts: 3 }", at: 8, 14, "did you mean 'attempts'?"),
    Bad("retry: 3", at: 8, 12, "must be a mapping"),
    Bad("timeout: { connect: 0s }", at: 8, 25, "longer than 0s"),
    Bad("timeout: { stal: 60s }", at: 8, 16, "did you mean 'stall'?"),
    Bad("on_change: systemctl reload nginx", at: 8, 16, "[\"systemctl\", \"reload\", \"nginx\"]"),
    Bad("on_change: []", at: 8, 16, "must name a program"),
    Bad("on_change: [[a]]", at: 8, 17, "must be a string"),
    Bad("mirrors: https://m.example.net/a", at: 8, 14, "must be a list of URLs"),
    Bad("mirrors: [ftp2://m.example.net/a]", at: 8, 15, "syncfiles-source-ftp2"),
    Bad("headers: [Accept]", at: 8, 14, "mapping of header names"),
    Bad("headers: { Range: bytes=0- }", at: 8, 16, "managed by syncfiles"),
    Bad("headers: { 'Bad Name': x }", at: 8, 16, "not a valid HTTP header name"),
    Bad("headers: { X-A: 1, x-a: 2 }", at: 8, 24, "set twice"),
    Bad("destinaton: b.bin", at: 8, 5, "did you mean 'destination'?"),
    Bad("parallel: 4", at: 8, 5, "belongs in limits"),
    Bad("verify: gpg", at: 8, 13, "must be a list"),
    Bad("verify: [{plugin: gpg}]", at: 8, 23, "syncfiles-verify-gpg"),
    Bad("verify: [{plugn: gpg}]", at: 8, 15, "did you mean 'plugin'?"),
    Bad("id: b", at: 8, 5, "duplicate key 'id' in a file entry (first set at line 5)"),
    Bad("url: https://example.org/b", at: 8, 5, "duplicate key 'url' in a file entry (first set at line 6)"),
  ]

  @Test(arguments: invalid)
  func invalidEntries(_ bad: Bad) {
    let (_, d) = decode(entry(lines: bad.lines))
    let match = errors(d).first { $0.message.contains(bad.says) }
    #expect(match != nil, "no error saying '\(bad.says)' in \(d)")
    #expect(match?.mark == SourceMark(line: bad.line, column: bad.column), "\(String(describing: match))")
  }

  static let badURLs: [(String, String)] = [
    ("htps//example.org/a", "has no scheme"),
    ("example.org/a", "has no scheme"),
    ("https:/example.org/a", "must start with https://"),
    ("https:///a", "has no host"),
    ("https://example.org:99999/a", "invalid port"),
    ("https://example.org:/a", "invalid port"),
    ("'https://example.org/a b'", "space or control character"),
    ("https://[::1/a", "unclosed IPv6"),
    ("https://[::1]x/a", "has a malformed host"),
    ("'https://exa{mple.org/a'", "has a malformed host 'exa{mple.org'"),
    ("https://example.org:8a/a", "invalid port '8a'"),
    ("https://example.org:0/a", "invalid port '0'"),
    ("https://example.org:99999999999999999999/a", "invalid port"),
    ("file://server/share/a", "host 'server' is not supported"),
    ("file:///tmp/", "names a folder"),
    ("gs://bucket/key", "syncfiles-source-gs"),
  ]

  @Test(arguments: badURLs)
  func invalidURLs(url: String, says: String) {
    let text = entry().replacingFirst("url: https://example.org/a", with: "url: \(url)")
    let (_, d) = decode(text)
    let match = errors(d).first { $0.message.contains(says) }
    #expect(match != nil, "no error saying '\(says)' in \(d)")
    #expect(match?.mark == SourceMark(line: 6, column: 10))
  }

  /// The authority's parts, found in one pass over its bytes.
  @Test func hostsPortsAndUserinfoOfURLs() {
    for (url, host, port) in [
      ("https://example.org/a", "example.org", 443), ("http://Example.ORG:0080/x?y", "example.org", 80),
      ("'https://u:${P}@[::1]:8443/a'", "[::1]", 8443), ("'https://a@b@host.example#f'", "host.example", 443),
      ("'https://host.example?q=1:2'", "host.example", 443), ("https://[fe80::1]/a", "[fe80::1]", 443),
    ] {
      let text = entry().replacingFirst("url: https://example.org/a", with: "url: \(url)")
      let (m, d) = decode(text, env: ["P": "pw"])
      #expect(errors(d).isEmpty, "\(url): \(d)")
      #expect(m?.files.first?.url.host == host, "\(url)")
      #expect(m?.files.first?.url.port == port, "\(url)")
    }
  }

  @Test func fileURLsAbsoluteAndRelativeToTheManifest() throws {
    var (m, d) = decode(entry().replacingFirst("url: https://example.org/a", with: "url: file:///data/a%20b.csv"))
    #expect(errors(d).isEmpty)
    #expect(m?.files.first?.url.text.revealed == "file:///data/a%20b.csv")
    (m, d) = decode(entry().replacingFirst("url: https://example.org/a", with: "url: file:data/my%20file.csv"))
    #expect(errors(d).isEmpty, "\(d)")
    #expect(m?.files.first?.url.text.revealed == "file:///m/data/my%20file.csv")
    #expect(m?.files.first?.url.display == "file:data/my%20file.csv")
    (m, d) = decode(
      entry().replacingFirst("url: https://example.org/a", with: "url: file:../shared/a.csv"),
      path: "/m/with space/test.yaml")
    #expect(m?.files.first?.url.text.revealed == "file:///m/shared/a.csv")
    (m, d) = decode(
      entry().replacingFirst("url: https://example.org/a", with: "url: file:a.csv"), path: "/m/with space/t.yaml")
    #expect(m?.files.first?.url.text.revealed == "file:///m/with%20space/a.csv")
  }

  @Test func pluginSchemesAndVerifiersResolveOnTheSearchPath() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    for name in ["syncfiles-source-gs", "syncfiles-verify-gpg"] {
      write("#!/bin/sh\nexit 0\n", to: dir + "/" + name)
      chmod(dir + "/" + name, 0o755)
    }
    let text = entry("verify: [{plugin: gpg, with: {keyring: /k.gpg, strict: true, n: 2}}]")
      .replacingFirst("url: https://example.org/a", with: "url: gs://bucket/key")
    let (m, d) = decode(text, plugins: [dir])
    #expect(errors(d).isEmpty, "\(d)")
    let f = try #require(m?.files.first)
    #expect(f.url.scheme == "gs")
    #expect(f.verify.first?.executable == dir + "/syncfiles-verify-gpg")
    #expect(f.verify.first?.with.serialized() == #"{"keyring":"/k.gpg","strict":true,"n":2}"#)
  }

  @Test func requiredKeys() {
    let (_, d) = decode("version: 1\nfiles:\n  - id: a\n")
    let e = errors(d)
    #expect(e.count == 1)
    #expect(e.first?.message == "file entry 'a' is missing required keys 'url', 'destination'")
    #expect(e.first?.mark == SourceMark(line: 3, column: 5))
  }

  @Test func idRules() {
    var (_, d) = decode(entry().replacingFirst("id: a", with: "id: 'a b'"))
    #expect(errors(d).first?.message.contains("may use only letters") == true)
    (_, d) = decode(entry() + "  - id: a\n    url: https://example.org/b\n    destination: b.bin\n")
    #expect(errors(d).first?.message == "duplicate id 'a' (first used at line 5)")
    #expect(errors(d).first?.mark == SourceMark(line: 8, column: 9))
  }

  @Test func destinationsStayInsideRoot() {
    let cases: [(String, String)] = [
      ("../b.bin", "may not contain '..'"),
      ("x/../../b.bin", "may not contain '..'"),
      ("/etc/passwd", "lies outside root '/srv'"),
      ("/srv/../etc/passwd", "may not contain '..'"),
      ("/srvx/a", "lies outside root"),
      ("sub/", "names a folder"),
      ("'.'", "names a folder"),
      ("''", "is empty"),
    ]
    for (dest, says) in cases {
      let (_, d) = decode(entry().replacingFirst("destination: a.bin", with: "destination: \(dest)"))
      #expect(errors(d).first?.message.contains(says) == true, "\(dest): \(d)")
      #expect(errors(d).first?.mark == SourceMark(line: 7, column: 18), "\(dest)")
    }
    let (m, d) = decode(entry().replacingFirst("destination: a.bin", with: "destination: /srv/x//y/./z.bin"))
    #expect(errors(d).isEmpty)
    #expect(m?.files.first?.destination == "x/y/z.bin")
    #expect(m?.files.first?.destinationPath == "/srv/x/y/z.bin")
  }
}

extension String {
  func replacingFirst(_ a: String, with b: String) -> String {
    guard let r = range(of: a) else { return self }
    return replacingCharacters(in: r, with: b)
  }
}

/// The decoder's typed file keys name the keys of `Keys.file`, each its own.
@Suite struct FileKeyTests {
  @Test func eachCaseIsTheKeyItNames() {
    #expect(FileKey.allCases.count == Keys.file.count)
    for k in FileKey.allCases {
      // `expectedBytes` names `expected_bytes`.
      var snake = ""
      for c in String(describing: k) { snake += c.isUppercase ? "_" + c.lowercased() : String(c) }
      #expect(k.name == snake, "\(k)")
    }
  }

  /// Each key is declared once, and its declaration is found by its case and by its name.
  @Test func everyFileKeyIsDeclaredOnce() {
    let declared = FileKeySpec.sourceKeys + FileKeySpec.trustKeys + FileKeySpec.requestKeys + FileKeySpec.prefixKeys
    #expect(declared.count == FileKey.allCases.count)
    for k in FileKey.allCases {
      #expect(declared.filter { $0.key == k }.count == 1, "\(k)")
      #expect(k.spec.key == k && FileKey(named: k.name) == k)
    }
    #expect(FileKey(named: "max_backoff") == nil && FileKey(named: "") == nil)
  }

  /// Typed lookups find each key as keys come and go.
  @Test func keyedFieldsFindEveryKeyAsKeysComeAndGo() {
    var f = KeyedFields<Int>()
    f.append(new: .url, 1)
    f[.notBefore] = 3
    #expect(f[.url] == 1 && f[.notBefore] == 3 && f[.id] == nil)
    f[.headers] = 4
    f[.notBefore] = nil
    // The keys after the one removed moved up: each is still found.
    #expect(f[.notBefore] == nil && f[.headers] == 4 && f[.url] == 1)
    #expect(f.keys == [.url, .headers])
    let marks = f.mapValues { $0 * 10 }
    #expect(marks[.url] == 10 && marks[.headers] == 40 && marks[.notBefore] == nil)
  }
}

/// A URL keeps its port in two bytes and makes its display text when asked:
/// the same answers as when both were stored.
@Suite struct SourceURLTests {
  @Test func portDisplayAndOriginAsDecoded() {
    func url(_ text: String) -> SourceURL? {
      let (m, d) = decode(entry(lines: []).replacingOccurrences(of: "https://example.org/a", with: text))
      #expect(errors(d).isEmpty, "\(errors(d))")
      return m?.files.first?.url
    }
    let plain = url("https://example.org/a")
    #expect(plain?.port == 443 && plain?.origin == "https://example.org:443")
    #expect(plain?.display == "https://example.org/a")
    let explicit = url("http://example.org:65535/a")
    #expect(explicit?.port == 65535 && explicit?.origin == "http://example.org:65535")
    let user = url("https://u:pw@example.org:8443/a")
    #expect(user?.display == "https://u:***@example.org:8443/a" && user?.port == 8443)
    #expect(user?.text.revealed == "https://u:pw@example.org:8443/a")
    let nameOnly = url("https://u@example.org/a")
    #expect(nameOnly?.display == "https://u@example.org/a")
    let file = url("file:///srv/a")
    #expect(file?.port == nil && file?.display == "file:///srv/a" && file?.origin == "file://")
    #expect(plain?.scheme == "https" && explicit?.scheme == "http" && file?.scheme == "file")
  }

  /// A URL's text is kept as a shared head and its own tail, or whole in a
  /// box when a variable was expanded: the text reads back the same.
  @Test func theTextReadsBackFromItsParts() {
    var head = ""
    for text in ["https://example.org", "https://example.org/", "https://h/a/b.bin?x=/y", "file:///srv/a", "x:"] {
      let u = SourceURL(
        scheme: "https", text: ExpandedString(plain: text), host: "h", port: 443, hidesPassword: false,
        sharedHead: &head)
      #expect(u.text.revealed == text && u.text.template == text && !u.text.hasSecret && u.display == text)
    }
    let secret = ExpandedString(template: "https://h/${T}", value: "https://h/abc", hasSecret: true)
    let s = SourceURL(scheme: "https", text: secret, host: "h", port: 443, hidesPassword: false, sharedHead: &head)
    #expect(s.text == secret && s.display == "https://h/${T}" && s.text.revealed == "https://h/abc")
    let a = SourceURL(
      scheme: "https", text: ExpandedString(plain: "https://h/a"), host: "h", port: 443, hidesPassword: false)
    let b = SourceURL(
      scheme: "https", text: ExpandedString(plain: "https://h/a"), host: "h", port: 443, hidesPassword: false,
      sharedHead: &head)
    #expect(a == b && a.hashValue == b.hashValue && a != s)
  }

  /// A plugin's scheme is not stored: it is read from the expanded text, in lower case.
  @Test func aPluginSchemeIsReadFromTheText() {
    let written = ExpandedString(template: "${S}://h:8873/x", value: "RSYNC://h:8873/x", hasSecret: true)
    let u = SourceURL(scheme: "rsync", text: written, host: "h", port: 8873, hidesPassword: true)
    #expect(u.scheme == "rsync" && u.port == 8873 && !u.isBuiltIn && u.display == "${S}://h:8873/x")
    #expect(u.origin == "rsync://h:8873")
  }
}
