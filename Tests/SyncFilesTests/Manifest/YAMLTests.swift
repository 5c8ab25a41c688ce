import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private func load(_ s: String, limits: YAMLLimits = YAMLLimits()) throws(YAMLError) -> YAMLNode? {
  try YAMLLoader.load(Array(s.utf8), limits: limits)
}

@Suite struct YAMLTests {
  @Test func marksAreOneBased() throws {
    let root = try #require(try load("a: 1\nlist:\n  - x\n  - {k: v}\n"))
    guard case .mapping(let pairs) = root.kind else { Issue.record("not a mapping"); return }
    #expect(root.mark == SourceMark(line: 1, column: 1))
    #expect(pairs[0].value.mark == SourceMark(line: 1, column: 4))
    guard case .sequence(let items) = pairs[1].value.kind else { Issue.record("not a list"); return }
    #expect(items[0].mark == SourceMark(line: 3, column: 5))
    #expect(items[1].mark == SourceMark(line: 4, column: 5))
  }

  @Test func columnsCountCharactersNotBytes() throws {
    let root = try #require(try load("é: 1\nkey: [ü, x]\n"))
    guard case .mapping(let pairs) = root.kind, case .sequence(let items) = pairs[1].value.kind else {
      Issue.record("unexpected shape")
      return
    }
    #expect(pairs[0].value.mark.column == 4)
    #expect(items[1].mark == SourceMark(line: 2, column: 10))
  }

  @Test func scalarStyles() throws {
    let root = try #require(try load("a: plain\nb: 'single'\nc: \"double\"\nd: |\n  block\n"))
    guard case .mapping(let p) = root.kind else { Issue.record("not a mapping"); return }
    guard case .scalar("plain", .plain) = p[0].value.kind,
      case .scalar("single", .quoted) = p[1].value.kind,
      case .scalar("double", .quoted) = p[2].value.kind,
      case .scalar("block\n", .block) = p[3].value.kind
    else {
      Issue.record("wrong styles: \(p.map(\.value.kind))")
      return
    }
  }

  /// Nulls are YAML's plain `~`, `null`, `Null`, `NULL` and nothing, or a
  /// `!!null` tag; quoted, longer or otherwise spelled, a scalar is text.
  @Test func nullsAreTheCoreSchemasNulls() throws {
    let values = [
      "~", "null", "Null", "NULL", "", "'null'", "nulls", "nUll", "x", "!!null", "!!str null", "~~", "\"~\"",
    ]
    let text = values.enumerated().map { "k\($0.offset): \($0.element)\n" }.joined()
    let root = try #require(try load(text))
    guard case .mapping(let pairs) = root.kind else { return #expect(Bool(false), "not a mapping") }
    #expect(
      pairs.map(\.value.isNull) == [
        true, true, true, true, true, false, false, false, false, true, false, false, false,
      ])
  }

  @Test func emptyDocumentIsNil() throws {
    #expect(try load("") == nil)
    #expect(try load("# only a comment\n") == nil)
  }

  @Test func aliasesShareTheAnchoredNode() throws {
    let root = try #require(try load("base: &b {x: 1}\nuse: *b\n"))
    guard case .mapping(let p) = root.kind, case .mapping(let inner) = p[1].value.kind else {
      Issue.record("unexpected shape")
      return
    }
    #expect(inner.first?.key.scalarText == "x")
    #expect(p[1].value.mark == SourceMark(line: 2, column: 6))  // the alias's own position
  }

  @Test func mergeKeysKeepOwnKeysFirst() throws {
    let root = try #require(try load("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n"))
    guard case .mapping(let p) = root.kind, case .mapping(let inner) = p[1].value.kind else {
      Issue.record("unexpected shape")
      return
    }
    let values = Dictionary(uniqueKeysWithValues: inner.map { ($0.key.scalarText!, $0.value.scalarText!) })
    #expect(values == ["x": "1", "y": "3"])
  }

  @Test func unknownAliasIsAnError() {
    #expect(throws: YAMLError.self) { try load("a: *nope\n") }
  }

  @Test func syntaxErrorsCarryPosition() {
    do {
      _ = try load("a: 1\nb: [1, 2\nc: 3\n")
      Issue.record("accepted malformed YAML")
    } catch {
      #expect(error.message.hasPrefix("YAML syntax error"))
      #expect(error.mark != nil)
      #expect((error.mark?.line ?? 0) >= 2)
    }
  }

  @Test func secondDocumentIsRejected() {
    #expect(throws: YAMLError.self) { try load("a: 1\n---\nb: 2\n") }
  }

  @Test func deepNestingIsRejected() {
    let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    do {
      _ = try load(deep)
      Issue.record("accepted 10,000 levels")
    } catch {
      #expect(error.message.contains("nesting deeper than 64"))
    }
  }

  @Test func sizeLimit() {
    var limits = YAMLLimits()
    limits.maxBytes = 100
    #expect(throws: YAMLError.self) { try load(String(repeating: "a: 1\n", count: 30), limits: limits) }
  }

  /// "Billion laughs": nine levels of ten aliases each would expand to 10^9
  /// nodes. It must be refused quickly, without building the expansion.
  @Test func aliasBombFailsFastWithBoundedMemory() {
    var doc = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for i in 1...9 {
      let refs = Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ")
      doc += "a\(i): &a\(i) [\(refs)]\n"
    }
    doc += "files: *a9\n"
    let clock = ContinuousClock()
    let start = clock.now
    do {
      _ = try load(doc)
      Issue.record("accepted an alias bomb")
    } catch {
      #expect(error.message.contains("aliases expand to more than"))
    }
    // Generous bound: the refusal is immediate (milliseconds); this only
    // catches an implementation that expands the tree.
    #expect(clock.now - start < .seconds(5))
  }

  @Test func manyAliasesWithinLimitsAreFine() throws {
    var doc = "common: &c {schedule: every 6h}\nitems:\n"
    for i in 0..<1000 { doc += "  - {<<: *c, id: f\(i)}\n" }
    let root = try #require(try load(doc))
    guard case .mapping(let p) = root.kind, case .sequence(let items) = p[1].value.kind else {
      Issue.record("unexpected shape")
      return
    }
    #expect(items.count == 1000)
  }

  @Test func binaryAndInvalidUTF8AreErrorsNotCrashes() {
    let inputs: [[UInt8]] = [
      [0x61, 0x3A, 0x20, 0xC3, 0x28], [0x00, 0x00, 0x00], Array("a: \u{7}\n".utf8),
      Array(repeating: 0x80, count: 64),
    ]
    for bytes in inputs {
      #expect(throws: YAMLError.self) { try YAMLLoader.load(bytes) }
    }
    // A UTF-16 byte-order mark is valid YAML; the manifest layer rejects what it holds.
    let (m, d) = decode(String(decoding: [0xFF, 0xFE, 0x00, 0x41], as: UTF8.self))
    #expect(m == nil && errors(d).count == 1)
  }
}
