/// What identifies one version of a remote file, and how far it can be trusted.
///
/// DESIGN: the weak-date rule (RFC 9110 §8.8.2.2, SPEC §8.1) lives here and
/// nowhere else. A `Last-Modified` is strong only when the response that
/// carried it had a `Date` at least one second later: otherwise the file may
/// have changed again within that second under the same date.
public struct Validators: Sendable, Hashable {
  public var etag: String?
  public var lastModified: String?
  /// `lastModified` was at least one second older than its response's `Date`.
  public var dateIsStrong: Bool

  public init(etag: String?, lastModified: String?, dateIsStrong: Bool) {
    self.etag = etag
    self.lastModified = lastModified
    self.dateIsStrong = dateIsStrong
  }

  /// The validators of a response: the date's strength from its `Date`.
  public init(etag: String?, lastModified: String?, date: String?) {
    self.init(
      etag: etag, lastModified: lastModified,
      dateIsStrong: Validators.isStrong(lastModified: lastModified, date: date))
  }

  /// RFC 9110 §8.8.2.2: strong when `Date` is at least one second after `Last-Modified`.
  public static func isStrong(lastModified: String?, date: String?) -> Bool {
    guard let lm = lastModified.flatMap(HTTPDate.parse), let d = date.flatMap(HTTPDate.parse) else { return false }
    return d.seconds - lm.seconds >= 1
  }

  /// Neither an ETag nor a date: nothing a conditional request could name.
  public var isEmpty: Bool { etag == nil && lastModified == nil }
  public var hasStrongETag: Bool { etag.map { !$0.hasPrefix("W/") } ?? false }
  /// A date is present but was weak when received.
  public var hasWeakDate: Bool { lastModified != nil && !dateIsStrong }

  /// What `If-Range` may carry for data received under these validators, or
  /// nil when the data cannot be proven to be of one version:
  /// - a strong ETag, unless the same response's date was weak (servers such
  ///   as nginx and lighttpd derive their ETag from the modification second
  ///   and size, so it is no stronger than that date: an extension of §8.1);
  /// - a strong date when there is no ETag at all;
  /// - never a weak ETag, never a weak date.
  public var ifRange: String? {
    if let etag { return hasStrongETag && !hasWeakDate ? etag : nil }
    return dateIsStrong ? lastModified : nil
  }

  /// Whether a response with these validators is of the version an
  /// `If-Range` value names: its ETag (a quoted value) or its date; nil when
  /// the response carries no validator of that kind.
  public func names(ifRange sent: String) -> Bool? {
    let mine = sent.hasPrefix("\"") ? etag : lastModified
    return mine.map { $0 == sent }
  }

  /// Both name the same version, as far as trusted validators can tell: an
  /// equal strong ETag with no weak date beside it, or, without ETags, an
  /// equal date strong in both.
  public func isSameVersion(as other: Validators) -> Bool {
    if let x = etag, let y = other.etag { return x == y && hasStrongETag && !hasWeakDate && !other.hasWeakDate }
    if etag == nil, other.etag == nil, let x = lastModified, let y = other.lastModified {
      return x == y && dateIsStrong && other.dateIsStrong
    }
    return false
  }

  /// Trusted for a conditional revalidation (a 304 may be believed).
  /// A weak date makes the ETag beside it no better (see `ifRange`).
  public var canRevalidate: Bool { !hasWeakDate && (etag != nil || lastModified != nil) }
}
