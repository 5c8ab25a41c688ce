#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Small POSIX file helpers for reading manifests.
public enum FileIO {
  public struct Failure: Error, Sendable {
    public var message: String
  }

  /// Reads a whole file, refusing one larger than `limit` bytes.
  public static func readAll(_ path: String, limit: Int) -> Result<[UInt8], Failure> {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(Failure(message: "cannot read: \(String(cString: strerror(errno)))")) }
    defer { close(fd) }
    var st = stat()
    if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
      return .failure(Failure(message: "is a folder"))
    }
    var out: [UInt8] = []
    // Room for the whole file at once: grown by doubling, a 13 MB manifest
    // held 17 MB (and 26 MB while it was copied).
    if st.st_size > 0 && st.st_size <= limit { out.reserveCapacity(Int(st.st_size) + 1) }
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 {
        if errno == EINTR { continue }
        return .failure(Failure(message: "cannot read: \(String(cString: strerror(errno)))"))
      }
      if n == 0 { break }
      out.append(contentsOf: chunk[0..<n])
      if out.count > limit {
        return .failure(
          Failure(message: "manifest is larger than the \(ByteSize.format(Int64(limit))) limit"))
      }
    }
    return .success(out)
  }

  /// Writes all of `bytes` (at `offset`, or at the file position when nil),
  /// retrying short writes and EINTR. Returns false with errno set on failure.
  @discardableResult
  public static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int? = nil) -> Bool {
    bytes.withUnsafeBytes { writeAll(fd, $0, at: offset) }
  }

  @discardableResult
  public static func writeAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer, at offset: Int? = nil) -> Bool {
    guard let base = buf.baseAddress else { return true }
    var done = 0
    while done < buf.count {
      let n =
        offset.map { pwrite(fd, base + done, buf.count - done, off_t($0 + done)) }
        ?? write(fd, base + done, buf.count - done)
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { return false }
      done += n
    }
    return true
  }

  /// Creates `path` and any missing folders above it (mode 0755), like
  /// `mkdir -p`. Returns false with errno set on failure.
  @discardableResult
  public static func makeFolders(_ path: String) -> Bool {
    var partial = ""
    for c in path.split(separator: "/") {
      partial += "/" + c
      if mkdir(partial, 0o755) != 0 && errno != EEXIST { return false }
    }
    return true
  }

  /// Names in a folder, without `.` and `..`; nil when it cannot be listed.
  public static func listFolder(_ path: String) -> [String]? {
    guard let dir = opendir(path) else { return nil }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafePointer(to: entry.pointee.d_name) {
        $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}
