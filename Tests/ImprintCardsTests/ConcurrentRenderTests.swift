// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: a backend's load, 64 cards from 64 tasks at once, over the process-wide
// font library, image cache and live-handle counts (the locks scripts/sanitize thread checks).

import ImprintCards
import ImprintTestSupport
import Testing

@Suite("Concurrent rendering", .liveHandlesChecked)
struct ConcurrentRenderTests {
  /// Profiles, templates and photos (JPEG, PNG, none: the placeholder) the 64 tasks cycle through.
  static let cards: [(profile: String, template: String, photo: String?, follow: Bool)] = [
    ("harbor-lamp", "classic", "harbor-lamp.jpg", true),
    ("sora-park", "midnight", "sora-park.png", false),
    ("kenji.hive", "moderator", nil, false),
    ("layla-h", "classic", nil, false),
  ]

  @Test("64 cards from 64 tasks: each PDF and PNG front equals the same card rendered alone")
  func sixtyFourTasks() async throws {
    let inputs = try Self.cards.map {
      try sampleInput($0.profile, template: $0.template, photo: $0.photo, follow: $0.follow)
    }
    let options = CardOptions()
    let alone = try inputs.map {
      (
        pdf: try CardMaker.pdf($0, options: options).bytes,
        png: try CardMaker.png($0, face: .front, options: options).bytes
      )
    }
    let rendered = try await withThrowingTaskGroup(of: (Int, [UInt8], [UInt8]).self) { group in
      for task in 0..<64 {
        let input = inputs[task % inputs.count]
        group.addTask {
          (
            task, try CardMaker.pdf(input, options: options).bytes,
            try CardMaker.png(input, face: .front, options: options).bytes
          )
        }
      }
      return try await group.reduce(into: [(Int, [UInt8], [UInt8])]()) { $0.append($1) }
    }
    #expect(rendered.count == 64)
    for (task, pdf, png) in rendered {
      let card = Self.cards[task % Self.cards.count]
      #expect(pdf == alone[task % alone.count].pdf, "task \(task): \(card.profile) PDF differs")
      #expect(png == alone[task % alone.count].png, "task \(task): \(card.profile) PNG differs")
    }
  }
}
