// SPDX-License-Identifier: Apache-2.0
// ImprintCards: card templates (JSON, schemaVersion 1): card geometry, front and back elements.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintQR

/// A box on the card in millimetres, from the trim box's top-left corner.
public struct Box: Sendable, Hashable, Codable {
  /// Left edge in millimetres.
  public var x: Double
  /// Top edge in millimetres.
  public var y: Double
  /// Width in millimetres.
  public var width: Double
  /// Height in millimetres.
  public var height: Double
}

/// Vertical alignment of text in its box.
public enum VerticalAlignment: String, Sendable, Codable {
  /// At the top.
  case top
  /// Centred.
  case middle
  /// At the bottom.
  case bottom
}

/// A photo's mask.
public enum PhotoMask: String, Sendable, Codable {
  /// Square corners.
  case none
  /// A circle (an ellipse in a non-square box).
  case circle
  /// Rounded corners (`cornerRadius`).
  case rounded
}

/// Text bound to profile fields; `{field}` placeholders are replaced, and the element is left
/// out when a field it names is unknown for the account.
public struct TextElement: Sendable, Hashable {
  /// The box the text must stay inside.
  public var box: Box
  /// The text with `{field}` placeholders.
  public var text: String
  /// Font family (bundled).
  public var font: String
  /// Weight, 100-900.
  public var weight: Int
  /// Preferred size in points.
  public var size: Double
  /// The smallest size shrinking may reach, in points.
  public var minSize: Double
  /// The most lines wrapping may use.
  public var maxLines: Int
  /// Text colour.
  public var color: Color
  /// Horizontal alignment (`natural` puts right-to-left names on the right).
  public var align: TextAlignment
  /// Vertical alignment.
  public var valign: VerticalAlignment
  /// Where text that still does not fit is cut.
  public var ellipsis: TextEllipsis
  /// A field that must be known for the element to be drawn (for labels such as "FOLLOWERS").
  public var when: String?
}

/// The account's photo.
public struct PhotoElement: Sendable, Hashable {
  /// The photo's box.
  public var box: Box
  /// Cover (crop) or contain.
  public var fit: ImageFit
  /// The mask.
  public var mask: PhotoMask
  /// Corner radius in millimetres for `rounded`.
  public var cornerRadius: Double
  /// An outline, when set.
  public var borderColor: Color?
  /// Outline width in millimetres.
  public var borderWidth: Double
}

/// A QR code: pure black modules on white, the quiet zone inside `size`.
public struct QRElement: Sendable, Hashable {
  /// Left edge in millimetres.
  public var x: Double
  /// Top edge in millimetres.
  public var y: Double
  /// Side in millimetres, quiet zone included.
  public var size: Double
  /// The payload with `{field}` placeholders (default `{profileUrl}`).
  public var data: String
  /// Error-correction level (default Q).
  public var level: QRErrorCorrection
  /// Light modules around the symbol (default 2: the white box is itself on a light card).
  public var quietZone: Int
}

/// A filled and/or stroked rectangle.
public struct RectElement: Sendable, Hashable {
  /// The box.
  public var box: Box
  /// Fill colour.
  public var fill: Color?
  /// Outline colour.
  public var stroke: Color?
  /// Outline width in millimetres.
  public var strokeWidth: Double
  /// Corner radius in millimetres.
  public var cornerRadius: Double
  /// Edges lying on the trim line extend to the bleed edge (for bands printed to the edge).
  public var bleed: Bool
}

/// A straight line.
public struct LineElement: Sendable, Hashable {
  /// Start, in millimetres.
  public var x1: Double
  /// Start, in millimetres.
  public var y1: Double
  /// End, in millimetres.
  public var x2: Double
  /// End, in millimetres.
  public var y2: Double
  /// Colour.
  public var color: Color
  /// Width in millimetres.
  public var width: Double
}

/// A picture file from the template's folder (a logo, a pattern).
public struct ImageElement: Sendable, Hashable {
  /// The box.
  public var box: Box
  /// The file's absolute path.
  public var path: String
  /// Cover or contain.
  public var fit: ImageFit
}

/// One element of a card side, drawn in order.
public enum Element: Sendable, Hashable {
  /// Text.
  case text(TextElement)
  /// The photo.
  case photo(PhotoElement)
  /// A QR code.
  case qr(QRElement)
  /// A rectangle.
  case rect(RectElement)
  /// A line.
  case line(LineElement)
  /// An image file.
  case image(ImageElement)
}

/// One side of the card.
public struct CardSide: Sendable, Hashable {
  /// The colour behind everything, printed to the bleed edge.
  public var background: Color
  /// An image behind everything (cover, to the bleed edge), when set.
  public var backgroundImage: String?
  /// The elements, bottom first.
  public var elements: [Element]
}

/// A card design.
public struct CardTemplate: Sendable, Hashable {
  /// The design's name (file name without `.json` for shipped ones).
  public var name: String
  /// One line for `imprint templates list`.
  public var description: String
  /// Trim width in millimetres (CR80: 85.60).
  public var width: Double
  /// Trim height in millimetres (CR80: 53.98).
  public var height: Double
  /// Corner radius in millimetres (CR80: 3.18), used for previews.
  public var cornerRadius: Double
  /// Bleed per side in millimetres (default 3.175, 1/8 in).
  public var bleed: Double
  /// Text and codes stay at least this far inside the trim, in millimetres (default 3.2).
  public var safeZone: Double
  /// The front.
  public var front: CardSide
  /// The back.
  public var back: CardSide
  /// The language the template's texts are written in, and its cards' default locale (BCP 47;
  /// `en` unless the template says).
  public var locale: String = "en"
  /// Translations of the template's texts: language (BCP 47) → source text → translation.
  public var strings: [String: [String: String]] = [:]
  /// Dates, counts and reputation in the locale's own digits instead of Latin ones.
  public var nativeDigits = false

  /// The files the template draws (background images and image elements), as resolved paths.
  public var assetPaths: [String] {
    var paths: [String] = []
    for side in [front, back] {
      if let image = side.backgroundImage { paths.append(image) }
      for case .image(let element) in side.elements { paths.append(element.path) }
    }
    return paths
  }

  /// The texts a translation must give: every text element's text with a letter outside its
  /// `{field}` placeholders (`REPUTATION`, `{platform} MEMBER`), and `Joined {joinedDate}` when
  /// a text shows the `joined` field.
  public var translatableTexts: Set<String> {
    var texts: Set<String> = []
    for side in [front, back] {
      for case .text(let element) in side.elements {
        if placeholders(element.text).contains("joined") { texts.insert(Profile.joinedText) }
        var outside = element.text
        for name in placeholders(element.text) {
          outside = outside.replacingOccurrences(of: "{\(name)}", with: "")
        }
        if outside.contains(where: \.isLetter) { texts.insert(element.text) }
      }
    }
    return texts
  }

  /// The safe area in millimetres.
  public var safeBox: Box {
    Box(x: safeZone, y: safeZone, width: width - 2 * safeZone, height: height - 2 * safeZone)
  }
}
