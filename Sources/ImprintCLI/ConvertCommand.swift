// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint convert`, Office documents to the PDF Imprint counts, thumbnails, quotes
// and prints.

import Foundation
import ImprintCore
import ImprintDocuments

enum ConvertCommand {
  enum Key {
    static let output = OptionKey.directory(
      "output", short: "o", "<dir>", "Folder for the PDFs (FILE.pdf for each FILE).")
    static let maximumPages = OptionKey.integer(
      "max-pages", "<n>", in: 1...100_000,
      "Most pages a converted document may have (default \(OfficeLimits().maximumPages)).")
  }

  static let spec = CommandSpec(
    name: "convert",
    abstract: "Convert Word, Excel, PowerPoint, OpenDocument and RTF files to PDF.",
    discussion: """
      LibreOffice converts each file as its application would print it: comments, speaker \
      notes and hidden slides left out, a sheet's print ranges, macros never run, nothing \
      fetched from the network, links never updated. The PDF is the one inspect, thumb, quote \
      and prepare read for the same file (kept by the file's SHA-256 in \
      $XDG_CACHE_HOME/imprint/converted): what a customer is shown before paying is what \
      prints. The type comes from the content, never the name; HWP and HWPX are refused \
      (export a PDF from Hancom Office). With -o DIR, FILE.pdf is written in DIR for each \
      FILE; without -o, exactly INPUT OUTPUT.pdf. No output replaces an input; each is \
      written whole or not at all. The limits: --timeout (default 120 s), --cpu-limit \
      (default 120 s), --memory-limit (the office's resident memory and temporary files, \
      default 2048 MB) and --max-pages.
      """,
    arguments: [
      ArgumentSpec(
        "file", "Office files with -o; else INPUT OUTPUT.pdf.", variadic: true, kind: .file)
    ],
    options: [
      Key.output, DocumentCommands.Key.password, DocumentCommands.Key.cpuLimit,
      DocumentCommands.Key.memoryLimit, DocumentCommands.Key.timeout, Key.maximumPages,
      DocumentCommands.Key.json,
    ]
  ) { arguments, console in
    let inputs = arguments.positionals
    let outputs: [String]
    if let folder = arguments.value(Key.output) {
      guard !inputs.isEmpty else { throw UsageError(message: "give the files to convert") }
      outputs = inputs.map {
        folder + "/" + (($0 as NSString).lastPathComponent as NSString).deletingPathExtension
          + ".pdf"
      }
    } else {
      guard inputs.count == 2, (inputs[1] as NSString).pathExtension.lowercased() == "pdf" else {
        throw UsageError(
          message: "give -o <dir> and the files, or exactly INPUT OUTPUT.pdf (one file)")
      }
      outputs = [inputs[1]]
    }
    var limits = OfficeLimits()
    limits.cpuSeconds = try arguments.int(DocumentCommands.Key.cpuLimit) ?? limits.cpuSeconds
    limits.memoryMB = try arguments.int(DocumentCommands.Key.memoryLimit) ?? limits.memoryMB
    limits.seconds =
      try arguments.double(DocumentCommands.Key.timeout).map { Int($0.rounded(.up)) }
      ?? limits.seconds
    limits.maximumPages = try arguments.int(Key.maximumPages) ?? limits.maximumPages
    let reader = OfficeReader(limits: limits, cache: try? ConversionCache())
    defer { reader.stop() }
    let files = Array(inputs.prefix(outputs.count))
    struct Entry: Encodable, Sendable {
      var file: String
      var status: ItemStatus
      var output: String?
      var pages: Int?
      var pdfSHA256: String?
      var error: ErrorRecord?
    }
    var entries: [Entry] = []
    var errors: [ErrorRecord] = []
    for (index, (file, output)) in zip(files, outputs).enumerated() {
      do {
        // No output replaces an input, nor another file's output.
        if FileIdentities(files).contains(output) { throw FileError.outputIsInput(path: output) }
        if let first = outputs[..<index].firstIndex(of: output) {
          throw FileError.outputCollision(path: output, first: files[first], second: file)
        }
        let (type, conversion) = try await reader.write(
          path: file, file: file, password: arguments.value(DocumentCommands.Key.password),
          to: output)
        entries.append(
          Entry(
            file: file, status: .ok, output: output, pages: conversion.pages,
            pdfSHA256: conversion.pdfSHA256))
        if !arguments.flag(DocumentCommands.Key.json) {
          console.stdout.write(
            "\(SafeText.escaped(file)) -> \(SafeText.escaped(output)): "
              + "\(type.rawValue.uppercased()), \(conversion.pages) page"
              + (conversion.pages == 1 ? "" : "s") + "\n")
        }
      } catch {
        let record = ErrorRecord(error)
        errors.append(record)
        entries.append(Entry(file: file, status: .failed, error: record))
      }
    }
    if arguments.flag(DocumentCommands.Key.json) {
      console.stdout.write(JSONOutput.pretty(FilesReport(files: entries)))
    }
    DocumentCommands.reportFailures(errors, console)
    return errors.isEmpty ? ImprintCLI.success : ImprintCLI.failure
  }
}
