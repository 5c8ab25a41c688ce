internal import CYAML
import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// The text a parse reads: bytes in memory, or an open file read as libyaml
/// asks for it (16 KiB at a time), so that a large manifest is never held
/// whole.
public enum YAMLInput {
  case bytes([UInt8])
  /// Read from its current offset to its end; the caller closes it.
  case file(Int32)
}

public enum YAMLLoader {
  /// Parses one YAML document. Returns nil for an empty document.
  public static func load(_ bytes: [UInt8], limits: YAMLLimits = YAMLLimits()) throws(YAMLError) -> YAMLNode? {
    var sink = NoListSink()
    return try load(.bytes(bytes), limits: limits, streaming: nil, into: &sink)
  }

  /// Parses one YAML document, handing the items of the top-level list under
  /// `key` to `sink` as they complete (when it takes them). An item may still
  /// be an alias's anchor; the tree keeps nothing else of it.
  public static func load<Sink: YAMLListSink>(
    _ bytes: [UInt8], limits: YAMLLimits = YAMLLimits(), streaming key: String?, into sink: inout Sink
  ) throws(YAMLError) -> YAMLNode? {
    try load(.bytes(bytes), limits: limits, streaming: key, into: &sink)
  }

  /// As above, from bytes or from a file.
  public static func load<Sink: YAMLListSink>(
    _ input: YAMLInput, limits: YAMLLimits = YAMLLimits(), streaming key: String?, into sink: inout Sink
  ) throws(YAMLError) -> YAMLNode? {
    var parser = yaml_parser_t()
    guard yaml_parser_initialize(&parser) == 1 else {
      throw YAMLError(mark: nil, message: "out of memory starting the YAML parser")
    }
    defer { yaml_parser_delete(&parser) }
    switch input {
    case .bytes(let bytes):
      if bytes.count > limits.maxBytes { throw tooLarge(Int64(bytes.count), limits) }
      // The parser reads from this buffer until it is deleted: keep both alive together.
      return try bytes.withUnsafeBufferPointer { (buf) throws(YAMLError) -> YAMLNode? in
        yaml_parser_set_input_string(&parser, buf.baseAddress ?? UnsafePointer(bitPattern: 1)!, buf.count)
        return try parse(&parser, limits: limits, streaming: key, into: &sink, reader: nil)
      }
    case .file(let fd):
      let reader = FileReader(fd: fd, limit: limits.maxBytes)
      return try withExtendedLifetime(reader) { () throws(YAMLError) -> YAMLNode? in
        yaml_parser_set_input(&parser, { FileReader.read($0, $1, $2, $3) }, Unmanaged.passUnretained(reader).toOpaque())
        return try parse(&parser, limits: limits, streaming: key, into: &sink, reader: reader)
      }
    }
  }

  private static func tooLarge(_ size: Int64?, _ limits: YAMLLimits) -> YAMLError {
    let message =
      size.map {
        "manifest is \(ByteSize.format($0)), larger than the \(ByteSize.format(Int64(limits.maxBytes))) limit"
      } ?? FileIO.tooLarge(limit: limits.maxBytes)
    return YAMLError(mark: nil, message: message)
  }

  /// Feeds libyaml from a file descriptor, and remembers why it stopped
  /// when it stopped early (a read error, or more than the limit).
  private final class FileReader {
    package let fd: Int32
    package let limit: Int
    package var total = 0
    package var readErrno: Int32 = 0
    package var overLimit = false

    package init(fd: Int32, limit: Int) {
      self.fd = fd
      self.limit = limit
    }

    /// libyaml's read handler: 1 with the bytes read (0 at the end), 0 to stop.
    package static func read(
      _ data: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ size: Int,
      _ sizeRead: UnsafeMutablePointer<Int>?
    ) -> Int32 {
      let r = Unmanaged<FileReader>.fromOpaque(data!).takeUnretainedValue()
      var n: Int
      repeat { n = Glibc.read(r.fd, buffer, size) } while n < 0 && errno == EINTR
      if n < 0 {
        r.readErrno = errno
        return 0
      }
      r.total += n
      if r.total > r.limit {
        r.overLimit = true
        return 0
      }
      sizeRead!.pointee = n
      return 1
    }

    /// Why the parse stopped, when it was the reading and not the text.
    package func failure(_ limits: YAMLLimits) -> YAMLError? {
      if overLimit { return tooLarge(nil, limits) }
      if readErrno != 0 {
        return YAMLError(mark: nil, message: "cannot read: \(String(cString: strerror(readErrno)))")
      }
      return nil
    }
  }

