// SPDX-License-Identifier: Apache-2.0
// ImprintService: what made a service job, as a type. When things happened to it is a
// `Timestamp` (ImprintHTTP: the access log's times, the same text).

/// What made a service job: the route that accepted it.
public enum JobKind: String, Codable, Sendable, CaseIterable {
  /// `POST /v1/batch`: a manifest's items.
  case batch
  /// `POST /v1/prepare`: an order prepared (and printed, with a printer).
  case prepare
}
