// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "syncfiles",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "syncfiles", targets: ["syncfiles"]),
    .library(name: "SyncFiles", targets: ["SyncFiles"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
  ],
  targets: [
    .systemLibrary(
      name: "CCurl",
      pkgConfig: "libcurl",
      providers: [.apt(["libcurl4-openssl-dev"])]
    ),
    .systemLibrary(
      name: "CYAML",
      pkgConfig: "yaml-0.1",
      providers: [.apt(["libyaml-dev"])]
    ),
    .systemLibrary(
      name: "CCrypto",
      pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"])]
    ),
    .systemLibrary(name: "CLinux"),
    .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
    .target(name: "CStart"),
    // The layers, each using only those above it: the compiler refuses a
    // reference that points up (Docs/ARCHITECTURE.md draws them).
    .target(name: "SyncFilesCore", dependencies: ["CLinux", "CCurl", "CYAML"]),
    .target(name: "SyncFilesManifest", dependencies: ["SyncFilesCore", "CYAML", "CLinux"]),
    .target(name: "SyncFilesJournal", dependencies: ["SyncFilesManifest", "SyncFilesCore", "CLinux", "CZlib"]),
    .target(name: "SyncFilesVerify", dependencies: ["SyncFilesCore", "CCrypto", "CLinux"]),
    .target(name: "SyncFilesInstall", dependencies: ["SyncFilesVerify", "SyncFilesCore", "CLinux"]),
    .target(
      name: "SyncFiles",
      dependencies: [
        "SyncFilesCore", "SyncFilesManifest", "SyncFilesJournal", "SyncFilesVerify", "SyncFilesInstall", "CCurl",
        "CYAML", "CCrypto", "CLinux", "CZlib",
      ]
    ),
    .executableTarget(
      name: "syncfiles",
      dependencies: [
        "SyncFiles", "SyncFilesCore", "SyncFilesManifest", "SyncFilesJournal", "SyncFilesInstall", "CStart",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    .testTarget(
      name: "SyncFilesTests",
      dependencies: [
        "SyncFiles", "SyncFilesCore", "SyncFilesManifest", "SyncFilesJournal", "SyncFilesVerify", "SyncFilesInstall",
        "syncfiles",
      ],
      exclude: [
        "Support/faultserver.py", "Support/lossylink.py", "Support/make-trust-keys.sh", "Support/promparse.py", "Support/moto_s3_server.py",
        "Support/s3fixture.py",
      ]
    ),
  ]
)