  private static func parse<Sink: YAMLListSink>(
    _ parser: inout yaml_parser_t, limits: YAMLLimits, streaming key: String?, into sink: inout Sink,
    reader: FileReader?
  ) throws(YAMLError) -> YAMLNode? {
    var builder = Builder(limits: limits, streamKey: key)
    var event = yaml_event_t()
    while true {
      guard yaml_parser_parse(&parser, &event) == 1 else {
        throw reader?.failure(limits) ?? syntaxError(&parser)
      }
      defer { yaml_event_delete(&event) }
      if event.type == YAML_STREAM_END_EVENT { break }
      try builder.handle(&event)
      if let root = builder.offer {
        builder.offer = nil
        builder.streaming = sink.begin(root: root)
      }
      if let item = builder.streamed.take() { sink.item(item) }
    }
    return builder.root
  }

  private static func syntaxError(_ parser: inout yaml_parser_t) -> YAMLError {
    let problem = parser.problem.map { String(cString: $0) } ?? "malformed YAML"
    var message = "YAML syntax error: \(problem)"
    if let ctx = parser.context.map({ String(cString: $0) }) {
      let m = parser.context_mark
      message += " (\(ctx) at line \(m.line + 1), column \(m.column + 1))"
    }
    let pm = parser.problem_mark
    var mark = SourceMark(line: Int(pm.line) + 1, column: Int(pm.column) + 1)
    if parser.error == YAML_READER_ERROR {
      // Reader errors carry a byte offset, not a line.
      mark = SourceMark(line: 1, column: 1)
      message += " at byte \(parser.problem_offset)"
    }
    return YAMLError(mark: mark, message: message)
  }

  private struct Frame {
    package var isMapping: Bool
    package var mark: SourceMark
    package var tag: String?
    package var anchor: String?
    package var items: [YAMLNode] = []
    package var pairs: [YAMLPair] = []
    package var pendingKey: YAMLNode? = nil
    package var weight = 1
  }

  private struct Builder {
    package let limits: YAMLLimits
    package var stack: [Frame] = []
    package var anchors: [String: YAMLNode] = [:]
    package var root: YAMLNode? = nil
    package var documents = 0
    package var realNodes = 0
    package var expandedNodes = 0
    package var aliasNodes = 0
    /// The top-level key whose list may stream, until it has been offered.
    package var streamKey: String?
    /// The top mapping so far, offered when the list under `streamKey` starts.
    package var offer: YAMLNode? = nil
    /// Items of that list go to `streamed`, one at a time, not to the tree.
    package var streaming = false
    package var streamed: YAMLNode? = nil

    package init(limits: YAMLLimits, streamKey: String?) {
      self.limits = limits
      self.streamKey = streamKey
    }

    /// The list now starting is the value of `streamKey` in the top mapping,
    /// written before any merge key (a merge could change what came before).
    package func startsStream(_ isMapping: Bool) -> Bool {
      guard !isMapping, let key = streamKey, stack.count == 1, stack[0].isMapping,
        case .scalar(let k, .plain)? = stack[0].pendingKey?.kind, k == key
      else { return false }
      return !stack[0].pairs.contains { if case .scalar("<<", .plain) = $0.key.kind { true } else { false } }
    }

    static func mark(_ m: yaml_mark_t) -> SourceMark {
      SourceMark(line: Int(m.line) + 1, column: Int(m.column) + 1)
    }

    /// An anchor or tag of an event: libyaml's NUL-terminated bytes, or none.
    static func string(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
      p.map { String(cString: UnsafePointer($0)) }
    }

    mutating func count(_ n: Int, alias: Bool, at mark: SourceMark) throws(YAMLError) {
      expandedNodes += n
      if alias {
        aliasNodes += n
        if aliasNodes > max(limits.maxAliasNodes, realNodes) {
          throw YAMLError(
            mark: mark,
            message:
              "aliases expand to more than \(max(limits.maxAliasNodes, realNodes)) nodes; refusing a document that grows this much when expanded"
          )
        }
      } else {
        realNodes += n
      }
      if expandedNodes > limits.maxExpandedNodes {
        throw YAMLError(mark: mark, message: "document has more than \(limits.maxExpandedNodes) nodes")
      }
    }

    mutating func handle(_ event: inout yaml_event_t) throws(YAMLError) {
      let mark = Builder.mark(event.start_mark)
      switch event.type {
      case YAML_DOCUMENT_START_EVENT:
        documents += 1
        if documents > 1 {
          throw YAMLError(mark: mark, message: "a manifest holds one YAML document; found a second one here")
        }
      case YAML_SCALAR_EVENT: try scalar(&event, at: mark)
      case YAML_ALIAS_EVENT:
        let name = Builder.string(event.data.alias.anchor) ?? ""
        guard var node = anchors[name] else {
          throw YAMLError(mark: mark, message: "alias *\(name) refers to no anchor &\(name) defined before it")
        }
        try count(node.weight, alias: true, at: mark)
        node.mark = mark
        try emit(node, anchor: nil)
      case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT: try open(&event, at: mark)
      case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT: try close()
      default:
        break
      }
    }

