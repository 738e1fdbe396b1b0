// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: one connection to the jobs database shared by the threads of a process, one
// statement at a time, connected again after it was lost.

import Synchronization

/// A connection to the jobs database that any thread may use (`use`): calls take turns; a
/// call that finds the connection lost (`JobsDBError.unreachable`) fails, and the next call
/// connects again first (`JobsDBConnection.reconnect`), so that a database restart costs the
/// requests made while it was down, never the process.
public final class JobsDBClient: Sendable {
  private struct State: ~Copyable {
    var connection: JobsDBConnection
    /// Whether the last call lost the connection.
    var lost = false
  }

  private let state: Mutex<State>
  /// The URL as given, without its password.
  public let url: String
  /// The schema versions the first connection applied (empty when another replica had).
  public let migrated: [Int]

  /// Connects to the database at `url`, its schema migrated unless `migrate` is false.
  ///
  /// - Throws: what `JobsDBConnection.init` throws.
  public init(url: String, migrate: Bool = true) throws(JobsDBError) {
    let connection = try JobsDBConnection(url: url, migrate: migrate)
    self.url = connection.url
    migrated = connection.migrated
    state = Mutex(State(connection: connection))
  }

  /// Marks the connection lost (another connection found the database away): the next call
  /// connects again first.
  public func markLost() {
    state.withLock { $0.lost = true }
  }

  /// Runs `body` with the connection, alone: connected again first when the last call lost
  /// it.
  ///
  /// - Throws: `JobsDBError.unreachable` when it cannot be connected again, or `body` lost it;
  ///   what `body` throws.
  public func use<T>(_ body: (borrowing JobsDBConnection) throws(JobsDBError) -> sending T)
    throws(JobsDBError) -> T
  {
    try state.withLock { (state: inout State) throws(JobsDBError) -> T in
      if state.lost {
        try state.connection.reconnect()
        state.lost = false
      }
      do throws(JobsDBError) {
        return try body(state.connection)
      } catch {
        if case .unreachable = error { state.lost = true }
        throw error
      }
    }
  }
}
