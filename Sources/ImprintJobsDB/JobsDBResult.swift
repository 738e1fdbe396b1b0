// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: what a statement returned, copied out of libpq's result into Swift values, and
// the values a statement's parameters take.

/// A value a statement's parameter takes (`$1`, `$2`...), sent in PostgreSQL's text form.
///
/// The server reads the text as the type the statement gives the parameter (`$1::bigint`, or
/// the column it is compared with). `nil` is SQL's NULL.
public protocol JobsDBParameter: Sendable {
  /// The value in PostgreSQL's text form.
  var jobsDBText: String { get }
}

extension String: JobsDBParameter {
  public var jobsDBText: String { self }
}

extension Int: JobsDBParameter {
  public var jobsDBText: String { String(self) }
}

extension Double: JobsDBParameter {
  /// Swift's shortest form that reads back as the same value (`1e+20`, `inf`, `nan` are
  /// PostgreSQL's too).
  public var jobsDBText: String { description }
}

extension Bool: JobsDBParameter {
  public var jobsDBText: String { self ? "true" : "false" }
}

/// The rows a statement returned and the rows it changed, copied out of libpq's `PGresult`.
public struct JobsDBResult: Sendable {
  /// The columns' names, in order.
  public let columns: [String]
  /// The rows, in the order the server sent them.
  public let rows: [JobsDBRow]
  /// The rows an `INSERT`, `UPDATE`, `DELETE`, `MERGE`, `SELECT` or `COPY` touched
  /// (`PQcmdTuples`); 0 for other statements.
  public let changed: Int
}

/// One row of a `JobsDBResult`: each column's text (nil for NULL), read as Swift values by
/// column name.
public struct JobsDBRow: Sendable {
  /// The result's column names.
  let columns: [String]
  /// Each column's value in PostgreSQL's text form; nil for NULL.
  public let values: [String?]

  /// The text of `column`; nil for NULL.
  ///
  /// A column the statement did not return is a programmer error (a `precondition`).
  public func string(_ column: String) -> String? {
    guard let index = columns.firstIndex(of: column) else {
      preconditionFailure("no column '\(column)' in \(columns)")
    }
    return values[index]
  }

  /// `column` as an integer (`smallint`, `integer`, `bigint`); nil for NULL.
  ///
  /// - Throws: `JobsDBError.value` when its text is not an integer.
  public func int(_ column: String) throws(JobsDBError) -> Int? {
    try read(column, as: "an integer") { Int($0) }
  }

  /// `column` as a floating-point number (`real`, `double precision`, a `numeric` in range);
  /// nil for NULL.
  ///
  /// - Throws: `JobsDBError.value` when its text is not a number.
  public func double(_ column: String) throws(JobsDBError) -> Double? {
    try read(column, as: "a number") { text in
      switch text {
      case "Infinity": .infinity
      case "-Infinity": -.infinity
      case "NaN": .nan
      default: Double(text)
      }
    }
  }

  /// `column` as a boolean (PostgreSQL's `t` or `f`); nil for NULL.
  ///
  /// - Throws: `JobsDBError.value` when its text is neither.
  public func bool(_ column: String) throws(JobsDBError) -> Bool? {
    try read(column, as: "a boolean") { ["t": true, "f": false][$0] }
  }

  private func read<T>(_ column: String, as expected: String, _ parse: (String) -> T?)
    throws(JobsDBError) -> T?
  {
    guard let text = string(column) else { return nil }
    guard let value = parse(text) else {
      throw .value(column: column, text: text, expected: expected)
    }
    return value
  }
}
