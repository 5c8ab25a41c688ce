import SyncFilesCore

/// The keys of a prefix entry (a url ending in `/`): which objects it
/// takes, and how much of what it installed one run may remove.
extension FileKeySpec {
  /// A glob, or a list of them.
  private static let globsSchema =
    ##"{"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string", "minLength": 1}}]}"##

  package static let prefixKeys: [FileKeySpec] = [
    .value(
      .include, "include", \.include, scope: .prefix,
      type: "glob or list of globs", default: "every key", example: "`include: ['*.bin', 'v2/**']`",
      rule:
        "only on a prefix (an `s3://` url ending in `/`): keys below it to take; `*` stops at `/`, `**` does not ([object storage](object-storage.md#prefixes))",
      schema:
        ##"{"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string", "minLength": 1}}]}"##
    ) { d, node, label in d.globs(node, label) },
    .value(
      .exclude, "exclude", \.exclude, scope: .prefix,
      type: "glob or list of globs", default: "none", example: "`exclude: ['**.tmp']`",
      rule: "keys not to take; wins over `include`",
      schema:
        ##"{"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string", "minLength": 1}}]}"##
    ) { d, node, label in d.globs(node, label) },
    .value(
      .prune, "prune", \.prune, scope: .prefix,
      type: "boolean", default: "false", example: "`prune: true`",
      rule:
        "removes files this prefix installed whose objects are gone from a complete listing, while they are as installed; nothing else",
      schema: ##"{"type": "boolean"}"##
    ) { d, node, label in d.bool(node, label) },
    .value(
      .pruneMax, "prune_max", \.pruneMax,
      type: "count or percentage", default: "`50%`", example: "`prune_max: 100%`",
      rule:
        "at most this many of the files the prefix installed go in one run (more than one file); a run that would remove more, as an empty listing would, removes nothing and fails the prefix, naming this key ([object storage](object-storage.md#prefixes))",
      schema:
        ##"{"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?%$"}]}"##
    ) { d, node, label in d.decodePruneMax(node, label) },
  ]
}

extension ManifestDecoder {
  /// `prune_max`: a count of files (`10`) or a share of those the prefix installed (`50%`).
  package mutating func decodePruneMax(_ node: YAMLNode, _ what: String) -> PruneLimit? {
    guard let text = string(node, what) else { return nil }
    if let limit = PruneLimit.parse(text) { return limit }
    error(
      node.mark,
      "\(what) must be a count of files such as 10, or a percentage from 0% to 100% such as 50%, found '\(text)'")
    return nil
  }

  /// `include` or `exclude`: a glob, or a list of them, over the keys below a prefix.
  package mutating func globs(_ node: YAMLNode, _ what: String) -> [String]? {
    let items: [YAMLNode]
    switch node.kind {
    case .sequence(let list): items = list
    case .scalar where !node.isNull: items = [node]
    default:
      error(node.mark, "\(what) must be a glob or a list of globs such as ['*.bin', 'v2/**'], found \(node.kindName)")
      return nil
    }
    var out: [String] = []
    for item in items {
      guard let g = string(item, "each glob of \(what)") else { return nil }
      if g.isEmpty || g.hasPrefix("/") {
        error(item.mark, "\(what) glob '\(g)' matches keys below the prefix, so it cannot be empty or start with /")
        return nil
      }
      out.append(g)
    }
    return out
  }
}
