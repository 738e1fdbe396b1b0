// SPDX-License-Identifier: Apache-2.0
// ImprintService: `POST /v1/card`, through the library entry point `imprint card` calls
// (`CardRun.render`, in memory).

import Foundation
import ImprintCards
import ImprintCore
import ImprintGraphics
import ImprintHTTP

extension ImprintService {
  /// `POST /v1/card`: the card of a profile, as `imprint card` makes it: the profile JSON as
  /// the body, or a multipart body with the parts `profile` (the JSON) and `photo` (an image,
  /// decoded in a worker as `--photo` is; the placeholder without it).
  ///
  /// Query parameters: `template`, `side` (front/back/both), `format` (pdf/png/share),
  /// `locale`, `dpi`, `bleed`, `cropMarks`, `platform`, `allowMissingGlyphs`. A PNG is one
  /// side (front unless `side` says back).
  func card(_ request: HTTPRequest) async throws -> HTTPResponse {
    try Self.expect(request, ["application/json", "multipart/form-data"])
    var profile = request.body
    var photo: FormPart?
    // A profile part's decoding, held from the budget until the card is made.
    var held = 0
    defer { server.release(held) }
    if request.parts != nil {
      let parts = try Self.parts(of: request, known: ["profile", "photo"])
      guard let given = parts["profile"] else {
        throw ServiceError.missingPart(path: request.path, name: "profile")
      }
      held = try takeJSON(given, route: request.path)
      profile = given.bytes
      photo = parts["photo"]
    }
    var options = try RequestOptions(query: request)
    let templateName = try options.string("template") ?? "classic"
    guard let template = templates[templateName] else {
      throw CardError.templateNotFound(name: templateName, available: templates.keys.sorted())
    }
    let format =
      CardRun.Format(
        rawValue: try options.choice("format", CardRun.Format.allCases.map(\.rawValue)) ?? "pdf")
      ?? .pdf
    // The library reads the options by their names (`CardOption`), as `imprint card` does; a
    // PNG is one side, the front unless `side` says back.
    let read = try CardOptions.read(
      from: &options, defaultFaces: format == .png ? [.front] : [.front, .back])
    guard format != .png || read.options.faces.count == 1 else {
      throw ServiceError.invalidParameter(
        name: CardOption.side.names.key,
        problem: "must be front or back with format png: a response is one image")
    }
    var cardOptions = read.options
    cardOptions.fonts = configuration.fonts
    let platform = read.platform
    try options.finish()
    // Options the format does not use are refused, as `imprint card` refuses them.
    if let unused = format.unusedOption(cardOptions, dpiGiven: read.dpiGiven) {
      throw ServiceError.invalidParameter(name: unused.key, problem: unused.appliesTo)
    }
    // Drawn in memory (`CardRun.render`): the bytes `imprint card` writes, without a temporary
    // folder, a file written, read back and removed for every request.
    let card = try await CardRun.render(
      CardRequest(
        profile: "profile.json", inlineProfile: profile,
        photo: photo.map { $0.filename ?? "photo" }, inlinePhoto: photo?.bytes,
        platform: platform),
      format: format, options: cardOptions, template: template, loader: loader)
    return HTTPResponse(
      status: 200, contentType: format == .pdf ? "application/pdf" : "image/png", body: card.bytes)
  }
}
