internal import CZlib
import SyncFilesCore
import SyncFilesManifest

/// CRC-32 (IEEE 802.3), for journal record checksums: zlib's `crc32`,
/// already in the process through libcurl.
public enum CRC32 {
  public static func checksum<S: Sequence>(_ bytes: S) -> UInt32 where S.Element == UInt8 {
    if let c = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) { return c }
    return Array(bytes).withUnsafeBytes { checksum($0) }
  }

  public static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = buffer.baseAddress else { return 0 }
    return sf_crc32(base, buffer.count)
  }
}
