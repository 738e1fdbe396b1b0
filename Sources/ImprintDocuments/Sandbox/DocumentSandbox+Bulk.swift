// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: many files through one sandbox (`imprint inspect`, `imprint thumb`): the
// largest first, idle workers lent to the pages of a few files, each file's failure its own.

import Foundation
import ImprintCore

/// One file of a bulk run (`DocumentSandbox.inspect(files:password:colors:jobs:)`,
/// `DocumentSandbox.thumbnails(of:to:pages:size:format:password:freedesktop:jobs:)`) and what
/// became of it.
public struct DocumentItem<Value: Sendable>: Sendable {
  /// The file as given; messages name it so.
  public var file: String
  /// The file's place in the run's schedule, from 0: files start in this order (the largest
  /// first, unless the run says otherwise), while items keep the order given.
  public var turn: Int
  /// What was made, or why the file failed (the error as thrown).
  public var result: Result<Value, any Error>

  /// `ok`, or `failed` with the error in `result`.
  public var status: ItemStatus {
    if case .success = result { .ok } else { .failed }
  }
}

/// Where the thumbnails of a bulk run go.
public enum ThumbnailDestination: Sendable, Equatable {
  /// `FOLDER/NAME.png` (`.jpg` for JPEG) for each file, NAME being the file's name without its
  /// extension; the folder is made when missing.
  case folder(String)
  /// This file, for the one file of the run: the form of a freedesktop thumbnailer (INPUT
  /// OUTPUT). Several files would share it, and fail.
  case file(String)
}

extension DocumentSandbox {
  /// Inspects each of `files` in the workers, `jobs` files at a time.
  ///
  /// Counting and measuring cost about what a file weighs, so the largest files start first:
  /// the long page-tree walks begin early instead of leaving one worker busy at the end while
  /// the others wait. Colour analysis costs what the pages take to draw, which the size does
  /// not tell (a 1.6 MB music essay takes longer than a 3.2 MB photo manual): with `colors`,
  /// files start in the order given. A file that fails (missing, not a document, hostile, over
  /// a limit, its worker dead) fails alone; the others are inspected.
  ///
  /// - Parameters:
  ///   - files: the paths; each item and message names a file as given here.
  ///   - password: the password of encrypted PDFs.
  ///   - colors: analyse each page's colour by this rule; nil for none.
  ///   - jobs: files handled at once; nil for as many as the sandbox keeps workers.
  /// - Returns: one item per file, in the order given, each with the `DocumentInfo` or the
  ///   error thrown (`FileError`, `DocumentError`).
  public func inspect(
    files: [String], password: String? = nil, colors: ColorRule? = nil, jobs: Int? = nil
  ) async -> [DocumentItem<DocumentInfo>] {
    let schedule = colors == nil ? Self.largestFirst(files) : Array(files.indices)
    return await each(files, schedule: schedule, jobs: jobs ?? slots) { index in
      try await self.inspect(
        path: files[index], file: files[index], password: password, colors: colors)
    }
  }

  /// Writes the thumbnails of each of `files` (see `thumbnails(path:file:...)`), `jobs` files at
  /// a time, the largest first.
  ///
  /// A file's thumbnail is its destination's name; with several `pages`, page N's is that name
  /// with `-N` before the extension. Files whose names would meet (`x/a.pdf` and `y/a.pdf`
  /// into one folder) both fail (`file.outputCollision`): which one would win is no rule. No
  /// thumbnail replaces any of `files` (`file.outputIsInput`), whatever path names it. A
  /// file's thumbnails are all written or none, and a file that fails fails alone. When there
  /// are fewer files than `jobs`, the idle workers share out the pages of each file (the
  /// single file's `parallel`). Into a folder, the hidden temporaries that workers of a killed run left are
  /// removed first (never a live run's).
  ///
  /// - Parameters:
  ///   - files: the paths; each item and message names a file as given here.
  ///   - destination: a folder for all, or one file for one file.
  ///   - pages: `1`, `all` or a range such as `1-3,5`.
  ///   - size: the side of the square box each thumbnail fits, in pixels.
  ///   - format: PNG or JPEG.
  ///   - password: the password of encrypted PDFs.
  ///   - freedesktop: write the `Thumb::URI` (the file's absolute `file://` URI) and
  ///     `Thumb::MTime` (its modification time in seconds) PNG text chunks.
  ///   - jobs: files handled at once; nil for as many as the sandbox keeps workers.
  /// - Returns: one item per file, in the order given, each with the thumbnails written (in
  ///   page order) or the error thrown (`FileError`, `DocumentError`).
  /// - Throws: `FileError` when the folder cannot be made (before any file is read).
  public func thumbnails(
    of files: [String], to destination: ThumbnailDestination, pages: String = "1", size: Int,
    format: ThumbnailFormat, password: String? = nil, freedesktop: Bool = false,
    jobs: Int? = nil
  ) async throws -> [DocumentItem<[String]>] {
    if case .folder(let folder) = destination {
      try FileIO.makeFolder(folder)
      // Pages staged by the workers of a run that was killed (kill -9 of the CLI) are hidden
      // temporaries of dead processes: removed once per run, never a live run's.
      AtomicFile.removeStaleTemporaries(in: folder)
    }
    let outputs = Self.thumbnailOutputs(files, destination: destination, format: format)
    let jobs = jobs ?? slots
    // Identified once: each output is then one stat, however many files there are.
    let protected = FileIdentities(files)
    // Fewer files than workers: the pages of each are shared out among the idle ones.
    let spare = max(1, jobs / max(1, files.count))
    return await each(files, schedule: Self.largestFirst(files), jobs: jobs) { index in
      let file = files[index]
      if let collision = outputs[index].collision { throw collision }
      return try await self.thumbnails(
        path: file, file: file, password: password, pages: pages, size: size, format: format,
        output: outputs[index].output, text: freedesktop ? Self.freedesktopText(file) : [],
        parallel: spare, inputs: protected)
    }
  }

