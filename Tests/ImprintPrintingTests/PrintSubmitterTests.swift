// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: prepared files sent to a real IPP printer (CUPS's ippeveprinter on a
// free port), checked by what it received: the bytes, the pages, and each job's attributes.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPricing
import ImprintPrinting
import ImprintTestSupport
import Testing

/// USD rates on A4, A3 and Letter, and stapling.
let printerPrices = priceListFixture("usd-a4-a3-letter.json")

/// An order of `files` (each of the 5-page `a.pdf`, written first) priced by `printerPrices`,
/// prepared into `folder/out`.
func preparedForPrinter(in folder: TemporaryFolder, files: [String]) async throws
  -> PreparedOrder
{
  try HostileDocuments.write(
    try NumberedPages.drawn(Array(repeating: .a4, count: 5)), to: folder.file("a.pdf"))
  return try await prepareOrder(in: folder, prices: printerPrices, files: files)
}

@Suite(
  "PrintSubmitter: prepared files to an IPP printer", .liveHandlesChecked, .tags(.slow),
  .skippedWhenQuick)
struct PrintSubmitterTests {
  @Test("each file arrives whole, with its pages, copies, sides, media, colour and finishings")
  func received() async throws {
    let folder = TemporaryFolder()
    let order = try await preparedForPrinter(
      in: folder,
      files: [
        #"{"path":"a.pdf","nUp":2,"duplex":"long-edge","copies":2,"color":"color","extras":["staple"]}"#,
        #"{"path":"a.pdf","pages":"1-3","duplex":"short-edge","paper":"Letter"}"#,
        #"{"path":"a.pdf","nUp":4}"#,
      ])
    let printer = try TestPrinter(folder: folder)
    let jobs = try PrintSubmitter.submit(order.files, printer: printer.uri)
    #expect(jobs.map(\.document) == order.files.map(\.document))
    #expect(Set(jobs.map(\.jobID)).count == 3 && jobs.allSatisfy { $0.printer == printer.uri })
    let received = printer.jobs(count: 3)
    #expect(received.count == 3)
    for (job, file) in zip(jobs, order.files) {
      let got = try #require(received[job.jobID], "job \(job.jobID)")
      // The bytes prepared, and so the pages the quote counted (blank back included).
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: got.file))
          == Data(contentsOf: URL(fileURLWithPath: file.document)))
      #expect(try pdfInfo(got.file)["Pages"] == "\(file.ticket.sheetSides)")
      #expect(got.attributes["job-name"] == (file.document as NSString).lastPathComponent)
      #expect(got.attributes["document-format-supplied"] == "application/pdf")
      #expect(got.attributes["copies"] == "\(file.ticket.ipp.copies)")
      #expect(got.attributes["sides"] == file.ticket.ipp.sides)
      #expect(got.attributes["media"] == file.ticket.ipp.media)
      #expect(got.attributes["print-color-mode"] == file.ticket.ipp.printColorMode)
      #expect(
        got.attributes["multiple-document-handling"] == "separate-documents-collated-copies")
    }
    // By hand: 5 pages 2-up duplex is 3 impressions and a blank back; 3 pages duplex likewise.
    let first = try #require(received[jobs[0].jobID])
    // 2-up sheets are landscape: the pages' long edge is the paper's short edge.
    #expect(
      first.attributes["copies"] == "2" && first.attributes["sides"] == "two-sided-short-edge")
    #expect(first.attributes["finishings"] == "staple")
    #expect(first.attributes["print-color-mode"] == "color")
    #expect(try pdfInfo(first.file)["Pages"] == "4")
    let second = try #require(received[jobs[1].jobID])
    #expect(second.attributes["media"] == "na_letter_8.5x11in")
    #expect(second.attributes["sides"] == "two-sided-short-edge")
    #expect(second.attributes["finishings"] == nil)
    #expect(try pdfInfo(second.file)["Pages"] == "4")
    #expect(try pdfInfo(try #require(received[jobs[2].jobID]).file)["Pages"] == "2")
  }

  @Test("a paper the printer does not offer is print.refused, naming the file")
  func refused() async throws {
    let folder = TemporaryFolder()
    let order = try await preparedForPrinter(in: folder, files: [#"{"path":"a.pdf","paper":"A3"}"#])
    let printer = try TestPrinter(folder: folder)
    let error = #expect(throws: PrintError.self) {
      try PrintSubmitter.submit(order.files, printer: printer.uri)
    }
    #expect(error?.code == "print.refused")
    #expect(error?.message.contains("refused 'a.pdf'") == true, "\(error?.message ?? "")")
    #expect(error?.hint != nil)
  }

  @Test("with a monochrome printer: a split's colour part to the colour one, its mono part there")
  func monoPrinter() async throws {
    let folder = TemporaryFolder()
    try HostileDocuments.write(
      NumberedPages.written(Array(repeating: .a4, count: 4), colorPages: [3]),
      to: folder.file("a.pdf"))
    let prices = priceListFixture("usd-a4.json")
    let order = try await prepareOrder(
      in: folder, prices: prices, files: [#"{"path":"a.pdf","color":"auto"}"#],
      options: PrepareOptions(splitColor: true))
    #expect(order.files.map(\.ticket.ipp.printColorMode) == ["color", "monochrome"])
    let colorFolder = TemporaryFolder()
    let monoFolder = TemporaryFolder()
    let colorPrinter = try TestPrinter(folder: colorFolder)
    let monoPrinter = try TestPrinter(folder: monoFolder)
    let jobs = try PrintSubmitter.submit(
      order.files, printer: colorPrinter.uri, monoPrinter: monoPrinter.uri)
    #expect(jobs.map(\.printer) == [colorPrinter.uri, monoPrinter.uri])
    #expect(jobs.map(\.document) == order.files.map(\.document))
    for (printer, job, file) in [
      (colorPrinter, jobs[0], order.files[0]), (monoPrinter, jobs[1], order.files[1]),
    ] {
      let received = printer.jobs(count: 1)
      #expect(received.count == 1)
      let got = try #require(received[job.jobID], "job \(job.jobID)")
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: got.file))
          == Data(contentsOf: URL(fileURLWithPath: file.document)))
      #expect(got.attributes["print-color-mode"] == file.ticket.ipp.printColorMode)
    }
    // Pages 3 and 1, 2, 4, as the quote charged them (one colour, three monochrome).
    #expect(try pdfInfo(order.files[0].document)["Pages"] == "1")
    #expect(try pdfInfo(order.files[1].document)["Pages"] == "3")
  }

  @Test("a printer that asks for credentials: none or wrong ones are print.unauthorized")
  func credentials() async throws {
    let folder = TemporaryFolder()
    let order = try await preparedForPrinter(in: folder, files: [#"{"path":"a.pdf"}"#])
    let printer = try TestPrinter(folder: folder, users: ["clerk": "s3cret"])
    let none = #expect(throws: PrintError.self) {
      try PrintSubmitter.submit(order.files, printer: printer.uri)
    }
    #expect(
      none
        == .unauthorized(printer: printer.uri, user: nil, detail: "Create-Job: Unauthorized"))
    let wrong = #expect(throws: PrintError.self) {
      try PrintSubmitter.submit(
        order.files, printer: printer.uri,
        access: PrintAccess(credentials: PrintCredentials(user: "clerk", password: "s3cre")))
    }
    #expect(wrong?.code == "print.unauthorized")
    #expect(wrong?.message.contains("refused the credentials of 'clerk'") == true)
    let access = PrintAccess(credentials: PrintCredentials(user: "clerk", password: "s3cret"))
    let jobs = try PrintSubmitter.submit(order.files, printer: printer.uri, access: access)
    let received = printer.jobs(count: 1)
    #expect(received.count == 1)
    let got = try #require(received[jobs[0].jobID])
    #expect(got.attributes["job-originating-user-name"] == "clerk")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: got.file))
        == Data(contentsOf: URL(fileURLWithPath: order.files[0].document)))
    // Asking after the job needs the credentials too.
    let waited = try PrintSubmitter.wait(for: jobs, seconds: 30, access: access)
    #expect(waited.map(\.state) == ["completed"])
  }

  @Test("the password goes only to this machine or over TLS; never in a URI, dump or log")
  func credentialsStayPrivate() async throws {
    let folder = TemporaryFolder()
    let order = try await preparedForPrinter(in: folder, files: [#"{"path":"a.pdf"}"#])
    let printer = try TestPrinter(folder: folder, users: ["clerk": "s3cret"])
    let access = PrintAccess(credentials: PrintCredentials(user: "clerk", password: "s3cret"))
    // A printer reached through this machine's own network address, asking for a password:
    // plain IPP to an address that is not loopback, as a printer on the shop's network would.
    let address = try #require(Self.networkAddress(), "no IPv4 address but loopback")
    let elsewhere = try AskingPrinter(folder: folder)
    let remote = "ipp://\(address):\(elsewhere.port)/ipp/print"
    let refused = #expect(throws: PrintError.self) {
      try PrintSubmitter.submit(order.files, printer: remote, access: access)
    }
    #expect(refused == .insecureCredentials(printer: remote))
    // It was asked, and never got the password.
    #expect(!elsewhere.requests.isEmpty)
    #expect(!elsewhere.requests.contains(true))
    // Through loopback the same credentials print.
    let jobs = try PrintSubmitter.submit(order.files, printer: printer.uri, access: access)
    #expect(
      printer.jobs(count: 1)[jobs[0].jobID]?.attributes["job-originating-user-name"] == "clerk")
    // A password in a URI is refused, and the message names the URI without it.
    let withPassword = printer.uri.replacingOccurrences(of: "//", with: "//clerk:s3cret@")
    let inURI = #expect(throws: PrintError.self) {
      try PrintSubmitter.submit(order.files, printer: withPassword)
    }
    #expect(inURI?.code == "print.unreachable")
    #expect(inURI?.message.contains("s3cret") == false)
    #expect(inURI?.message.contains("clerk") == false)
    // Never shown by description, debugging or reflection.
    var dumped = ""
    dump(access, to: &dumped)
    let credentials = try #require(access.credentials)
    for shown in [
      dumped, "\(credentials)", String(reflecting: credentials), String(describing: access),
    ] {
      #expect(!shown.contains("s3cret"), "\(shown)")
    }
  }

  /// An IPv4 address of this machine that is not loopback, if it has one.
  static func networkAddress() -> String? {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return nil }
    defer { freeifaddrs(list) }
    var entry = list
    while let current = entry {
      defer { entry = current.pointee.ifa_next }
      guard let address = current.pointee.ifa_addr,
        address.pointee.sa_family == sa_family_t(AF_INET)
      else { continue }
      var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
      guard
        getnameinfo(
          address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil,
          0, NI_NUMERICHOST) == 0
      else { continue }
      let text = String(cString: host)
      if !text.hasPrefix("127.") { return text }
    }
    return nil
  }

  @Test(
    "no printer there, or not an IPP URI: print.unreachable",
    arguments: ["free port", "http://localhost/printer"])
  func unreachable(kind: String) async throws {
    let folder = TemporaryFolder()
    let order = try await preparedForPrinter(in: folder, files: [#"{"path":"a.pdf"}"#])
    let uri =
      kind == "free port" ? "ipp://localhost:\(TestPrinter.freePort())/ipp/print" : kind
    let error = #expect(throws: PrintError.self) {
      try PrintSubmitter.submit(order.files, printer: uri)
    }
    #expect(error?.code == "print.unreachable")
    #expect(error?.message.contains(uri) == true, "\(error?.message ?? "")")
  }
}
