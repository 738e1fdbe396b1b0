// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: a pipe for a child's standard streams that no other child inherits.

import Foundation

/// A pipe whose two descriptors are close-on-exec (`pipe2(O_CLOEXEC)`), for a child process's
/// standard streams (`Process.standardOutput = pipe.fileHandleForWriting`, then
/// `closeWriteEnd()` once it runs).
///
/// Foundation's `Pipe` makes inheritable descriptors, and `Process` does not close them in the
/// child: every process another thread starts meanwhile inherits them. Five `imprint serve`
/// replicas started at once held each other's standard error open, so a stop that waited for
/// one's end of file never saw it, and the test run hung until CI's time ran out. The child
/// still gets its own end: `posix_spawn`'s dup2 onto 0, 1 or 2 clears the flag there.
public final class CloseOnExecPipe: Sendable {
  /// The end this process reads.
  public let fileHandleForReading: FileHandle
  /// The end the child writes.
  public let fileHandleForWriting: FileHandle

  /// Makes the pipe (a precondition: the tests cannot go on without descriptors).
  public init() {
    var descriptors: [Int32] = [-1, -1]
    precondition(systemPipe2(&descriptors, O_CLOEXEC) == 0, "pipe2 failed: errno \(errno)")
    fileHandleForReading = FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: true)
    fileHandleForWriting = FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true)
  }

  /// Closes this process's copy of the write end once the child has its own, so that the
  /// reader sees the end of file when the child ends.
  public func closeWriteEnd() { try? fileHandleForWriting.close() }

  /// Closes this process's copy of the read end (for a child's standard input).
  public func closeReadEnd() { try? fileHandleForReading.close() }
}

/// glibc's `pipe2`, which Swift's Glibc module does not declare (it needs `_GNU_SOURCE`).
@_silgen_name("pipe2")
private func systemPipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
