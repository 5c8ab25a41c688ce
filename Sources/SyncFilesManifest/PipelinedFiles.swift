import SyncFilesCore

/// Decodes the items of `files:` on a second thread while libyaml parses the
/// rest, so that parsing and decoding do not take turns on one core. One
/// thread decodes every item, in the order parsed, so the diagnostics and
/// entries are those of `StreamedFiles` alone. The first `inlineItems` are
/// decoded on the parser's thread: a small manifest starts no thread.
package final class PipelinedFiles: YAMLListSink, @unchecked Sendable {
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
  package static let window = 128

  package init(_ inner: StreamedFiles, inlineItems: Int) {
    self.inner = inner
    self.inlineItems = inlineItems
  }

  package func begin(root: YAMLNode) -> Bool { inner.begin(root: root) }

  package func item(_ node: consuming YAMLNode) {
    seen += 1
    if !started && seen <= inlineItems { return inner.item(node) }
    if !started {
      started = true
      startThread { [self] in work() }
    }
    pending.append(node)
    if pending.count >= Self.chunk { handOver() }
  }

  /// Items parsed and not yet handed over (the parser's thread only).
  private var pending: [YAMLNode] = []
  /// Items handed over at once: one lock and at most one wake-up for each
  /// chunk, not for each item.
  static let chunk = 32

  /// Queues the pending items (waiting while the window is full), and takes
  /// back the batches the worker has decoded, which are freed here.
  private func handOver() {
    let decoded: [[YAMLNode]] = lock.locked {
      while queue.count >= Self.window { lock.wait(until: nil) }
      let wasEmpty = queue.isEmpty
      if wasEmpty {
        swap(&queue, &pending)
        lock.broadcast()
      } else {
        queue.append(contentsOf: pending)
        pending.removeAll(keepingCapacity: true)
      }
      var d: [[YAMLNode]] = []
      swap(&d, &done)
      return d
    }
    _ = consume decoded
  }

  /// Batches the worker has decoded, handed back so that their nodes are
  /// freed on the parser's thread, which allocated them. Freed by the
  /// worker, each would go back to the parser's malloc arena under the
  /// arena's lock while the parser allocates from it, and the two would
  /// wait on that lock.
  private var done: [[YAMLNode]] = []

  /// Waits for every item handed over to be decoded; the sink is then the
  /// caller's again (also after a syntax error ended the parse early).
  func end() -> StreamedFiles {
    guard started else { return inner }
    if !pending.isEmpty { handOver() }
    lock.locked {
      closed = true
      lock.broadcast()
      while !workerDone { lock.wait(until: nil) }
      done.removeAll()
    }
    return inner
  }

  private func work() {
    while true {
      let batch: [YAMLNode]? = lock.locked {
        while queue.isEmpty && !closed { lock.wait(until: nil) }
        if queue.isEmpty { return nil }
        // Swapped out, not copied: the queue's next buffer is the parser's to make.
        var b: [YAMLNode] = []
        swap(&b, &queue)
        lock.broadcast()  // a parser waiting for room
        return b
      }
      guard let batch else { break }
      for node in batch { inner.item(node) }
      lock.locked { done.append(batch) }
    }
    lock.locked {
      workerDone = true
      lock.broadcast()
    }
  }
}
