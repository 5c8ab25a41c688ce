import SyncFilesCore

/// Limits that keep hostile YAML from costing unbounded time or memory.
/// Aliases are never copied: an alias shares its anchor's node, so memory
/// stays proportional to the text, and `maxExpandedNodes`/`maxAliasNodes`
/// bound the work of anything that walks the tree.
public struct YAMLLimits: Sendable, Hashable {
  /// Largest document accepted, in bytes.
  public var maxBytes: Int = 64 << 20
  /// Deepest nesting of sequences and mappings.
  public var maxDepth: Int = 64
  /// Nodes in the tree as a walker sees it, with every alias expanded.
  public var maxExpandedNodes: Int = 8_000_000
  /// Nodes reached through aliases, at most this or the number of nodes
  /// written out in the text, whichever is larger.
  public var maxAliasNodes: Int = 100_000

  public init() {}
}

public enum ScalarStyle: Sendable, Hashable {
  case plain
  case quoted
  case block
}

/// A YAML node with the 1-based position where it starts.
public struct YAMLNode: Sendable {
  public enum Kind: Sendable {
    case scalar(String, ScalarStyle)
    case sequence([YAMLNode])
    case mapping([YAMLPair])
  }

  public var kind: Kind
  public var mark: SourceMark
  public var tag: String?
  /// Nodes in this subtree, counting aliased subtrees in full.
  public var weight: Int

  public var kindName: String {
    switch kind {
    case .scalar: return isNull ? "null" : "a scalar"
    case .sequence: return "a list"
    case .mapping: return "a mapping"
    }
  }

  /// Plain `~`, `null`, `Null`, `NULL` or an empty plain scalar.
  public var isNull: Bool {
    // Every null is at most four bytes: a longer scalar is told by its length.
    if case .scalar(let s, .plain) = kind, s.utf8.count <= 4, tag == nil || tag == "tag:yaml.org,2002:null" {
      return s.isEmpty || s == "~" || s == "null" || s == "Null" || s == "NULL"
    }
    return false
  }

  public var scalarText: String? {
    if case .scalar(let s, _) = kind { return s }
    return nil
  }
}

public struct YAMLPair: Sendable {
  public var key: YAMLNode
  public var value: YAMLNode
}

public struct YAMLError: Error, Sendable, Hashable {
  public var mark: SourceMark?
  public var message: String
}

/// Takes the items of one top-level list as each is parsed, so a large list
/// is never held whole in the tree (a manifest's `files:`).
public protocol YAMLListSink {
  /// The list under `key` starts. `root` is the top mapping as far as it has
  /// been read: its pairs so far, and last `key` with an empty list (its
  /// marks are the list's). True: items go to `item(_:)`, and the tree keeps
  /// the list empty.
  mutating func begin(root: YAMLNode) -> Bool
  mutating func item(_ node: consuming YAMLNode)
}

/// The sink of a plain parse: it takes no list.
package struct NoListSink: YAMLListSink {
  package func begin(root: YAMLNode) -> Bool { false }
  package func item(_ node: consuming YAMLNode) {}
}
