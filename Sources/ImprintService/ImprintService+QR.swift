// SPDX-License-Identifier: Apache-2.0
// ImprintService: `POST /v1/qr`, through the library entry point `imprint qr` calls
// (`QRSettings.make`).

import ImprintCore
import ImprintHTTP
import ImprintQR

extension ImprintService {
  /// `POST /v1/qr`: a code from the options of a JSON body, or of the query when the body is
  /// empty (`payload`, `payloadType` text/eth/btc, `format` png/svg/pdf/eps, `level`, `module`,
  /// `size`, `dpi`, `quietZone`, `foreground`, `background`, `allowLowContrast`, `caption`,
  /// `captionAddress`, and the payment options `request`, `amount`, `token`, `decimals`,
  /// `chainId`, `gasLimit`, `gasPrice`, `label`, `message`).
  func qr(_ request: HTTPRequest) throws -> HTTPResponse {
    var options: RequestOptions
    if request.body.isEmpty {
      options = try RequestOptions(query: request)
    } else {
      try Self.expect(request, ["application/json"])
      // The options come from one place: a query beside a body would be ignored.
      if let name = request.query.keys.sorted().first {
        throw ServiceError.invalidParameter(
          name: name,
          problem: "is given in the query, but the request has a JSON body; expected the "
            + "options in the body alone, or in the query with an empty body")
      }
      options = try RequestOptions(jsonBody: request)
    }
    guard let text = try options.string("payload") else {
      throw ServiceError.missingParameter(name: "payload", route: request.path)
    }
    let kindName = try options.choice("payloadType", QRPayloadKind.allCases.map(\.shortName))
    let kind = kindName.flatMap(QRPayloadKind.init(shortName:)) ?? .text
    let formats = ["png", "svg", "pdf", "eps"]
    let format = QRFormat(rawValue: try options.choice("format", formats) ?? "png") ?? .png
    // The library reads the options by their names (`QROption`), as `imprint qr` does.
    let read = try QRSettings.read(kind: kind, from: &options)
    try options.finish()
    var settings = read.settings
    settings.style.fonts = configuration.fonts
    // The library's own checks, as `imprint qr` runs them: options that do not apply to the
    // payload or exclude each other (worded as the request's keys), payment options against
    // the kind, ranges and contrast.
    try settings.validate(moduleGiven: read.moduleGiven, refusing: Self.parameterError)
    let (_, rendering) = try settings.make(text, format: format, source: "the payload")
    return HTTPResponse(
      status: 200, contentType: Self.mediaTypes[format.rawValue] ?? "application/octet-stream",
      body: rendering.bytes)
  }

  static func parameterError(_ conflict: QRConflict) -> ServiceError {
    switch conflict {
    case .ethereumOnly(let option):
      .invalidParameter(
        name: option.key, problem: "applies to Ethereum requests (payloadType eth)")
    case .bitcoinOnly(let option):
      .invalidParameter(
        name: option.key, problem: "applies to Bitcoin requests (payloadType btc)")
    case .needsPayment(let option):
      .invalidParameter(name: option.key, problem: "needs payloadType eth or btc")
    case .decimalsWithoutToken:
      .invalidParameter(name: "decimals", problem: "applies to token requests; give token")
    case .captionAndCaptionAddress:
      .invalidParameter(name: "captionAddress", problem: "cannot be combined with caption")
    case .moduleAndSize:
      .invalidParameter(
        name: "module", problem: "cannot be combined with size, which sets the module's size")
    }
  }
}
