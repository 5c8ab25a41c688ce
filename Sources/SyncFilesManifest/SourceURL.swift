import SyncFilesCore

/// A string from the manifest after `${VAR}` expansion. Its description is
/// the text as written (with `${VAR}` intact), so printing it can never leak
/// a value taken from the environment; `revealed` is for the transfer only.
public struct ExpandedString: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// The text as written in the manifest.
  public let template: String
  private let value: String
  /// True when any `${VAR}` was substituted.
  public let hasSecret: Bool

  public init(template: String, value: String, hasSecret: Bool) {
    self.template = template
    self.value = value
    self.hasSecret = hasSecret
  }

  public init(plain: String) {
    self.init(template: plain, value: plain, hasSecret: false)
  }

  /// The expanded value, to hand to libcurl or a plugin. Never print it.
  public var revealed: String { value }
  public var description: String { template }
  public var debugDescription: String { template }
  public var customMirror: Mirror { Mirror(self, children: ["template": template]) }
}

/// A validated source URL.
public struct SourceURL: Sendable, Hashable, CustomStringConvertible {
  // A text with no `${VAR}` is kept in two parts: up to its last `/`, a
  // string the URLs of one folder share, and the rest, most often short
  // enough to need no allocation. One with a variable keeps its expanded
  // text in a box.
  private let head: String
  private let tail: String
  private let expanded: SharedValue<ExpandedString>?
  /// `http`, `https` or `file` by number (no string of its own), 0 for a
  /// plugin's scheme, read from the text when asked.
  private let schemeCode: UInt8
  /// Whether the text shown hides a password (a URL with userinfo).
  private let hidesPassword: Bool
  /// The port, 0 for none (a URL's port is 1-65535): two bytes, not an
  /// optional's sixteen, in each of a manifest's entries.
  private let storedPort: UInt16
  /// Lower-case host (empty for `file:`).
  public let host: String

  /// `sharedHead`: the head of a URL made before; this one's head is that
  /// string when they are equal, and becomes it otherwise.
  public init(
    scheme: String, text: ExpandedString, host: String, port: Int?, hidesPassword: Bool,
    sharedHead: inout String
  ) {
    if text.hasSecret || text.revealed != text.template {
      (head, tail, expanded) = ("", "", SharedValue(text))
    } else {
      var whole = text.template
      (head, tail) = whole.withUTF8 { b in
        let cut = (b.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
        let h = UnsafeBufferPointer(rebasing: b[..<cut])
        if !sharedHead.hasBytes(h) { sharedHead = String(decoding: h, as: UTF8.self) }
        return (sharedHead, String(decoding: UnsafeBufferPointer(rebasing: b[cut...]), as: UTF8.self))
      }
      expanded = nil
    }
    switch scheme {
    case "http": schemeCode = 1
    case "https": schemeCode = 2
    case "file": schemeCode = 3
    default: schemeCode = 0
    }
    self.hidesPassword = hidesPassword
    self.storedPort = port.map { UInt16(clamping: $0) } ?? 0
    self.host = host
  }

  public init(scheme: String, text: ExpandedString, host: String, port: Int?, hidesPassword: Bool) {
    var head = ""
    self.init(scheme: scheme, text: text, host: host, port: port, hidesPassword: hidesPassword, sharedHead: &head)
  }

  /// The URL to fetch (after expansion; relative `file:` URLs made absolute).
  public var text: ExpandedString { expanded?.value ?? ExpandedString(plain: String(head, nil, tail)) }

  public static func == (a: SourceURL, b: SourceURL) -> Bool {
    a.text == b.text && a.schemeCode == b.schemeCode && a.hidesPassword == b.hidesPassword
      && a.storedPort == b.storedPort && a.host == b.host
  }

  public func hash(into h: inout Hasher) {
    h.combine(text)
    h.combine(host)
    h.combine(storedPort)
  }

  /// Lower-case scheme: `http`, `https`, `file`, or a plugin's scheme.
  public var scheme: String {
    switch schemeCode {
    case 1: return "http"
    case 2: return "https"
    case 3: return "file"
    default:
      let value = text.revealed
      return String(value[..<(value.firstIndex(of: ":") ?? value.endIndex)]).lowercased()
    }
  }

  /// Explicit or default port (nil where the scheme has none).
  public var port: Int? { storedPort == 0 ? nil : Int(storedPort) }

  /// For display: as written, with `${VAR}` intact and any password hidden.
  public var display: String { display(of: text) }

  /// `display`, given `text` already made (a URL kept in two parts is
  /// joined anew each time `text` is asked for).
  public func display(of text: ExpandedString) -> String {
    hidesPassword ? Self.hidingPassword(text.template) : text.template
  }

  /// `display` in two parts that join to it, made with no new string when
  /// the URL keeps its text in two (a fingerprint is fed part by part).
  public func withDisplayParts<R>(_ body: (String, String) -> R) -> R {
    guard expanded == nil, !hidesPassword else { return body(display, "") }
    return body(head, tail)
  }

  /// `scheme://host:port`, the origin headers are confined to.
  public var origin: String {
    port.map { "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)"
  }

  public var description: String { display }
  public var isBuiltIn: Bool { PluginLocator.libcurlSchemes.contains(scheme) }
  /// This prefix's url with an object's key below it appended, as listed
  /// (the source encodes it for its requests).
  public func appending(_ key: String, sharedHead: inout String) -> SourceURL {
    let t = text
    return SourceURL(
      scheme: scheme,
      text: ExpandedString(template: t.template + key, value: t.revealed + key, hasSecret: t.hasSecret), host: host,
      port: port, hidesPassword: hidesPassword, sharedHead: &sharedHead)
  }

  /// A prefix (SPEC §9.4): a url ending in `/` of a source that lists
  /// (every scheme but http, https and file, whose urls name one resource).
  public var namesPrefix: Bool { !isBuiltIn && text.template.hasSuffix("/") }

  /// The userinfo of a URL as written (`user:pw` of `https://user:pw@host/`).
  static func userinfo(_ shown: String) -> Substring {
    guard let colon = shown.firstIndex(of: ":") else { return "" }
    let afterColon = shown[shown.index(after: colon)...]
    guard afterColon.hasPrefix("//") else { return "" }
    let rest = afterColon.dropFirst(2)
    let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
    guard let at = rest[..<end].lastIndex(of: "@") else { return "" }
    return rest[..<at]
  }

  /// `https://user:pw@host/` → `https://user:***@host/` (variables stay as written).
  static func hidingPassword(_ shown: String) -> String {
    let user = userinfo(shown)
    guard let colon = user.firstIndex(of: ":"), !user.contains("${") else { return shown }
    var out = shown
    out.replaceSubrange(user.index(after: colon)..<user.endIndex, with: "***")
    return out
  }
}
