/// Lexical path helpers. They never touch the file system: confinement to
/// `root` is checked on text here, and enforced again with `openat` and
/// `O_NOFOLLOW` when files are written.
public enum Paths {
  /// Makes `path` absolute against `base` and resolves `.`, `..` and
  /// repeated slashes lexically.
  public static func normalize(_ path: String, relativeTo base: String = "/") -> String {
    let full = path.utf8.first == slash ? path : base + "/" + path
    if isNormal(full) { return full }
    var parts: [Substring] = []
    for c in full.split(separator: "/", omittingEmptySubsequences: true) {
      if c == "." { continue }
      if c == ".." {
        if !parts.isEmpty { parts.removeLast() }
        continue
      }
      parts.append(c)
    }
    return "/" + parts.joined(separator: "/")
  }

  /// Relative, every component 1…255 bytes and neither `.` nor `..`, no
  /// control character: `confine` would return it unchanged. Most
  /// destinations are like this, and checking bytes is cheap.
  package static func isPlainRelative(_ path: String) -> Bool {
    path.withUTF8Bytes { bytes in
      guard let first = bytes.first, first != slash else { return false }
      return plainComponents(bytes[...], asNames: true)
    }
  }

  /// Components separated by single slashes, none empty, `.` or `..`; as
  /// names also at most 255 bytes and free of control characters.
  private static func plainComponents(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, asNames: Bool) -> Bool {
    var length = 0
    var onlyDots = true
    for b in bytes {
      if asNames && (b < 0x20 || b == 0x7F) { return false }
      if b == slash {
        if length == 0 || (onlyDots && length <= 2) { return false }
        length = 0
        onlyDots = true
      } else {
        length += 1
        if asNames && length > 255 { return false }
        if b != dot { onlyDots = false }
      }
    }
    return !(length == 0 || (onlyDots && length <= 2))
  }

  private static let slash = UInt8(ascii: "/")
  private static let dot = UInt8(ascii: ".")

  /// Absolute with no empty, `.` or `..` component and no trailing slash
  /// (what `normalize` would return unchanged). Checked byte by byte: most
  /// paths are already normal, and splitting them costs far more.
  package static func isNormal(_ path: String) -> Bool {
    path.withUTF8Bytes { bytes in
      guard bytes.first == slash else { return false }
      return bytes.count == 1 || plainComponents(bytes.dropFirst(), asNames: false)
    }
  }

  public static func folder(of path: String) -> String {
    split(path) { bytes, slash in
      guard let slash else { return "." }
      return slash == 0 ? "/" : String(decoding: UnsafeBufferPointer(rebasing: bytes[..<slash]), as: UTF8.self)
    }
  }

  public static func fileName(of path: String) -> String {
    split(path) { bytes, slash in
      guard let slash else { return path }
      return String(decoding: UnsafeBufferPointer(rebasing: bytes[(slash + 1)...]), as: UTF8.self)
    }
  }

  /// `path`'s bytes and the offset of its last slash, found by scanning them
  /// in place (the generic `lastIndex(of:)` cost far more a path).
  private static func split<T>(_ path: String, _ body: (UnsafeBufferPointer<UInt8>, Int?) -> T) -> T {
    var path = path
    return path.withUTF8 { bytes in
      var i = bytes.count
      while i > 0 {
        i -= 1
        if bytes[i] == slash { return body(bytes, i) }
      }
      return body(bytes, nil)
    }
  }

