/// What the manifest decoder asks about plugins: is a scheme served, where is
/// a verifier. The run's `PluginRegistry` answers; so does a bare
/// `PluginLocator` (the built-in schemes plus the search path), which keeps
/// the manifest layer free of libcurl.
public protocol PluginCatalog: Sendable {
  /// Schemes served without an external plugin, for messages.
  var builtInSchemes: [String] { get }
  func servesScheme(_ scheme: String) -> Bool
  /// Where the verifier `name` is, if there is one.
  func verifierLocation(named name: String) -> String?
}

extension PluginLocator: PluginCatalog {
  /// The schemes libcurl serves inside syncfiles (the one list of them).
  public static let libcurlSchemes = ["http", "https", "file"]
  /// Every scheme served inside syncfiles: libcurl's, and object storage's.
  public static let builtInSourceSchemes = libcurlSchemes + ["s3"]

  public var builtInSchemes: [String] { Self.builtInSourceSchemes }

  public func servesScheme(_ scheme: String) -> Bool {
    builtInSchemes.contains(scheme) || find(Self.sourceExecutable(scheme: scheme)) != nil
  }

  public func verifierLocation(named name: String) -> String? { find(Self.verifierExecutable(name: name)) }
}
