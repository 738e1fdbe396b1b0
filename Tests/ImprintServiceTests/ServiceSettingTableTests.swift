// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the table of `imprint serve`'s settings (`ServiceSetting.all`) against
// the fields of `ServiceSettings` and the `--config` reader: a setting left out of one of them
// fails here (ImprintCLITests' OptionSpecTests hold the options, help and
// `ServiceConfiguration.apply`).

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintService

/// `setting` set to a value of its kind (in range; `true` for a flag) in empty settings.
private func settingsSetting(_ setting: ServiceSetting) -> ServiceSettings {
  var settings = ServiceSettings()
  switch setting.value {
  case .address(let field): settings[keyPath: field] = "127.0.0.1:0"
  case .file(let field), .folder(let field, _), .text(let field):
    settings[keyPath: field] = "/x"
  case .flag(let field): settings[keyPath: field] = true
  case .integer(let field, let range): settings[keyPath: field] = range.upperBound
  case .number(let field, let range): settings[keyPath: field] = range.upperBound
  }
  return settings
}

/// The labels of the fields `settings` holds a value in.
private func given(_ settings: ServiceSettings) -> [String] {
  Mirror(reflecting: settings).children.compactMap { child in
    guard let label = child.label, case .some = Mirror(reflecting: child.value).children.first
    else { return nil }
    return label
  }
}

/// `value` as JSON for `setting` in a `--config` file.
private func json(_ setting: ServiceSetting) -> String {
  switch setting.value {
  case .address: #""127.0.0.1:0""#
  case .file, .folder, .text: #""x""#
  case .flag: "true"
  case .integer(_, let range): String(range.lowerBound)
  case .number(_, let range): String(range.lowerBound)
  }
}

@Suite("imprint serve: one table of settings")
struct ServiceSettingTableTests {
  @Test("each field of ServiceSettings is one setting of the table, named by its key")
  func fields() {
    var named: [String] = []
    for setting in ServiceSetting.all {
      let set = given(settingsSetting(setting))
      #expect(set == [setting.key], "\(setting.key) sets \(set)")
      named += set
    }
    let fields = Mirror(reflecting: ServiceSettings()).children.compactMap(\.label)
    // The two maps are read by their own rules (names checked, printers' members).
    #expect(Set(fields).subtracting(named) == ["priceLists", "printers"])
    #expect(Set(named).count == named.count)
    #expect(Set(ServiceSetting.all.map(\.option)).count == ServiceSetting.all.count)
  }

  @Test("the --config reader reads every setting of the table, and checks each range")
  func reader() throws {
    let folder = TemporaryFolder()
    let members = ServiceSetting.all.map { "\"\($0.key)\": \(json($0))" }
    let path = folder.file("serve.json")
    try Data("{\(members.joined(separator: ", "))}".utf8).write(to: URL(fileURLWithPath: path))
    let settings = try ServiceSettings.load(path)
    #expect(Set(given(settings)) == Set(ServiceSetting.all.map(\.key)))
    for setting in ServiceSetting.all {
      let outside: String
      switch setting.value {
      case .integer(_, let range): outside = String(range.upperBound + 1)
      case .number(_, let range): outside = String(range.upperBound + 1)
      default: continue
      }
      try Data("{\"\(setting.key)\": \(outside)}".utf8).write(to: URL(fileURLWithPath: path))
      #expect(throws: ServerError.self, "\(setting.key)") { try ServiceSettings.load(path) }
    }
  }
}