  /// `folder(of: path) + "/" + prefix + fileName(of: path) + suffix`, made
  /// in one allocation: a partial's path is asked for each task in a plan.
  public static func sibling(of path: String, prefix: String, suffix: String) -> String {
    var prefix = prefix
    var suffix = suffix
    return split(path) { bytes, slashAt in
      // The folder as `folder(of:)` gives it: "." without a slash, "/" for a slash at 0.
      let head = slashAt.map { UnsafeBufferPointer(rebasing: bytes[..<max($0, 1)]) }
      let name = UnsafeBufferPointer(rebasing: bytes[(slashAt.map { $0 + 1 } ?? 0)...])
      return prefix.withUTF8 { p in
        suffix.withUTF8 { x in
          String(unsafeUninitializedCapacity: (head?.count ?? 1) + 1 + p.count + name.count + x.count) { out in
            var k = 1
            if let head { k = out.initialize(fromContentsOf: head) } else { out[0] = dot }
            out[k] = slash
            k = out[(k + 1)...].initialize(fromContentsOf: p)
            k = out[k...].initialize(fromContentsOf: name)
            return out[k...].initialize(fromContentsOf: x)
          }
        }
      }
    }
  }

  /// `prefix + name + suffix`, made in one allocation (as `sibling` is): the
  /// transfer thread names the partial of each body it receives, and `+`
  /// made a string between and grew the result.
  public static func decorated(_ name: String, prefix: String, suffix: String) -> String {
    name.withUTF8Bytes { n in
      prefix.withUTF8Bytes { p in
        suffix.withUTF8Bytes { x in
          String(unsafeUninitializedCapacity: p.count + n.count + x.count) { out in
            let k = out.initialize(fromContentsOf: p)
            let j = out[k...].initialize(fromContentsOf: n)
            return out[j...].initialize(fromContentsOf: x)
          }
        }
      }
    }
  }

  /// File name without its last extension.
  public static func stem(of path: String) -> String {
    let name = fileName(of: path)
    guard let i = name.utf8.lastIndex(of: dot), i != name.utf8.startIndex else { return name }
    return String(decoding: name.utf8[..<i], as: UTF8.self)
  }

  public static func isInside(_ path: String, root: String) -> Bool {
    root == "/" ? path != "/" : path.hasPrefix(root + "/")
  }

  /// Confines a manifest `destination` to `root`: relative and without `..`,
  /// or absolute inside root. Returns the normalized relative path.
  public static func confine(destination raw: String, root: String) -> Result<String, UnitError> {
    if isPlainRelative(raw) { return .success(raw) }
    if raw.isEmpty { return .failure(.init("destination is empty")) }
    if raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
      return .failure(.init("destination contains a control character"))
    }
    if raw.hasSuffix("/") || raw.hasSuffix("/.") || raw == "." {
      return .failure(.init("destination '\(raw)' names a folder; give the path of a file"))
    }
    var relative = raw
    if raw.hasPrefix("/") {
      if raw.split(separator: "/").contains("..") {
        return .failure(.init("destination '\(raw)' may not contain '..'"))
      }
      let abs = normalize(raw)
      guard isInside(abs, root: root) else {
        return .failure(.init("destination '\(raw)' lies outside root '\(root)'"))
      }
      relative = String(abs.dropFirst(root == "/" ? 1 : root.count + 1))
    }
    let parts = relative.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
    if parts.contains("..") {
      return .failure(.init("destination '\(raw)' may not contain '..': it must stay inside root"))
    }
    if parts.isEmpty { return .failure(.init("destination '\(raw)' names the root folder itself")) }
    for p in parts where p.utf8.count > 255 {
      return .failure(.init("destination has a path component longer than 255 bytes"))
    }
    return .success(parts.joined(separator: "/"))
  }

  /// Percent-encodes a file path for a `file://` URL.
  public static func fileURL(forAbsolutePath path: String) -> String {
    var out = "file://"
    for byte in path.utf8 {
      let c = Character(Unicode.Scalar(byte))
      if byte < 0x80 && (c.isLetter || c.isNumber || "/-._~!$&'()*+,;=:@".contains(c)) {
        out.append(c)
      } else {
        let hex = String(byte, radix: 16, uppercase: true)
        out += "%" + (hex.count == 1 ? "0" : "") + hex
      }
    }
    return out
  }
}

/// Permission bits written as chmod takes them: `0644`, `0755`.
package func octalMode(_ mode: UInt32) -> String {
  let digits = String(mode, radix: 8)
  return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