  /// Runs `work` on the position of each of `files`, `jobs` at a time, starting them in
  /// `schedule`'s order (positions into `files`).
  ///
  /// - Returns: one item per file, in the order of `files`.
  private func each<Value: Sendable>(
    _ files: [String], schedule: [Int], jobs: Int,
    work: @escaping @Sendable (Int) async throws -> Value
  ) async -> [DocumentItem<Value>] {
    var items: [Int: DocumentItem<Value>] = [:]
    var iterator = schedule.enumerated().makeIterator()
    await forEachConcurrently(
      inputs: { iterator.next() }, jobs: jobs,
      work: { turn, index -> (Int, DocumentItem<Value>) in
        let result: Result<Value, any Error>
        do { result = .success(try await work(index)) } catch { result = .failure(error) }
        return (index, DocumentItem(file: files[index], turn: turn, result: result))
      },
      collect: { items[$0.0] = $0.1 })
    return files.indices.compactMap { items[$0] }
  }

  /// The positions of `files`, the largest first (a file that cannot be measured counts as
  /// empty; files of one size keep the order given).
  static func largestFirst(_ files: [String]) -> [Int] {
    let sizes = files.map { file -> Int64 in
      var status = stat()
      return stat(file, &status) == 0 ? Int64(status.st_size) : 0
    }
    return files.indices.sorted { sizes[$0] > sizes[$1] }
  }

  /// Each file's thumbnail name for `destination` (in the order of `files`), with the
  /// `file.outputCollision` that fails it when another file's name is the same.
  static func thumbnailOutputs(
    _ files: [String], destination: ThumbnailDestination, format: ThumbnailFormat
  ) -> [(output: String, collision: FileError?)] {
    let outputs = files.map { file in
      switch destination {
      case .file(let output): return output
      case .folder(let folder):
        let base = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        return "\(folder)/\(base).\(format == .png ? "png" : "jpg")"
      }
    }
    // Files sharing an output: none of them is written (which one would win is no rule).
    var users: [String: [String]] = [:]
    for (file, output) in zip(files, outputs) { users[output, default: []].append(file) }
    return zip(files, outputs).map { file, output in
      let sharing = users[output] ?? []
      guard sharing.count > 1 else { return (output, nil) }
      let other = sharing.first { $0 != file } ?? file
      return (output, FileError.outputCollision(path: output, first: file, second: other))
    }
  }

  /// The freedesktop text chunks of `file`'s thumbnail: its absolute `file://` URI and its
  /// modification time in seconds since 1970 (0 when it cannot be read).
  static func freedesktopText(_ file: String) -> [(key: String, value: String)] {
    let absolute =
      file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
    let attributes = try? FileManager.default.attributesOfItem(atPath: file)
    let mtime =
      (attributes?[.modificationDate] as? Date).map { Int($0.timeIntervalSince1970) } ?? 0
    return [
      ("Thumb::URI", URL(fileURLWithPath: absolute).absoluteString),
      ("Thumb::MTime", "\(mtime)"),
    ]
  }
}
