// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// Imprint: the rendering core of print-shop software (ID cards, QR codes, uploaded documents,
// quotes, batch jobs). No package dependencies: the C libraries come from Debian (scripts/bootstrap).

import PackageDescription

/// One system-library target per C library; `pkgConfig` supplies the include and link flags.
func system(_ name: String, _ pkgConfig: String, _ apt: [String]) -> Target {
  .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt(apt)])
}

let package = Package(
  name: "Imprint",
  products: [
    .library(name: "ImprintCore", targets: ["ImprintCore"]),
    .library(name: "ImprintPDF", targets: ["ImprintPDF"]),
    .library(name: "ImprintGraphics", targets: ["ImprintGraphics"]),
    .library(name: "ImprintQR", targets: ["ImprintQR"]),
    .library(name: "ImprintNetwork", targets: ["ImprintNetwork"]),
    .library(name: "ImprintCards", targets: ["ImprintCards"]),
    .library(name: "ImprintDocuments", targets: ["ImprintDocuments"]),
    .library(name: "ImprintPrinting", targets: ["ImprintPrinting"]),
    .library(name: "ImprintPricing", targets: ["ImprintPricing"]),
    .library(name: "ImprintBatch", targets: ["ImprintBatch"]),
    .library(name: "ImprintHTTP", targets: ["ImprintHTTP"]),
    .library(name: "ImprintJobsDB", targets: ["ImprintJobsDB"]),
    .library(name: "ImprintService", targets: ["ImprintService"]),
    .library(name: "ImprintCLI", targets: ["ImprintCLI"]),
    .executable(name: "imprint", targets: ["imprint"]),
    // poppler, poppler-glib and qpdf behind one table, loaded by `imprint` when it reads a
    // document (libImprintDocumentEngines.so, beside the executable or in ../lib/imprint); a
    // program that depends on this product links it instead.
    .library(name: "ImprintDocumentEngines", type: .dynamic, targets: ["CImprintDocumentEngines"]),
  ],
  targets: [
    system("CCairo", "cairo", ["libcairo2-dev"]),
    system("CPango", "pangocairo", ["libpango1.0-dev"]),
    system("CFontconfig", "fontconfig", ["libfontconfig-dev"]),
    system("CPoppler", "poppler-glib", ["libpoppler-glib-dev"]),
    // poppler's own C++ classes (its private headers), for CImprintSplash.
    system("CPopplerCore", "poppler", ["libpoppler-private-dev"]),
    system("CQRencode", "libqrencode", ["libqrencode-dev"]),
    system("CJPEG", "libjpeg", ["libjpeg62-turbo-dev"]),
    system("CQPDF", "libqpdf", ["libqpdf-dev"]),
    system("CWebP", "libwebpdemux", ["libwebp-dev"]),
    // Declarations only (no pkg-config, no link): libtiff is loaded with dlopen when a TIFF image
    // is read (ImprintGraphics/TIFFDecoder.swift says why).
    .systemLibrary(name: "CTIFF", providers: [.apt(["libtiff-dev"])]),
    system("CGIF", "libgif", ["libgif-dev"]),
    // PostgreSQL's client library, for the jobs database several replicas share (ImprintJobsDB).
    // Declarations only (no pkg-config, no link): loaded with dlopen at the first connection.
    .systemLibrary(name: "CLibpq", providers: [.apt(["libpq-dev"])]),
    // libcups: Debian 12's libcups2-dev has no cups.pc, so the module map links it.
    .systemLibrary(name: "CCups", providers: [.apt(["libcups2-dev"])]),
    // Declarations only (no pkg-config, no link): libheif is loaded with dlopen when a HEIF image
    // is decoded (ImprintGraphics/HEIFDecoder.swift says why).
    .systemLibrary(name: "CHeif", providers: [.apt(["libheif-dev"])]),
    // Our C, each target imported by the one Swift module that owns its library: libdeflate (the
    // Adler-32 and CRC-32 of PNG files) and libjpeg (ImprintGraphics), libcurl (ImprintNetwork), zlib (ImprintPDF), processes
    // (ImprintDocuments).
    .target(
      name: "CImprintShims", dependencies: ["CJPEG"],
      linkerSettings: [.linkedLibrary("deflate")]),
    .target(name: "CImprintFetch"),
    // zlib, and libdeflate's inflater for the streams it reads as zlib does (inflate.c says
    // why libdeflate is linked by two C targets).
    .target(
      name: "CImprintInflate", linkerSettings: [.linkedLibrary("z"), .linkedLibrary("deflate")]),
    .target(name: "CImprintProcess"),
    // llhttp (Debian's node-llhttp sources) and the socket calls of `imprint serve`'s HTTP server
    // (ImprintService).
    .target(name: "CImprintHTTP"),
    // What ImprintDocuments calls of poppler, poppler-glib and qpdf: a table of functions
    // (CImprintEngines, linked into `imprint`) that the library ImprintDocumentEngines fills
    // (CImprintDocumentEngines: those libraries' functions, and Imprint's C++ over them: the
    // Splash thumbnails, whose hairlines poppler's cairo backend widens, and the imposition,
    // pages as form XObjects on sheets). It is loaded when a run first reads a document, so
    // `imprint` does not load poppler and qpdf at every start (CImprintEngines.h says why).
    .target(name: "CImprintEngines", dependencies: ["CPango"]),
    .target(
      name: "CImprintDocumentEngines",
      dependencies: ["CImprintEngines", "CPoppler", "CPopplerCore", "CQPDF"],
      cxxSettings: [.define("POINTERHOLDER_TRANSITION", to: "4")],
      // The Swift driver links every product with its start-up object (swiftrt.o, which calls
      // the Swift runtime) and the runtime: -nostartfiles leaves the one out, -static-stdlib
      // takes the other as an archive, from which this C and C++ library takes nothing. An
      // installation without the toolchain has no Swift runtime to load.
      linkerSettings: [
        .linkedLibrary("qpdf"), .unsafeFlags(["-nostartfiles", "-static-stdlib"]),
      ]
    ),

    .target(name: "ImprintCore"),
    .target(name: "ImprintPDF", dependencies: ["ImprintCore", "CImprintInflate"]),
    .target(
      name: "ImprintGraphics",
      dependencies: [
        "ImprintCore", "ImprintPDF", "CCairo", "CPango", "CFontconfig", "CImprintShims",
        "CWebP", "CTIFF", "CGIF", "CHeif",
      ],
      // The fonts text is set with, found through Bundle.module (FontLibrary.bundled()).
      resources: [.copy("Resources/fonts")]
    ),
    .target(name: "ImprintQR", dependencies: ["ImprintCore", "ImprintGraphics", "CQRencode"]),
    // Fetches over the network: the address policy, photo downloads, webhook calls (the one
    // owner of CImprintFetch, libcurl).
    .target(name: "ImprintNetwork", dependencies: ["ImprintCore", "CImprintFetch"]),
    .target(
      name: "ImprintCards",
      dependencies: ["ImprintCore", "ImprintGraphics", "ImprintQR", "ImprintNetwork"],
      // The shipped designs and the placeholder photo, found through Bundle.module.
      resources: [.copy("Resources/templates"), .copy("Resources/placeholder-photo.png")]
    ),
    .target(
      name: "ImprintDocuments",
      dependencies: [
        "ImprintCore", "ImprintPDF", "ImprintGraphics", "ImprintPricing", "CPango",
        "CImprintEngines", "CImprintProcess",
      ],
      // The office worker (Office documents converted by LibreOffice), found through
      // ResourceBundle (OfficeConverter).
      resources: [.copy("Resources/office")]),
    // Orders prepared for print (tickets, the colour split) and sent to IPP printers and CUPS
    // queues, with the print journal and credentials: the one owner of libcups (CCups).
    .target(
      name: "ImprintPrinting",
      dependencies: [
        "ImprintCore", "ImprintGraphics", "ImprintPricing", "ImprintDocuments", "CCups",
      ]
    ),
    .target(
      name: "ImprintPricing", dependencies: ["ImprintCore"],
      // The receipt's words in other languages, found through Bundle.module
      // (ReceiptTranslations.shipped()).
      resources: [.copy("Resources/receipt-translations.json")]
    ),
    .target(
      name: "ImprintBatch",
      dependencies: [
        "ImprintCore", "ImprintGraphics", "ImprintQR", "ImprintCards", "ImprintDocuments",
        "ImprintPrinting", "ImprintPricing",
      ]
    ),
    // The HTTP/1.1 transport: connections, llhttp's parsing and the server's own rules,
    // bodies and multipart, answers, the bounded pool (the one owner of CImprintHTTP).
    .target(name: "ImprintHTTP", dependencies: ["ImprintCore", "CImprintHTTP"]),
    // The jobs database several replicas of `imprint serve` share (issue #29): connections to
    // PostgreSQL and the schema they migrate (the one owner of CLibpq, libpq).
    .target(name: "ImprintJobsDB", dependencies: ["ImprintCore", "CLibpq"]),
    // `imprint serve`: the capabilities over HTTP (ImprintHTTP), a front end beside the CLI.
    .target(
      name: "ImprintService",
      dependencies: [
        "ImprintCore", "ImprintGraphics", "ImprintQR", "ImprintNetwork", "ImprintCards",
        "ImprintDocuments", "ImprintPrinting", "ImprintPricing", "ImprintBatch", "ImprintHTTP",
        "ImprintJobsDB",
      ],
      // The OpenAPI document served at /openapi.json, found through Bundle.module
      // (ImprintService.openAPIDocument()).
      resources: [.copy("Resources/openapi.json")]
    ),
    .target(
      name: "ImprintCLI",
      dependencies: [
        "ImprintCore", "ImprintGraphics", "ImprintQR", "ImprintCards", "ImprintDocuments",
        "ImprintPrinting", "ImprintPricing", "ImprintBatch", "ImprintHTTP", "ImprintService",
      ]
    ),
    .executableTarget(name: "imprint", dependencies: ["ImprintCLI", "ImprintDocuments"]),

    .target(
      name: "ImprintTestSupport",
      dependencies: [
        "ImprintCore", "ImprintGraphics", "ImprintCards", "ImprintHTTP", "ImprintService",
      ],
      path: "Tests/ImprintTestSupport"
    ),
    .testTarget(name: "ImprintCoreTests", dependencies: ["ImprintCore", "ImprintTestSupport"]),
    .testTarget(
      name: "ImprintPDFTests",
      dependencies: ["ImprintPDF", "CImprintInflate", "ImprintTestSupport"]),
    .testTarget(
      name: "ImprintGraphicsTests",
      dependencies: ["ImprintGraphics", "ImprintPDF", "ImprintTestSupport"]
    ),
    .testTarget(name: "ImprintQRTests", dependencies: ["ImprintQR", "ImprintTestSupport"]),
    .testTarget(
      name: "ImprintNetworkTests", dependencies: ["ImprintNetwork", "ImprintTestSupport"]),
    .testTarget(
      name: "ImprintCardsTests",
      dependencies: ["ImprintCards", "ImprintNetwork", "ImprintDocuments", "ImprintTestSupport"],
      exclude: ["Goldens"]),
    .testTarget(
      name: "ImprintDocumentsTests",
      dependencies: [
        "ImprintDocuments", "ImprintPrinting", "ImprintPDF", "ImprintPricing", "ImprintTestSupport",
      ]),
    .testTarget(
      name: "ImprintPrintingTests",
      dependencies: ["ImprintPrinting", "ImprintDocuments", "ImprintPricing", "ImprintTestSupport"]),
    .testTarget(
      name: "ImprintPricingTests", dependencies: ["ImprintPricing", "ImprintTestSupport"],
      exclude: ["Receipts"]),
    .testTarget(
      name: "ImprintBatchTests",
      dependencies: [
        "ImprintBatch", "ImprintCards", "ImprintDocuments", "ImprintPrinting", "ImprintTestSupport",
      ]),
    .testTarget(
      name: "ImprintJobsDBTests", dependencies: ["ImprintJobsDB", "ImprintTestSupport"]),
    .testTarget(
      name: "ImprintServiceTests",
      dependencies: [
        "ImprintService", "ImprintHTTP", "ImprintNetwork", "ImprintPrinting", "ImprintTestSupport",
        "ImprintJobsDB",
      ]),
    .testTarget(
      name: "ImprintCLITests",
      dependencies: [
        "ImprintCLI", "ImprintQR", "ImprintBatch", "ImprintPrinting", "ImprintService",
        "ImprintTestSupport",
      ],
      exclude: ["Goldens"]
    ),
  ],
  swiftLanguageModes: [.v6],
  cxxLanguageStandard: .cxx17
)

// Release builds leave out Swift's run-time exclusivity checks (every access to a class's or a
// global's stored property registered and looked up: 2 % of a card batch's instructions, on top
// of the work they guard). Debug builds, which run the tests and the sanitizers, keep them: an
// overlapping access is a programming error those runs catch.
// They also reach generic types' metadata by their accessors, not by mangled names: a mangled
// name is demangled at its first use and each generic requirement looked up in the binary's
// conformance records, about 0.4 M instructions a type in this static binary (one card alone:
// 68.7 M -> 62.6 M instructions; 200 and 1000 fronts about 1 % fewer; 110 KB more code).
for target in package.targets
where (target.type == .regular || target.type == .executable) && !target.name.hasPrefix("C") {
  target.swiftSettings =
    (target.swiftSettings ?? [])
    + [
      .unsafeFlags(
        [
          "-enforce-exclusivity=unchecked", "-Xfrontend",
          "-disable-concrete-type-metadata-mangled-name-accessors",
        ], .when(configuration: .release))
    ]
}
