// SPDX-License-Identifier: Apache-2.0
// ImprintCards: the errors of profiles, templates and card rendering.

import ImprintCore
import ImprintGraphics

/// A profile, template, photo or card that cannot be used (a photo that cannot be downloaded is
/// ImprintNetwork's `NetworkError`).
public enum CardError: ImprintError, Equatable {
  /// The profile file is not JSON (`cause`: the JSON reader's error, when there is one).
  case profileNotJSON(source: String, detail: String, cause: JSONError? = nil)
  /// The lookup answered "not found" (`status` 404).
  case accountNotFound(source: String, account: String?, text: String)
  /// The lookup answered "unavailable" (`status` 451).
  case accountUnavailable(source: String, account: String?, text: String)
  /// The JSON holds no account (an empty object or array).
  case noAccount(source: String, found: String)
  /// The account object has no usable `name`.
  case missingAccountName(source: String)
  /// The template name is neither shipped nor a file.
  case templateNotFound(name: String, available: [String])
  /// The template is not valid: `key` names where, `problem` says what (`cause`: the JSON
  /// reader's error, for a file that is not JSON).
  case invalidTemplate(template: String, key: String, problem: String, cause: JSONError? = nil)
  /// The template refers to a file that does not exist.
  case missingAsset(template: String, key: String, path: String)
  /// Text has characters no loaded font covers; `characters` names them (`U+0E01 (Thai)`)
  /// when the fonts could tell which.
  case missingGlyphs(field: String, text: String, count: Int, characters: [String] = [])
  /// The photo cannot be used (`cause`: the image's own error, when it could not be decoded).
  case photo(source: String, reason: String, cause: ImageError? = nil)
  /// A photo with no sandbox to decode it in (`CardInputLoader.decoder` is nil).
  case photoNotSandboxed(source: String)
  /// A template or photo-cache file that cannot be read or leads out of its folder (the file
  /// error's own code, message and hint).
  case file(FileError)
  /// A locale identifier no language data exists for (`xx`, `english`, `ko!`).
  case unknownLocale(identifier: String)
  /// A known locale the template has no strings for; `available` lists the ones it has.
  case untranslatedLocale(identifier: String, template: String, available: [String])

  public var code: String {
    switch self {
    case .profileNotJSON: "profile.notJSON"
    case .accountNotFound: "profile.accountNotFound"
    case .accountUnavailable: "profile.accountUnavailable"
    case .noAccount: "profile.noAccount"
    case .missingAccountName: "profile.missingName"
    case .templateNotFound: "template.notFound"
    case .invalidTemplate: "template.invalid"
    case .missingAsset: "template.missingAsset"
    case .missingGlyphs: "card.missingGlyphs"
    case .photo: "card.photo"
    case .photoNotSandboxed: "card.photoNotSandboxed"
    case .unknownLocale: "card.unknownLocale"
    case .untranslatedLocale: "card.untranslatedLocale"
    case .file(let error): error.code
    }
  }

  /// 400 for a profile that is not JSON, 404 for an unknown template, the file error's own for
  /// a file, 422 for the rest (input understood but refused).
  public var status: Int {
    switch self {
    case .profileNotJSON: 400
    case .templateNotFound: 404
    case .accountNotFound, .accountUnavailable, .noAccount, .missingAccountName, .invalidTemplate,
      .missingAsset, .missingGlyphs, .photo, .photoNotSandboxed, .unknownLocale,
      .untranslatedLocale:
      422
    case .file(let error): error.status
    }
  }

  public var message: String {
    switch self {
    case .profileNotJSON(let source, let detail, _):
      "profile '\(source)' is not valid JSON (\(detail))"
    case .accountNotFound(let source, let account, let text):
      "profile '\(source)': account \(account.map { "'@\($0)' " } ?? "")was not found "
        + "(status 404: \(text))"
    case .accountUnavailable(let source, let account, let text):
      "profile '\(source)': account \(account.map { "'@\($0)' " } ?? "")is unavailable "
        + "(status 451: \(text))"
    case .noAccount(let source, let found):
      "profile '\(source)' holds no account: expected an account object, an @user.json response "
        + "or a get_accounts result; found \(found)"
    case .missingAccountName(let source):
      "profile '\(source)': the account has no 'name' (a string of 3-16 characters)"
    case .templateNotFound(let name, let available):
      "template '\(name)' is neither a shipped design (\(available.joined(separator: ", "))) "
        + "nor a file"
    case .invalidTemplate(let template, let key, let problem, _):
      "template '\(template)': '\(key)' \(problem)"
    case .missingAsset(let template, let key, let path):
      "template '\(template)': '\(key)' refers to '\(path)', which does not exist"
    case .missingGlyphs(let field, let text, let count, let characters):
      "\(field) '\(text)' has \(count) character\(count == 1 ? "" : "s") that no bundled "
        + "font can draw"
        + (characters.isEmpty ? "" : ": " + characters.joined(separator: ", "))
    case .photo(let source, let reason, _): "photo '\(source)' cannot be used (\(reason))"
    case .photoNotSandboxed(let source):
      "photo '\(source)' is not decoded: no sandbox was given to decode photos in"
    case .file(let error): error.message
    case .unknownLocale(let identifier):
      "locale '\(identifier)' is not a language Imprint has data for: expected a BCP 47 "
        + "identifier such as ko, ja, zh-Hant or pt-BR"
    case .untranslatedLocale(let identifier, let template, let available):
      "template '\(template)' has no strings for locale '\(identifier)'; it has "
        + available.joined(separator: ", ")
    }
  }

  public var hint: String? {
    switch self {
    case .accountNotFound: "check the account name (lower case, 3-16 characters)"
    case .templateNotFound: "run 'imprint templates list', or give a path to a template file"
    case .missingAsset: "paths are relative to the template file's folder"
    case .missingGlyphs:
      // Reaching layout means every font file was loaded (a missing one fails earlier with
      // graphics.fontsUnavailable, whose hint is scripts/bootstrap): installing changes nothing.
      "Imprint draws only with its bundled fonts, and they do not cover these characters "
        + "(installing system fonts does not change that); "
        + ErrorSurface.hint("pass --allow-missing-glyphs", http: "send allowMissingGlyphs=true")
        + " to print them as boxes, or change the text"
    // The image's own hint when it has one (damaged: export it again; too large: scale it
    // down); the formats a photo may be in otherwise.
    case .photo(_, _, let cause): cause?.hint ?? "use a \(ImageType.accepted) file"
    case .photoNotSandboxed:
      "give CardInputLoader a DocumentSandbox (its workers decode photos from strangers), or "
        + "InProcessImageDecoder() for photos you trust"
    case .file(let error): error.hint
    case .unknownLocale: "give a language code (ISO 639), optionally with a script or region"
    case .untranslatedLocale(let identifier, _, _):
      "pick one of these, or add a '\(identifier)' table to the template's strings "
        + "(templates/README.md)"
    default: nil
    }
  }

  /// The JSON or image error behind a profile, template or photo that cannot be used; a file
  /// error's own cause.
  public var underlying: (any Error)? {
    switch self {
    case .profileNotJSON(_, _, let cause?), .invalidTemplate(_, _, _, let cause?): cause
    case .photo(_, _, let cause?): cause
    case .file(let error): error.underlying
    default: nil
    }
  }
}
