// SPDX-License-Identifier: Apache-2.0
// ImprintService: the OpenAPI 3.1 document of the service's routes, shipped in this module's
// resources and served at `GET /openapi.json`.

import Foundation
import ImprintCore
import ImprintHTTP

extension ImprintService {
  /// The OpenAPI 3.1 document describing every route, parameter, body, response and status
  /// code of the service (`openapi.json` in this module's resource bundle, `Bundle.module`),
  /// as the bytes `GET /openapi.json` answers with.
  ///
  /// - Throws: `FileError.notFound` when the bundle is not deployed beside the executable;
  ///   `FileError` when it cannot be read.
  public static func openAPIDocument() throws(FileError) -> [UInt8] {
    guard
      let path = ResourceBundle.path(of: "openapi.json", module: "ImprintService", bundle: .module)
    else {
      throw .notFound(path: ResourceBundle.location(module: "ImprintService") + "/openapi.json")
    }
    return try FileIO.read(path, limit: FileIO.Limit.structured)
  }
}
