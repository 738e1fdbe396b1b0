// SPDX-License-Identifier: Apache-2.0
// ImprintCards: downloads a profile photo, on request only, within strict limits.

import Foundation
import ImprintCore
import ImprintGraphics
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Downloads profile photos: http and https only, a timeout, a size limit, and the content
/// sniffed (JPEG or PNG), whatever the server says its type is.
public enum PhotoFetcher {
  /// The largest photo downloaded (10 MB).
  public static let defaultLimit = 10 << 20
  /// The longest a download may take, in seconds.
  public static let defaultTimeout: TimeInterval = 15

  /// Downloads `url`.
  ///
  /// - Returns: the image's bytes.
  /// - Throws: `CardError.photoDownload` naming the URL (not http(s), a failed or non-200
  ///   request, too large, too slow) or `CardError.photo` (not a JPEG or PNG).
  public static func fetch(
    _ url: String, limit: Int = defaultLimit, timeout: TimeInterval = defaultTimeout
  ) async throws(CardError) -> [UInt8] {
    guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
      scheme == "http" || scheme == "https", parsed.host != nil
    else {
      throw .photoDownload(url: url, reason: "only http and https URLs are downloaded")
    }
    var request = URLRequest(url: parsed, timeoutInterval: timeout)
    request.setValue("Imprint/\(0.1)", forHTTPHeaderField: "User-Agent")
    let download = Download(limit: limit)
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = timeout
    configuration.timeoutIntervalForResource = timeout
    let session = URLSession(configuration: configuration, delegate: download, delegateQueue: nil)
    defer { session.finishTasksAndInvalidate() }
    let result = await withCheckedContinuation { continuation in
      download.start(session.dataTask(with: request), continuation: continuation)
    }
    let bytes: [UInt8]
    switch result {
    case .success(let data): bytes = data
    case .failure(let failure): throw .photoDownload(url: url, reason: failure.reason)
    }
    guard ImageType(sniffing: bytes) != nil else {
      throw .photo(source: url, reason: "the server sent something that is not a JPEG or PNG")
    }
    return bytes
  }
}

/// Collects one response, cancelling it past the size limit.
///
/// `@unchecked Sendable`: URLSession calls the delegate on its own serial queue; the mutable
/// state is behind a Mutex.
private final class Download: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  private let limit: Int
  private let state = Mutex<
    (
      data: [UInt8], failure: String?,
      continuation: CheckedContinuation<Result<[UInt8], Failure>, Never>?
    )
  >(([], nil, nil))

  struct Failure: Error {
    let reason: String
  }

  init(limit: Int) { self.limit = limit }

  func start(
    _ task: URLSessionDataTask,
    continuation: CheckedContinuation<Result<[UInt8], Failure>, Never>
  ) {
    state.withLock { $0.continuation = continuation }
    task.resume()
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    if let http = response as? HTTPURLResponse, http.statusCode != 200 {
      state.withLock { $0.failure = "the server answered HTTP \(http.statusCode)" }
      completionHandler(.cancel)
      return
    }
    if response.expectedContentLength > Int64(limit) {
      state.withLock {
        $0.failure =
          "it is \(response.expectedContentLength) bytes; at most \(limit) are downloaded"
      }
      completionHandler(.cancel)
      return
    }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let over = state.withLock { state -> Bool in
      state.data += data
      if state.data.count > limit {
        state.failure = "it is over \(limit) bytes; at most \(limit) are downloaded"
        return true
      }
      return false
    }
    if over { dataTask.cancel() }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    let (continuation, result) = state.withLock {
      state -> (CheckedContinuation<Result<[UInt8], Failure>, Never>?, Result<[UInt8], Failure>) in
      let continuation = state.continuation
      state.continuation = nil
      if let failure = state.failure { return (continuation, .failure(Failure(reason: failure))) }
      if let error {
        return (
          continuation,
          .failure(Failure(reason: "the download failed (\(error.localizedDescription))"))
        )
      }
      return (continuation, .success(state.data))
    }
    continuation?.resume(returning: result)
  }
}