    /// A scalar: its text and style, as a node.
    private mutating func scalar(_ event: inout yaml_event_t, at mark: SourceMark) throws(YAMLError) {
      try count(1, alias: false, at: mark)
      let len = event.data.scalar.length
      let text: String
      if let p = event.data.scalar.value, len > 0 {
        text = String(decoding: UnsafeBufferPointer(start: p, count: len), as: UTF8.self)
      } else {
        text = ""
      }
      let style: ScalarStyle
      switch event.data.scalar.style {
      case YAML_PLAIN_SCALAR_STYLE, YAML_ANY_SCALAR_STYLE: style = .plain
      case YAML_LITERAL_SCALAR_STYLE, YAML_FOLDED_SCALAR_STYLE: style = .block
      default: style = .quoted
      }
      let node = YAMLNode(
        kind: .scalar(text, style), mark: mark, tag: Builder.string(event.data.scalar.tag), weight: 1)
      try emit(node, anchor: Builder.string(event.data.scalar.anchor))
    }

    /// A sequence or mapping opens: a frame of its own (the first one of a
    /// long `files:` list may start streaming its items).
    private mutating func open(_ event: inout yaml_event_t, at mark: SourceMark) throws(YAMLError) {
      if stack.count >= limits.maxDepth {
        throw YAMLError(mark: mark, message: "nesting deeper than \(limits.maxDepth) levels")
      }
      try count(1, alias: false, at: mark)
      let isMapping = event.type == YAML_MAPPING_START_EVENT
      if startsStream(isMapping), let key = stack[0].pendingKey {
        streamKey = nil
        let list = YAMLNode(kind: .sequence([]), mark: mark, tag: nil, weight: 1)
        offer = YAMLNode(
          kind: .mapping(stack[0].pairs + [YAMLPair(key: key, value: list)]), mark: stack[0].mark,
          tag: stack[0].tag, weight: stack[0].weight)
      }
      stack.append(
        Frame(
          isMapping: isMapping, mark: mark,
          tag: Builder.string(isMapping ? event.data.mapping_start.tag : event.data.sequence_start.tag),
          anchor: Builder.string(isMapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor)))
      // A file entry has a handful of keys: one allocation instead of growing 1, 2, 4, 8.
      if isMapping { stack[stack.count - 1].pairs.reserveCapacity(6) }
    }

    /// A sequence or mapping closes: its frame becomes a node.
    private mutating func close() throws(YAMLError) {
      let frame = stack.removeLast()
      if stack.count == 1 { streaming = false }
      let node: YAMLNode
      if frame.isMapping {
        let pairs = try Builder.applyMerges(frame.pairs)
        node = YAMLNode(kind: .mapping(pairs), mark: frame.mark, tag: frame.tag, weight: frame.weight)
      } else {
        node = YAMLNode(kind: .sequence(frame.items), mark: frame.mark, tag: frame.tag, weight: frame.weight)
      }
      try emit(node, anchor: frame.anchor)
    }

    /// `node` is consumed: it is moved into its place, not copied (a node
    /// per event; the copies and their releases cost the parser's thread).
    mutating func emit(_ node: consuming YAMLNode, anchor: String?) throws(YAMLError) {
      if let anchor { anchors[anchor] = copy node }
      guard !stack.isEmpty else {
        root = consume node
        return
      }
      let i = stack.count - 1
      stack[i].weight += node.weight
      if stack[i].isMapping {
        if let key = stack[i].pendingKey.take() {
          stack[i].pairs.append(YAMLPair(key: key, value: consume node))
        } else {
          stack[i].pendingKey = consume node
        }
      } else if streaming && i == 1 {
        streamed = consume node
      } else {
        stack[i].items.append(consume node)
      }
    }

    /// YAML merge keys: `<<: *base` or `<<: [*a, *b]` copy keys the mapping
    /// does not set itself (earlier sources win over later ones).
    static func applyMerges(_ pairs: [YAMLPair]) throws(YAMLError) -> [YAMLPair] {
      guard
        pairs.contains(where: {
          if case .scalar("<<", .plain) = $0.key.kind { return true } else { return false }
        })
      else { return pairs }
      var own: [YAMLPair] = []
      var merged: [YAMLPair] = []
      for pair in pairs {
        guard case .scalar("<<", .plain) = pair.key.kind else {
          own.append(pair)
          continue
        }
        var sources: [YAMLNode] = []
        switch pair.value.kind {
        case .mapping: sources = [pair.value]
        case .sequence(let items): sources = items
        case .scalar:
          throw YAMLError(mark: pair.value.mark, message: "merge key '<<' takes a mapping or a list of mappings")
        }
        for source in sources {
          guard case .mapping(let sp) = source.kind else {
            throw YAMLError(mark: source.mark, message: "merge key '<<' takes a mapping or a list of mappings")
          }
          merged.append(contentsOf: sp)
        }
      }
      func keyText(_ n: YAMLNode) -> String? { n.scalarText }
      var seen = Set(own.compactMap { keyText($0.key) })
      var result = own
      for pair in merged {
        if let k = keyText(pair.key) {
          if seen.contains(k) { continue }
          seen.insert(k)
        }
        result.append(pair)
      }
      return result
    }
  }
}
