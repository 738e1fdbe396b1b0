// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the JSON report of a run over files (`imprint inspect --json`,
// `imprint thumb --json`, the service's `/v1/inspect`): one type for every surface.

import ImprintCore

/// The report of a run over files: one entry per file, in the order given, with
/// `"schemaVersion": 1`.
public struct FilesReport<Entry: Encodable & Sendable>: Encodable, Sendable {
  /// The report's version (1).
  public var schemaVersion = 1
  /// One entry per file.
  public var files: [Entry]

  /// A report of `files`.
  public init(files: [Entry]) {
    self.files = files
  }
}

/// One file of an inspect report: what was found, or why it failed.
public struct InspectEntry: Encodable, Sendable {
  /// The file as given (or as an upload is named).
  public var file: String
  /// `ok`, or `failed` with `error`.
  public var status: ItemStatus
  /// What the file holds, when it was read.
  public var info: DocumentInfo?
  /// Why it failed, when it did.
  public var error: ErrorRecord?

  /// An entry for `file`.
  public init(file: String, status: ItemStatus, info: DocumentInfo?, error: ErrorRecord?) {
    self.file = file
    self.status = status
    self.info = info
    self.error = error
  }
}
