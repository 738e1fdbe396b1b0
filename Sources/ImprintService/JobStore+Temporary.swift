// SPDX-License-Identifier: Apache-2.0
// ImprintService: the private jobs folder of a server without `--jobs-dir`, held for the
// process's life (`flock` on its `.owner`), and the ones servers left behind when they ended
// without removing theirs (killed, crashed), removed by the next start.

import Foundation
import ImprintCore
import ImprintHTTP

extension JobStore {
  /// The name of the private jobs folders in the temporary folder: this prefix and six
  /// characters (`mkdtemp`).
  static let privatePrefix = "imprint-serve-jobs-"
  /// The file a server keeps locked (`flock`) in its private jobs folder while it lives, holding
  /// its process id.
  static let ownerFile = ".owner"

  /// Makes this server's private jobs folder in `parent` (`makePrivateFolder`) and holds it: its
  /// `.owner` made, locked and written with the process id; the lock lasts as long as the
  /// descriptor returned is open, or the process.
  ///
  /// - Returns: the folder and the owner file's descriptor.
  /// - Throws: `FileError.unwritable` when the folder or its owner file cannot be made.
  static func makeHeldFolder(in parent: String) throws(FileError) -> (String, Int32) {
    let folder = try makePrivateFolder(in: parent, prefix: privatePrefix)
    let path = folder + "/" + ownerFile
    let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    var failure = descriptor < 0 ? errno : 0
    if descriptor >= 0 {
      // Waits only for a start that is looking at the file: it finds it empty and lets go.
      while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
      do {
        try FileIO.writeAll(Array("\(getpid())\n".utf8), to: descriptor, path: path)
      } catch {
        failure = EIO
      }
    }
    guard failure == 0 else {
      if descriptor >= 0 { Foundation.close(descriptor) }
      FileIO.removeFolder(folder)
      throw .unwritable(path: path, reason: .system(failure))
    }
    return (folder, descriptor)
  }

  /// Removes the private jobs folders in `parent` that servers left behind when they ended
  /// without removing them (SIGKILL, a crash, the machine going down): those their server no
  /// longer holds.
  ///
  /// A folder is removed only when all of these hold: its name is `privatePrefix` and six
  /// characters; it is a folder, not a link to one, owned by this process's user; its `.owner`
  /// is a regular file of that user, not empty (written by its server once it held it), and its
  /// lock can be taken now (its server's process is gone: a lock dies with its process, whatever
  /// process id is reused since). It is removed while that lock is held, following no link
  /// (`FileIO.removeFolder`). A live server's folder, one being made, and a folder of an older
  /// server without `.owner` are left alone.
  ///
  /// - Returns: a `jobs.abandoned` event for each folder removed, naming the process its
  ///   `.owner` names; a `jobs.skipped` one for a folder that could not be removed whole.
  static func removeAbandonedFolders(in parent: String) -> [LoadEvent] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
    let now = Timestamp.now
    var removed: [LoadEvent] = []
    for name in names.sorted()
    where name.hasPrefix(privatePrefix) && name.utf8.count == privatePrefix.utf8.count + 6 {
      let folder = parent + "/" + name
      var status = stat()
      guard lstat(folder, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR,
        status.st_uid == geteuid()
      else { continue }
      let directory = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      guard directory >= 0 else { continue }
      defer { Foundation.close(directory) }
      let owner = openat(
        directory, ownerFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
      guard owner >= 0 else { continue }
      defer { Foundation.close(owner) }
      guard fstat(owner, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
        status.st_uid == geteuid(), status.st_size > 0, status.st_size < 64,
        flock(owner, LOCK_EX | LOCK_NB) == 0
      else { continue }
      let read = try? FileIO.read(
        descriptor: owner, size: Int(status.st_size), path: ownerFile, limit: 64)
      let pid = String(decoding: read ?? [], as: UTF8.self).filter(\.isNumber)
      let server = "a server (process \(pid.isEmpty ? "unknown" : pid)) that ended without stopping"
      removed.append(
        FileIO.removeFolder(folder)
          ? LoadEvent(
            time: now, event: "jobs.abandoned", path: folder,
            reason: "the private jobs folder of \(server): removed with its jobs' files")
          : LoadEvent(
            time: now, event: "jobs.skipped", path: folder,
            reason: "the private jobs folder of \(server) could not be removed whole"))
    }
    return removed
  }
}
