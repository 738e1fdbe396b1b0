// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: the prepare options as each surface gives them (`PrepareRequest`):
// the combinations refused, one rule for the command line, the service and manifests.

import ImprintDocuments
import ImprintPrinting
import Testing

@Suite("Prepare options: one rule for every surface")
struct PrepareRequestTests {
  @Test("an option without the one it needs is refused, the first in a fixed order")
  func conflicts() {
    var request = PrepareRequest()
    #expect(request.conflict() == nil)
    request.previewSize = 100
    #expect(request.conflict() == .previewSizeWithoutPreviews)
    request.previews = true
    request.monoPrinter = true
    #expect(request.conflict() == .monoPrinterWithoutPrinter)
    request.monoPrinter = false
    request.wait = true
    #expect(request.conflict() == .waitWithoutPrinter)
    request.printer = true
    #expect(request.conflict() == nil)
    request.wait = nil
    request.waitTimeout = 60
    #expect(request.conflict() == .waitTimeoutWithoutWait)
    request.wait = false
    #expect(request.conflict() == .waitTimeoutWithoutWait)
    request = PrepareRequest()
    request.passwordFile = true
    #expect(request.conflict() == .passwordFileWithoutPrinter)
    #expect(request.conflict()?.option == .passwordFile)
  }

  @Test("the defaults: previews at 400 px when asked for, a wait of 300 s when waiting")
  func defaults() {
    var request = PrepareRequest()
    #expect(request.options == PrepareOptions())
    #expect(request.waitSeconds == nil)
    request.previews = true
    request.splitColor = true
    #expect(request.options == PrepareOptions(splitColor: true, previewSize: 400))
    request.previewSize = 64
    #expect(request.options.previewSize == 64)
    request.wait = true
    #expect(request.waitSeconds == PrintTarget.defaultWaitSeconds)
    request.waitTimeout = 0
    #expect(request.waitSeconds == 0)
    #expect(PrintTarget.waitSecondsRange == 0...86_400)
  }
}
