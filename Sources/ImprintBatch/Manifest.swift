// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: manifests (JSON Lines or CSV with a header), read one line at a time.

import Foundation
import ImprintCore

/// What a job makes.
public enum JobKind: String, Sendable, Codable, CaseIterable {
  /// An ID card (front and back PDF) from a profile.
  case card
  /// A QR code.
  case qr
  /// A thumbnail of an upload.
  case thumb
  /// A quote for an order.
  case quote
}

/// Where a card goes.
public struct ShipTo: Sendable, Codable, Equatable {
  /// The recipient.
  public var name: String
  /// Their e-mail.
  public var email: String?
  /// The postal address (lines separated by newlines or commas).
  public var address: String
  /// The postal code.
  public var zip: String?
}

/// One job of a manifest.
///
/// Paths are resolved against the manifest's folder.
public struct ManifestJob: Sendable, Equatable {
  /// The 1-based line of the manifest (the header of a CSV is line 1).
  public var line: Int
  /// The job's id, unique in the manifest.
  public var id: String
  /// What it makes.
  public var kind: JobKind
  /// Copies (cards on sheets, card-printer pages).
  public var copies: Int
  /// card: the profile file, or the inline profile object as JSON bytes.
  public var profile: String?
  /// card: the inline profile, serialised.
  public var inlineProfile: [UInt8]?
  /// card: the template name or file.
  public var template: String?
  /// card: the photo file.
  public var photo: String?
  /// card: a get_follow_count result file.
  public var followCounts: String?
  /// qr: the payload; `payloadType` says text, eth or btc.
  public var payload: String?
  /// qr: text, eth or btc.
  public var payloadType: String?
  /// thumb and quote: the input file (an upload, or an order).
  public var file: String?
  /// quote: the price list.
  public var prices: String?
  /// Output format (qr: png, svg, pdf; thumb: png, jpeg).
  public var format: String?
  /// card orders: the shipping address.
  public var shipTo: ShipTo?
  /// The line's text, for the resume fingerprint.
  public var source: String
}

/// A line that is not a job.
public struct ManifestLineError: Error, Sendable, Equatable {
  /// The 1-based line.
  public var line: Int
  /// The id, when one could be read.
  public var id: String?
  /// What is wrong.
  public var message: String
}

/// Reads a manifest line by line (flat memory, whatever its length).
public struct ManifestReader: ~Copyable {
  private var reader: LineReader
  private let folder: String
  private let csv: Bool
  private var header: [String]?
  /// The manifest's name, for messages.
  public let name: String

  /// Opens `path` (`.csv` files are CSV with a header; anything else is JSON Lines).
  ///
  /// - Throws: `FileError`.
  public init(path: String) throws(FileError) {
    reader = try LineReader(path: path)
    name = path
    let directory = (path as NSString).deletingLastPathComponent
    folder = directory.isEmpty ? "." : directory
    csv = path.lowercased().hasSuffix(".csv")
  }

  /// The next job, or the error of a bad line; nil at the end.
  ///
  /// Blank lines and `#` comments
  /// (JSON Lines) are skipped.
  public mutating func next() -> Result<ManifestJob, ManifestLineError>? {
    while true {
      let bytes: [UInt8]
      do {
        guard let next = try reader.next() else { return nil }
        bytes = next
      } catch {
        return .failure(
          ManifestLineError(line: reader.lineNumber, id: nil, message: error.message))
      }
      let number = reader.lineNumber
      guard let text = String(validating: bytes, as: UTF8.self) else {
        return .failure(
          ManifestLineError(line: number, id: nil, message: "line \(number) is not valid UTF-8"))
      }
      if text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
      if csv {
        let fields = parseCSV(text)
        guard let header else {
          self.header = fields.map { $0.trimmingCharacters(in: .whitespaces) }
          continue
        }
        var object: [String: Any] = [:]
        var ship: [String: Any] = [:]
        for (index, key) in header.enumerated() where index < fields.count && !fields[index].isEmpty
        {
          switch key {
          case "name", "email", "address", "zip": ship[key] = fields[index]
          case "copies": object[key] = Int(fields[index]) ?? fields[index]
          default: object[key] = fields[index]
          }
        }
        if !ship.isEmpty { object["shipTo"] = ship }
        return job(object, line: number, source: text)
      }
      if text.hasPrefix("#") { continue }
      guard let data = text.data(using: .utf8),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
      else {
        return .failure(
          ManifestLineError(line: number, id: nil, message: "line \(number) is not a JSON object"))
      }
      return job(object, line: number, source: text)
    }
    return nil
  }

