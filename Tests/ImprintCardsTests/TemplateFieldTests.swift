// SPDX-License-Identifier: Apache-2.0
// ImprintCardsTests: template fields read by Core's JSONObjectReader keep the template's code
// and wording (template.invalid, "'<key>' must be ...").

import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintCards

@Suite("Template fields", .liveHandlesChecked)
struct TemplateFieldTests {
  @Test(
    "a wrong type or an unknown key is template.invalid naming the key",
    arguments: [
      (#"[]"#, "'' must be an object"),
      (#"{"schemaVersion": "1"}"#, "'schemaVersion' must be a number"),
      (#"{"schemaVersion": 2}"#, "'schemaVersion' must be 1; found 2.0"),
      (#"{"schemaVersion": 1, "card": [], "front": {}, "back": {}}"#, "'card' must be an object"),
      (
        #"{"schemaVersion": 1, "card": {"width": true}, "front": {}, "back": {}}"#,
        "'card.width' must be a number"
      ),
      (
        #"{"schemaVersion": 1, "front": {"elements": {}}, "back": {}}"#,
        "'front.elements' must be an array"
      ),
      (
        #"{"schemaVersion": 1, "front": {"elements": [5]}, "back": {}}"#,
        "'front.elements[0]' must be an object"
      ),
      (
        #"{"schemaVersion": 1, "front": {"background": 5}, "back": {}}"#,
        "'front.background' must be a string"
      ),
      (
        #"{"schemaVersion": 1, "front": {}, "back": {"backgroundImage": 5}}"#,
        "'back.backgroundImage' must be a string"
      ),
      (
        #"{"schemaVersion": 1, "front": {"elements": [{"type": "rect", "x": 5, "y": 5, "width": 10, "height": 10, "bleed": "yes"}]}, "back": {}}"#,
        "'front.elements[0].bleed' must be true or false"
      ),
      (
        #"{"schemaVersion": 1, "front": {"elements": [{"type": "rect", "x": 5, "y": 5, "width": 10, "height": 10, "fil": 1}]}, "back": {}}"#,
        "'front.elements[0].fil' is not a known key"
      ),
      (#"{"schemaVersion": 1, "front": {}, "back": {}, "zzz": 1}"#, "'zzz' is not a known key"),
      (#"{"schemaVersion": 1, "front": {}}"#, "'back' is missing"),
    ])
  func refused(json: String, message: String) {
    do {
      _ = try CardTemplate.parse(Array(json.utf8), name: "t.json", folder: "/nonexistent")
      Issue.record("\(json) must be refused")
    } catch {
      #expect(error.code == "template.invalid")
      #expect(error.message == "template 't.json': " + message)
    }
  }
}
