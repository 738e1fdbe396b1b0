// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// A backend that uses Imprint as a SwiftPM dependency: cards, QR codes, a quote and uploads
// (inspected and thumbnailed by document workers it hosts itself) from 64 concurrent tasks, every
// result checked, with the resources Imprint finds by itself (no IMPRINT_* variable, any working
// directory). CI builds and runs it (.ci/run).

import Foundation
import PackageDescription

// A path dependency's identity is its folder's name (`main`, a fresh clone's name), so products
// are looked up under whatever the repository's folder is called (as Fuzz/Package.swift does).
let imprint = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
  .deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
  name: "ImprintBackend",
  dependencies: [.package(path: "../..")],
  targets: [
    .executableTarget(
      name: "ImprintBackend",
      dependencies: [
        "ImprintCards", "ImprintQR", "ImprintPricing", "ImprintDocuments",
        // poppler and qpdf behind ImprintDocuments, linked (a dynamic library beside the
        // executable): `imprint` loads it only when it reads a document.
        "ImprintDocumentEngines",
      ].map {
        .product(name: $0, package: imprint)
      }
    )
  ],
  swiftLanguageModes: [.v6]
)