  private func resolve(_ path: String?) -> String? {
    guard let path, !path.isEmpty else { return nil }
    return path.hasPrefix("/") ? path : folder + "/" + path
  }

  static let knownKeys: Set<String> = [
    "id", "kind", "copies", "profile", "template", "photo", "followCounts", "payload",
    "payloadType", "file", "prices", "format", "shipTo",
  ]

  private func job(_ object: [String: Any], line: Int, source: String)
    -> Result<ManifestJob, ManifestLineError>
  {
    let id = (object["id"] as? String) ?? (object["id"] as? NSNumber)?.stringValue
    func fail(_ message: String) -> Result<ManifestJob, ManifestLineError> {
      .failure(ManifestLineError(line: line, id: id, message: message))
    }
    guard let id, !id.isEmpty else { return fail("line \(line) has no 'id'") }
    guard id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }),
      !id.hasPrefix(".")
    else {
      return fail(
        "job '\(id)' (line \(line)): 'id' may hold only letters, digits, '-', '_' and '.'")
    }
    if let unknown = object.keys.sorted().first(where: { !Self.knownKeys.contains($0) }) {
      return fail("job '\(id)' (line \(line)): '\(unknown)' is not a known key")
    }
    guard let kindText = object["kind"] as? String, let kind = JobKind(rawValue: kindText) else {
      return fail(
        "job '\(id)' (line \(line)): 'kind' is \(object["kind"].map { "'\($0)'" } ?? "missing"); "
          + "expected card, qr, thumb or quote")
    }
    var copies = 1
    if let value = object["copies"] {
      guard let number = value as? Int, (1...10_000).contains(number) else {
        return fail("job '\(id)' (line \(line)): 'copies' is '\(value)'; expected 1 to 10000")
      }
      copies = number
    }
    var job = ManifestJob(
      line: line, id: id, kind: kind, copies: copies, profile: nil, inlineProfile: nil,
      template: object["template"] as? String, photo: resolve(object["photo"] as? String),
      followCounts: resolve(object["followCounts"] as? String),
      payload: object["payload"] as? String, payloadType: object["payloadType"] as? String,
      file: resolve(object["file"] as? String), prices: resolve(object["prices"] as? String),
      format: object["format"] as? String, shipTo: nil, source: source)
    if let template = job.template, template.contains("/") || template.hasSuffix(".json") {
      job.template = resolve(template)
    }
    switch object["profile"] {
    case let path as String: job.profile = resolve(path)
    case let inline as [String: Any]:
      job.inlineProfile = (try? JSONSerialization.data(withJSONObject: inline)).map { [UInt8]($0) }
    case nil: break
    default: return fail("job '\(id)' (line \(line)): 'profile' must be a path or an object")
    }
    if let ship = object["shipTo"] as? [String: Any] {
      guard let name = ship["name"] as? String, let address = ship["address"] as? String else {
        return fail("job '\(id)' (line \(line)): 'shipTo' needs 'name' and 'address'")
      }
      job.shipTo = ShipTo(
        name: name, email: ship["email"] as? String, address: address, zip: ship["zip"] as? String)
    }
    switch kind {
    case .card where job.profile == nil && job.inlineProfile == nil:
      return fail("job '\(id)' (line \(line)): a card needs 'profile'")
    case .qr where (job.payload ?? "").isEmpty:
      return fail("job '\(id)' (line \(line)): a qr job needs 'payload'")
    case .thumb where job.file == nil:
      return fail("job '\(id)' (line \(line)): a thumb job needs 'file'")
    case .quote where job.file == nil || job.prices == nil:
      return fail("job '\(id)' (line \(line)): a quote job needs 'file' (the order) and 'prices'")
    default: return .success(job)
    }
  }
}

/// Splits one CSV line (RFC 4180 quoting, no embedded newlines).
func parseCSV(_ line: String) -> [String] {
  var fields: [String] = []
  var current = ""
  var quoted = false
  var characters = Array(line)
  if characters.last == "\r" { characters.removeLast() }
  var index = 0
  while index < characters.count {
    let character = characters[index]
    if quoted {
      if character == "\"" {
        if index + 1 < characters.count && characters[index + 1] == "\"" {
          current.append("\"")
          index += 1
        } else {
          quoted = false
        }
      } else {
        current.append(character)
      }
    } else if character == "\"" {
      quoted = true
    } else if character == "," {
      fields.append(current)
      current = ""
    } else {
      current.append(character)
    }
    index += 1
  }
  fields.append(current)
  return fields
}
