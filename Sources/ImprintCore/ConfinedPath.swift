// SPDX-License-Identifier: Apache-2.0
// Imprint: paths that come from input (a template's asset, an order's file, an account name used
// as a cache file name) resolved so that they cannot leave their folder, and outputs that cannot
// replace their inputs.

import Foundation

/// The one place where a path taken from input is joined to its folder.
///
/// The rule (docs/reliability.md): a path from input is relative, has no `..` component, and
/// after links are followed it still lies inside the folder; an output never replaces an input.
public enum ConfinedPath {
  /// Joins `relative` to `folder`, refusing anything that would lead outside the folder.
  ///
  /// Absolute paths, `..` components and NUL bytes are refused as written; then the deepest
  /// existing part of the joined path is resolved with `realpath`, so a symbolic link inside the
  /// folder that points out of it is refused too. The file itself need not exist.
  ///
  /// - Parameters:
  ///   - relative: the path as the input gave it.
  ///   - folder: the folder it is confined to.
  ///   - what: what the path is, for the error ("template asset", "order file").
  /// - Returns: `folder/relative`.
  /// - Throws: `FileError.escapesFolder`, or `.notFound` for an empty path.
  public static func resolve(_ relative: String, in folder: String, what: String)
    throws(FileError) -> String
  {
    let components = try components(of: relative, in: folder, what: what)
    let base = folder.isEmpty ? "." : folder
    let joined = base + "/" + components.joined(separator: "/")
    guard let root = realPath(base) else { return joined }
    // The deepest part that exists decides where links lead.
    var probe = joined
    while true {
      if let resolved = realPath(probe) {
        guard resolved == root || resolved.hasPrefix(root == "/" ? "/" : root + "/") else {
          throw .escapesFolder(path: relative, folder: folder, what: what)
        }
        return joined
      }
      let parent = (probe as NSString).deletingLastPathComponent
      if parent == probe || parent.isEmpty { return joined }
      probe = parent
    }
  }

  /// Opens regular file `relative` inside `folder` for reading, following no symbolic link.
  ///
  /// It is opened one component at a time (`openat`), with `O_NOFOLLOW` at each: `folder`'s
  /// last component, every folder on the way, the file. So the file opened lies inside `folder`
  /// whatever links were planted there, and `ConfinedPath.resolve`'s window between its check
  /// and a later open is closed.
  ///
  /// The file is opened non-blocking (a FIFO would wait for a writer) and refused unless it is a
  /// regular file, checked before the open (`fstatat`, so a device is never opened) and again on
  /// the descriptor (`fstat`); its reads block again once it is open.
  ///
  /// - Parameters:
  ///   - relative: the path as the input gave it; errors name it, never `folder`.
  ///   - folder: the folder it is confined to.
  ///   - what: what the path is, for the error ("job output").
  /// - Returns: the descriptor (the caller closes it) and `fstat`'s answer.
  /// - Throws: `FileError.escapesFolder` for an absolute path, a `..` component or a NUL byte;
  ///   `.notFound` for an empty path or a component that does not exist, or is a file where a
  ///   folder was expected; `.notRegularFile` for a link (`.symbolicLink`) at any component,
  ///   or a FIFO, device or socket at the last; `.isDirectory`; `.unreadable` when a folder or
  ///   the file cannot be opened.
  public static func openFile(_ relative: String, in folder: String, what: String)
    throws(FileError) -> (descriptor: Int32, status: stat)
  {
    let components = try components(of: relative, in: folder, what: what)
    guard let last = components.last else { throw .notFound(path: relative) }
    var current = open(
      folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard current >= 0 else { throw .notFound(path: relative) }
    defer { close(current) }
    for component in components.dropLast() {
      try refuseLink(String(component), in: current, relative: relative)
      let next = openat(
        current, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      guard next >= 0 else { throw openFailure(errno, relative) }
      close(current)
      current = next
    }
    let name = String(last)
    var before = stat()
    guard fstatat(current, name, &before, AT_SYMLINK_NOFOLLOW) == 0 else {
      throw openFailure(errno, relative)
    }
    try checkRegular(before, relative)
    let descriptor = openat(
      current, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    guard descriptor >= 0 else { throw openFailure(errno, relative) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      let code = errno
      close(descriptor)
      throw .unreadable(path: relative, reason: .system(code))
    }
    do {
      // Replaced between the two looks: refused as what it is now.
      try checkRegular(status, relative)
    } catch {
      close(descriptor)
      throw error
    }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
    return (descriptor, status)
  }

  /// The components of `relative`, refused as written: empty, absolute, with a `..` component
  /// or a NUL byte.
  ///
  /// - Throws: `FileError.notFound` for an empty path, else `.escapesFolder`.
  private static func components(of relative: String, in folder: String, what: String)
    throws(FileError) -> [Substring]
  {
    guard !relative.isEmpty else { throw .notFound(path: relative) }
    let components = relative.split(separator: "/", omittingEmptySubsequences: true)
    guard !relative.hasPrefix("/"), !relative.utf8.contains(0), !components.contains("..")
    else {
      throw .escapesFolder(path: relative, folder: folder, what: what)
    }
    return components
  }

  /// Refuses a folder on the way that is a symbolic link (named as one, rather than by
  /// `openat`'s `ELOOP` or `ENOTDIR`).
  private static func refuseLink(_ name: String, in folder: Int32, relative: String)
    throws(FileError)
  {
    var status = stat()
    if fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0,
      (status.st_mode & S_IFMT) == S_IFLNK
    {
      throw .notRegularFile(path: relative, kind: .symbolicLink)
    }
  }

  /// Refuses what is not a regular file.
  private static func checkRegular(_ status: stat, _ relative: String) throws(FileError) {
    let kind = status.st_mode & S_IFMT
    guard kind != S_IFREG else { return }
    if kind == S_IFDIR { throw .isDirectory(path: relative) }
    throw .notRegularFile(path: relative, kind: FileKind(mode: status.st_mode))
  }

  /// The error of a failed `openat` or `fstatat` of `relative`'s components.
  private static func openFailure(_ code: Int32, _ relative: String) -> FileError {
    switch code {
    case ENOENT, ENOTDIR: .notFound(path: relative)
    case ELOOP: .notRegularFile(path: relative, kind: .symbolicLink)
    default: .unreadable(path: relative, reason: .system(code))
    }
  }

  /// Whether `name` can be used as one file name inside a folder: not empty, no `/`, no NUL or
  /// other control character, not `.` or `..`, not hidden, at most 255 bytes.
  public static func isPlainFileName(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= 255 && !name.hasPrefix(".")
      && !name.unicodeScalars.contains { $0 == "/" || $0.properties.generalCategory == .control }
  }

  /// Refuses an output that is one of the inputs (the same file, by device and inode, whatever
  /// path names it).
  ///
  /// - Throws: `FileError.outputIsInput`.
  public static func checkNotInput(_ output: String, inputs: [String]) throws(FileError) {
    var target = stat()
    guard stat(output, &target) == 0 else { return }
    for input in inputs {
      var source = stat()
      if stat(input, &source) == 0 && source.st_dev == target.st_dev
        && source.st_ino == target.st_ino
      {
        throw .outputIsInput(path: output)
      }
    }
  }

  private static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}
