import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
#if canImport(Glibc)
  import Glibc
#endif

/// This boot of the machine (`/proc/sys/kernel/random/boot_id`). Bytes a
/// process wrote and did not flush survive its kill (the page cache keeps
/// them) but not a power cut, which always means a new boot: a journal
/// claim made in this boot can be trusted without a flush, one made in an
/// earlier boot only if it was flushed (SPEC §9.2).
///
/// `SYNCFILES_BOOT_ID` stands in for it where a power cut is emulated
/// without a reboot (the LazyFS tests).
public enum BootID {
  public static let current: String = {
    if let forced = Runtime.environment["SYNCFILES_BOOT_ID"], !forced.isEmpty { return forced }
    switch FileIO.readAll("/proc/sys/kernel/random/boot_id", limit: 128) {
    case .success(let bytes): return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
    case .failure: return "unknown"
    }
  }()
}
