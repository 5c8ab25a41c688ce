/// Decodes the items of `files:` on a second thread while libyaml parses the
/// rest (issue 15, W5: parsing and decoding took turns on one core). One
/// thread decodes every item, in the order parsed, so the diagnostics and
/// entries are those of `StreamedFiles` alone. The first `inlineItems` are
/// decoded on the parser's thread: a small manifest starts no thread.
final class PipelinedFiles: YAMLListSink, @unchecked Sendable {
  /// Owned by the parser's thread until the worker starts, then by the
  /// worker until `end()` returns it.
  private var inner: StreamedFiles
  private let inlineItems: Int
  private var seen = 0
  private let lock = Lock()
  private var queue: [YAMLNode] = []
  private var started = false
  private var closed = false
  private var workerDone = false
  /// Items parsed ahead of the decoding, at most (memory stays bounded).
  static let window = 128

  init(_ inner: StreamedFiles, inlineItems: Int = 256) {
    self.inner = inner
    self.inlineItems = inlineItems
  }

  func begin(root: YAMLNode) -> Bool { inner.begin(root: root) }

  func item(_ node: consuming YAMLNode) {
    seen += 1
    if !started && seen <= inlineItems { return inner.item(node) }
    if !started {
      started = true
      startThread { [self] in work() }
    }
    // Moved into the queue, not copied: the closure takes it out of `held`.
    var held: YAMLNode? = consume node
    lock.locked {
      while queue.count >= Self.window { lock.wait(until: nil) }
      queue.append(held.take()!)
      if queue.count == 1 { lock.signal() }
    }
  }

  /// Waits for every item handed over to be decoded; the sink is then the
  /// caller's again (also after a syntax error ended the parse early).
  func end() -> StreamedFiles {
    guard started else { return inner }
    lock.locked {
      closed = true
      lock.signal()
      while !workerDone { lock.wait(until: nil) }
    }
    return inner
  }

  private func work() {
    while true {
      let batch: [YAMLNode]? = lock.locked {
        while queue.isEmpty && !closed { lock.wait(until: nil) }
        if queue.isEmpty { return nil }
        let b = queue
        queue.removeAll(keepingCapacity: true)
        lock.signal()  // a parser waiting for room
        return b
      }
      guard let batch else { break }
      for node in batch { inner.item(node) }
    }
    lock.locked {
      workerDone = true
      lock.signal()
    }
  }
}
