import Foundation
import Testing

/// The Debian package (SPEC §10.4), on this machine: `scripts/package`
/// builds it (from this build's binary), lintian reports no error,
/// `dpkg -i` installs it, the service's command runs once as its user, and
/// `dpkg -r` then `dpkg -P` leave nothing of it behind. It installs into
/// the system, so it runs only as root, one test at a time.
@Suite(.serialized) final class DebianPackageTests {
  let dir = makeTempDir()
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func sh(_ script: String) throws -> Run { try run(["-c", script], tool: "/bin/bash") }

  @Test func buildLintInstallRunRemovePurge() throws {
    guard getuid() == 0 else { return }
    #expect(try sh("dpkg -s syncfiles >/dev/null 2>&1").status != 0, "syncfiles is already installed here")
    let built = try run(
      [packageRoot + "/scripts/package", dir], env: ["SYNCFILES_BIN": try syncfilesBinary()], tool: "/bin/bash")
    #expect(built.status == 0, "\(built.stderr)")
    let deb = built.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(
      deb.hasSuffix(
        "syncfiles_0.1.0_\(try sh("dpkg --print-architecture").stdout.trimmingCharacters(in: .whitespacesAndNewlines)).deb"
      ))

    // lintian: no error. This build's binary is a debug one, linked to the
    // toolchain's runtime by RUNPATH; a release build links it in.
    let lint = try sh("lintian --tag-display-limit 0 '\(deb)' 2>/dev/null")
    let errors = lint.stdout.split(separator: "\n").filter {
      $0.hasPrefix("E:") && !$0.contains("custom-library-search-path")
    }
    #expect(errors.isEmpty, "\(lint.stdout)")
    defer { _ = try? sh("dpkg -P syncfiles >/dev/null 2>&1") }
    let files = try #require(try? sh("dpkg-deb -c '\(deb)' | awk '{print $6}' | sed 's|^\\./|/|'").stdout)
      .split(separator: "\n").map(String.init).filter { !$0.hasSuffix("/") }
    let installed = try sh("dpkg -i '\(deb)' 2>&1")
    #expect(installed.status == 0, "\(installed.stdout)")
    #expect(try sh("getent passwd syncfiles").status == 0, "postinst made the user")
    // The units as systemd reads them, installed: their binary, user and man page exist now.
    let units = try sh(
      "systemd-analyze verify /lib/systemd/system/syncfiles.service /lib/systemd/system/syncfiles.timer 2>&1")
    #expect(units.status == 0 && units.stdout.isEmpty, "\(units.stdout)")

    // The service's command, once, as its user, with the environment systemd gives it.
    write(Array("served\n".utf8), to: dir + "/src.txt")
    chmod(dir, 0o755)
    chmod(dir + "/src.txt", 0o644)
    write(
      """
      version: 1
      name: pkgtest
      root: /var/lib/syncfiles/files/pkgtest
      files:
        - {id: a, url: 'file://\(dir)/src.txt', destination: a.txt, max_bytes: 1K}

      """, to: "/etc/syncfiles/manifests.d/pkgtest.yaml")
    let ran = try sh(
      "runuser -u syncfiles -- env -i PATH=/usr/bin:/bin STATE_DIRECTORY=/var/lib/syncfiles /usr/bin/syncfiles apply --progress never /etc/syncfiles/manifests.d 2>&1"
    )
    #expect(ran.status == 0, "\(ran.stdout)")
    #expect(readBytes("/var/lib/syncfiles/files/pkgtest/a.txt") == Array("served\n".utf8))
    #expect(FileManager.default.fileExists(atPath: "/var/lib/syncfiles/journal"))
    try FileManager.default.removeItem(atPath: "/etc/syncfiles/manifests.d/pkgtest.yaml")

    #expect(try sh("dpkg -r syncfiles 2>&1").status == 0)
    #expect(!FileManager.default.fileExists(atPath: "/usr/bin/syncfiles"))
    #expect(FileManager.default.fileExists(atPath: "/etc/syncfiles/manifests.d/README"), "dpkg -r keeps conffiles")
    #expect(try sh("dpkg -P syncfiles 2>&1").status == 0)
    let left = files.filter { FileManager.default.fileExists(atPath: $0) }
    #expect(left.isEmpty, "left behind: \(left)")
    for path in ["/var/lib/syncfiles", "/etc/syncfiles"] {
      #expect(!FileManager.default.fileExists(atPath: path), "\(path) is left behind")
    }
    #expect(try sh("getent passwd syncfiles").status != 0, "the user is left behind")
  }
}
