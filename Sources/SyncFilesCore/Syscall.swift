#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The errno of a failed system call.
public struct Errno: Error, Sendable, Hashable {
  public var code: Int32
  public init(_ code: Int32) { self.code = code }
  /// strerror's words for it.
  public var text: String { String(cString: strerror(code)) }
}

/// The one way system calls that fail with -1 and errno are made: a call a
/// signal interrupted (EINTR) is made again; any other failure is handed
/// to `fail` as its errno, which turns it into the module's own error.
/// (Model: swift-nio's `SystemCallHelpers.swift`.)
package enum Syscall {
  /// The call's result, or `fail(errno)` thrown.
  @discardableResult
  package static func check<T: BinaryInteger, E: Error>(_ call: () -> T, or fail: (Errno) -> E) throws(E) -> T {
    while true {
      let r = call()
      if r >= 0 { return r }
      let e = errno
      if e != EINTR { throw fail(Errno(e)) }
    }
  }
}
