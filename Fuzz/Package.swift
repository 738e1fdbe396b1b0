// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// ImprintFuzz: libFuzzer harnesses for every parser of untrusted input. A package of its own, so
// the main package's build, tests and CI never see it. Build and run with `scripts/fuzz`.
//
// SwiftPM cannot link a libFuzzer executable directly (it renames each executable's `main` to
// `<Target>_main`; swift-package-manager #8731): each target exports `<Target>_main`, which
// hands `LLVMFuzzerTestOneInput` to libFuzzer's `LLVMFuzzerRunDriver` (declared by the
// header-only `CFuzzerDriver`).

import Foundation
import PackageDescription

/// The fuzz targets: each one parser (or one family of parsers) of bytes from outside.
let fuzzTargets: [(name: String, products: [String])] = [
  ("ProfileJSON", ["ImprintCards"]),
  ("FollowCountJSON", ["ImprintCards"]),
  ("TemplateJSON", ["ImprintCards"]),
  ("ManifestJSONL", ["ImprintBatch"]),
  ("ManifestCSV", ["ImprintBatch"]),
  ("PriceList", ["ImprintPricing"]),
  ("Order", ["ImprintPricing"]),
  ("EthereumAddress", ["ImprintQR"]),
  ("BitcoinAddress", ["ImprintQR"]),
  ("DecimalAmount", ["ImprintQR"]),
  ("PaymentRequest", ["ImprintQR"]),
  ("QuickPageTree", ["ImprintPDF", "ImprintCore"]),
  ("PDFDuplicateKeys", ["ImprintPDF"]),
  ("ImageHeader", ["ImprintGraphics"]),
  ("StrictJSON", ["ImprintCore"]),
  ("IdempotencyKey", ["ImprintService", "ImprintHTTP", "ImprintCore"]),
  ("MultipartBody", ["ImprintHTTP", "ImprintCore"]),
  // ImprintDocuments reaches poppler and qpdf through ImprintDocumentEngines, linked here.
  ("OfficeType", ["ImprintDocuments", "ImprintDocumentEngines", "ImprintCore"]),
  ("ThumbnailJPEG", ["ImprintDocuments", "ImprintDocumentEngines", "ImprintGraphics", "ImprintCore"]),
  ("PNGRuns", ["ImprintGraphics", "ImprintCore"]),
]

// A path dependency's identity is its folder's name (`main`, `wt-fuzz`, a fresh clone's name),
// so products are looked up under whatever the parent folder is called.
let imprint = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
  .lastPathComponent.lowercased()

let package = Package(
  name: "ImprintFuzz",
  dependencies: [.package(path: "..")],
  targets: [
    .target(name: "CFuzzerDriver"),
    .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"]),
  ]
    + fuzzTargets.map { target in
      .executableTarget(
        name: target.name,
        dependencies: ["FuzzSupport"]
          + target.products.map { .product(name: $0, package: imprint) })
    },
  swiftLanguageModes: [.v6]
)
