// SPDX-License-Identifier: Apache-2.0
// Imprint: the encoder behind `JSONOutput`: Foundation's JSONEncoder's bytes, sorted keys, at a
// fraction of its cost.

import Foundation

/// Encodes `Encodable` values into exactly the bytes Foundation's `JSONEncoder` writes with
/// `.sortedKeys` and `.withoutEscapingSlashes` (and `.prettyPrinted` when asked), without its
/// cost.
///
/// Why not `JSONEncoder` itself: it asks every value it is given whether it is a `Date`, `Data`,
/// `URL`, `Decimal` or a string-keyed dictionary (dynamic casts, a protocol conformance looked up
/// each time), keeps each object in a dictionary and sorts it as it writes; `imprint inspect
/// --json` of 14 files (5 357 pages, each an object of five keys) spent a sixth of its CPU there.
/// This encoder compares the value's type with those (a pointer comparison), asks once whether
/// it is a `JSONOutputValue`, and keeps an object's entries in the order given. Whatever it does
/// not write itself (those types, infinities and NaN, a value that encodes nothing) it hands
/// back with `Unsupported`, and
/// `JSONOutput` asks `JSONEncoder`: the bytes stay Foundation's in every case, which
/// `JSONOutputTests` checks on generated values against `JSONEncoder`.
struct OutputEncoder {
  /// Thrown for a value this encoder leaves to `JSONEncoder`.
  struct Unsupported: Error {}

  let pretty: Bool
  let userInfo: [CodingUserInfoKey: Any]

  /// The JSON text of `value`.
  ///
  /// - Throws: `Unsupported`, or whatever the value's own `encode(to:)` throws.
  func encode(_ value: some Encodable) throws -> [UInt8] {
    let root = OutputValueEncoder(userInfo: userInfo)
    var container = root.singleValueContainer()
    try container.encode(value)
    guard let node = root.node else { throw Unsupported() }
    var writer = OutputWriter(pretty: pretty)
    writer.write(node)
    return writer.bytes
  }
}

/// A type that gives `JSONOutput` its JSON value directly.
///
/// Not through its `Encodable` conformance's containers: for the values written by the
/// thousand (a page's size), where the containers are most of the cost. Its value must be what
/// its `encode(to:)` writes; a test of the type compares the two.
public protocol JSONOutputValue: Encodable {
  /// The value as its `encode(to:)` writes it.
  ///
  /// - Throws: what `OutputNode.number` throws (a number JSON cannot hold).
  func jsonOutput() throws -> OutputNode
}

/// A value as the encoder holds it until it is written.
public enum OutputNode {
  case string(String)
  /// A number's text as JSONEncoder writes it (`number(_:)` makes it).
  case number(String)
  case bool(Bool)
  case null
  case array(OutputArray)
  case object(OutputObject)

  /// A floating-point number.
  ///
  /// - Throws: for an infinity or NaN, which JSONEncoder refuses (JSONOutput then asks it).
  public static func number(_ value: Double) throws -> OutputNode {
    .number(try format(value))
  }

  /// An integer.
  public static func number(_ value: Int) -> OutputNode { .number(String(value)) }

  /// The node of a string or number without an encoder (the types compared, no cast); `nil`
  /// for any other type.
  ///
  /// - Throws: `Unsupported` for the types JSONEncoder writes in a form of its own (a number
  ///   of seconds, Base64, a string, a decimal's digits).
  static func simple<T: Encodable>(_ value: T) throws -> OutputNode? {
    if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
    if T.self == Int.self { return .number(String(unsafeBitCast(value, to: Int.self))) }
    if T.self == Double.self {
      return .number(try OutputNode.format(unsafeBitCast(value, to: Double.self)))
    }
    if T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self
      || T.self == NSDecimalNumber.self
    {
      throw OutputEncoder.Unsupported()
    }
    if let direct = value as? any JSONOutputValue { return try direct.jsonOutput() }
    return nil
  }

  /// A floating-point number as JSONEncoder writes it: Swift's shortest form, without a
  /// trailing `.0`.
  static func format<F: BinaryFloatingPoint & CustomStringConvertible>(_ number: F) throws
    -> String
  {
    guard number.isFinite else { throw OutputEncoder.Unsupported() }
    var text = number.description
    if text.hasSuffix(".0") { text.removeLast(2) }
    return text
  }
}

/// An array being filled.
public final class OutputArray {
  var items: [OutputNode] = []
}

/// An object being filled: entries in the order given, a key given again replacing its value
/// (as JSONEncoder's dictionary does).
public final class OutputObject {
  private(set) var entries: [(key: String, value: OutputNode)] = []
  /// Each key's position, kept once an object has more entries than a look along them costs.
  private var index: [String: Int] = [:]
  private static let indexedFrom = 9

  init() {}

  /// An object of `fields` (a `JSONOutputValue`'s), in any order.
  public init(_ fields: [(key: String, value: OutputNode)]) {
    for (key, value) in fields { set(key, value) }
  }

  /// The value at `key`, if any.
  func value(at key: String) -> OutputNode? {
    position(of: key).map { entries[$0].value }
  }

  /// Sets `key`'s value.
  func set(_ key: String, _ value: OutputNode) {
    if let position = position(of: key) {
      entries[position].value = value
      return
    }
    entries.append((key, value))
    if entries.count == Self.indexedFrom {
      for (position, entry) in entries.enumerated() { index[entry.key] = position }
    } else if entries.count > Self.indexedFrom {
      index[key] = entries.count - 1
    }
  }

  /// The entries by their keys' UTF-8 bytes, as JSONEncoder sorts them (an insertion sort:
  /// objects are small, and often given in order).
  func sortedEntries() -> [(key: String, value: OutputNode)] {
    var sorted = entries
    guard sorted.count > 1 else { return sorted }
    for next in 1..<sorted.count {
      var position = next
      while position > 0, Self.precedes(sorted[position].key, sorted[position - 1].key) {
        sorted.swapAt(position, position - 1)
        position -= 1
      }
    }
    return sorted
  }

  private static func precedes(_ left: String, _ right: String) -> Bool {
    var left = left
    var right = right
    return left.withUTF8 { leftBytes in
      right.withUTF8 { rightBytes in
        let common = min(leftBytes.count, rightBytes.count)
        if common > 0, let leftStart = leftBytes.baseAddress,
          let rightStart = rightBytes.baseAddress
        {
          let order = memcmp(leftStart, rightStart, common)
          if order != 0 { return order < 0 }
        }
        return leftBytes.count < rightBytes.count
      }
    }
  }

  private func position(of key: String) -> Int? {
    if entries.count < Self.indexedFrom { return entries.firstIndex { $0.key == key } }
    return index[key]
  }
}

/// The encoder a value's `encode(to:)` is given: its one container becomes its node.
final class OutputValueEncoder: Encoder {
  let storedUserInfo: [CodingUserInfoKey: Any]
  var node: OutputNode?
  /// The coding path, made only when asked (errors; no Imprint type reads it): the parent's and
  /// this value's key; empty at the root.
  private let parent: OutputValueEncoder?
  private let key: (any CodingKey)?

  /// The root encoder.
  init(userInfo: [CodingUserInfoKey: Any]) {
    parent = nil
    key = nil
    storedUserInfo = userInfo
  }

  /// The encoder of the value at `key` under `parent`.
  init(parent: OutputValueEncoder, key: any CodingKey) {
    self.parent = parent
    self.key = key
    storedUserInfo = parent.storedUserInfo
  }

  var codingPath: [any CodingKey] {
    guard let parent, let key else { return [] }
    return parent.codingPath + [key]
  }

  var userInfo: [CodingUserInfoKey: Any] { storedUserInfo }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let object: OutputObject
    if case .object(let existing) = node {
      object = existing
    } else {
      object = OutputObject()
      node = .object(object)
    }
    return KeyedEncodingContainer(OutputKeyedContainer<Key>(encoder: self, object: object))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    let array: OutputArray
    if case .array(let existing) = node {
      array = existing
    } else {
      array = OutputArray()
      node = .array(array)
    }
    return OutputUnkeyedContainer(encoder: self, array: array)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    OutputSingleValueContainer(encoder: self)
  }

  /// The node of `value` one level down, at `key`.
  func child<T: Encodable>(_ value: T, at key: @autoclosure () -> any CodingKey) throws
    -> OutputNode
  {
    if let node = try OutputNode.simple(value) { return node }
    let encoder = OutputValueEncoder(parent: self, key: key())
    try value.encode(to: encoder)
    guard let node = encoder.node else { throw OutputEncoder.Unsupported() }
    return node
  }
}

/// A key JSONEncoder makes itself: an array's position, or `super`.
private struct OutputIndexKey: CodingKey {
  let stringValue: String
  let intValue: Int?

  init(stringValue: String) {
    self.stringValue = stringValue
    intValue = nil
  }

  init(intValue: Int) {
    stringValue = "Index \(intValue)"
    self.intValue = intValue
  }
}

private struct OutputKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let encoder: OutputValueEncoder
  let object: OutputObject

  var codingPath: [any CodingKey] { encoder.codingPath }

  mutating func encodeNil(forKey key: Key) throws { object.set(key.stringValue, .null) }
  mutating func encode(_ value: Bool, forKey key: Key) throws {
    object.set(key.stringValue, .bool(value))
  }
  mutating func encode(_ value: String, forKey key: Key) throws {
    object.set(key.stringValue, .string(value))
  }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    object.set(key.stringValue, .number(try OutputNode.format(value)))
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    object.set(key.stringValue, .number(try OutputNode.format(value)))
  }
  mutating func encode(_ value: Int, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: Int8, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: Int16, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: Int32, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: Int64, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: UInt, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: UInt8, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: UInt16, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: UInt32, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    object.set(key.stringValue, .number(String(value)))
  }
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    object.set(key.stringValue, try encoder.child(value, at: key))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested: OutputObject
    if case .object(let existing) = object.value(at: key.stringValue) {
      nested = existing
    } else {
      nested = OutputObject()
      object.set(key.stringValue, .object(nested))
    }
    let child = OutputValueEncoder(parent: encoder, key: key)
    return KeyedEncodingContainer(OutputKeyedContainer<NestedKey>(encoder: child, object: nested))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let nested: OutputArray
    if case .array(let existing) = object.value(at: key.stringValue) {
      nested = existing
    } else {
      nested = OutputArray()
      object.set(key.stringValue, .array(nested))
    }
    let child = OutputValueEncoder(parent: encoder, key: key)
    return OutputUnkeyedContainer(encoder: child, array: nested)
  }

  mutating func superEncoder() -> any Encoder {
    OutputDeferredEncoder(parent: encoder, key: OutputIndexKey(stringValue: "super")) {
      [object] node in object.set("super", node)
    }
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    OutputDeferredEncoder(parent: encoder, key: key) {
      [object] node in object.set(key.stringValue, node)
    }
  }
}

private struct OutputUnkeyedContainer: UnkeyedEncodingContainer {
  let encoder: OutputValueEncoder
  let array: OutputArray

  var codingPath: [any CodingKey] { encoder.codingPath }

  var count: Int { array.items.count }

  private var nextKey: any CodingKey { OutputIndexKey(intValue: array.items.count) }

  mutating func encodeNil() throws { array.items.append(.null) }
  mutating func encode(_ value: Bool) throws { array.items.append(.bool(value)) }
  mutating func encode(_ value: String) throws { array.items.append(.string(value)) }
  mutating func encode(_ value: Double) throws {
    array.items.append(.number(try OutputNode.format(value)))
  }
  mutating func encode(_ value: Float) throws {
    array.items.append(.number(try OutputNode.format(value)))
  }
  mutating func encode(_ value: Int) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: Int8) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: Int16) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: Int32) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: Int64) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: UInt) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: UInt8) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: UInt16) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: UInt32) throws { array.items.append(.number(String(value))) }
  mutating func encode(_ value: UInt64) throws { array.items.append(.number(String(value))) }
  mutating func encode<T: Encodable>(_ value: T) throws {
    array.items.append(try encoder.child(value, at: nextKey))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    let nested = OutputObject()
    let key = nextKey
    array.items.append(.object(nested))
    let child = OutputValueEncoder(parent: encoder, key: key)
    return KeyedEncodingContainer(OutputKeyedContainer<NestedKey>(encoder: child, object: nested))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let nested = OutputArray()
    let key = nextKey
    array.items.append(.array(nested))
    let child = OutputValueEncoder(parent: encoder, key: key)
    return OutputUnkeyedContainer(encoder: child, array: nested)
  }

  mutating func superEncoder() -> any Encoder {
    // JSONEncoder holds the array's place for what the super encoder writes.
    let position = array.items.count
    array.items.append(.null)
    return OutputDeferredEncoder(parent: encoder, key: OutputIndexKey(intValue: position)) {
      [array] node in array.items[position] = node
    }
  }
}

private struct OutputSingleValueContainer: SingleValueEncodingContainer {
  let encoder: OutputValueEncoder

  var codingPath: [any CodingKey] { encoder.codingPath }

  mutating func encodeNil() throws { encoder.node = .null }
  mutating func encode(_ value: Bool) throws { encoder.node = .bool(value) }
  mutating func encode(_ value: String) throws { encoder.node = .string(value) }
  mutating func encode(_ value: Double) throws {
    encoder.node = .number(try OutputNode.format(value))
  }
  mutating func encode(_ value: Float) throws {
    encoder.node = .number(try OutputNode.format(value))
  }
  mutating func encode(_ value: Int) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: Int8) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: Int16) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: Int32) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: Int64) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: UInt) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: UInt8) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: UInt16) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: UInt32) throws { encoder.node = .number(String(value)) }
  mutating func encode(_ value: UInt64) throws { encoder.node = .number(String(value)) }
  mutating func encode<T: Encodable>(_ value: T) throws {
    // The value is this encoder's one value: encoded into it, at its own coding path.
    if let node = try OutputNode.simple(value) {
      encoder.node = node
      return
    }
    encoder.node = nil
    try value.encode(to: encoder)
    guard encoder.node != nil else { throw OutputEncoder.Unsupported() }
  }
}

/// A super encoder: what it is given goes in its place when it is released.
///
/// As JSONEncoder's does. Rare (no Imprint type uses one); anything but one container is left to JSONEncoder.
private final class OutputDeferredEncoder: Encoder {
  let inner: OutputValueEncoder
  let place: (OutputNode) -> Void

  init(parent: OutputValueEncoder, key: any CodingKey, place: @escaping (OutputNode) -> Void) {
    inner = OutputValueEncoder(parent: parent, key: key)
    self.place = place
  }

  deinit {
    place(inner.node ?? .object(OutputObject()))
  }

  var codingPath: [any CodingKey] { inner.codingPath }
  var userInfo: [CodingUserInfoKey: Any] { inner.userInfo }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    inner.container(keyedBy: type)
  }
  func unkeyedContainer() -> any UnkeyedEncodingContainer { inner.unkeyedContainer() }
  func singleValueContainer() -> any SingleValueEncodingContainer {
    inner.singleValueContainer()
  }
}

/// Writes nodes as JSONEncoder's `JSONWriter` does: keys sorted by their UTF-8 bytes, two
/// spaces an indent level and ` : ` when pretty, an empty container still opened on its own
/// line, slashes unescaped, control characters as `\b \f \n \r \t` or `\u00XX`.
struct OutputWriter {
  let pretty: Bool
  var bytes: [UInt8] = []
  private var indent = 0

  init(pretty: Bool) {
    self.pretty = pretty
    bytes.reserveCapacity(4096)
  }

  mutating func write(_ node: OutputNode) {
    switch node {
    case .string(let text): write(string: text)
    case .number(let text): bytes.append(contentsOf: text.utf8)
    case .bool(let flag): bytes.append(contentsOf: flag ? Self.trueBytes : Self.falseBytes)
    case .null: bytes.append(contentsOf: Self.nullBytes)
    case .array(let array):
      bytes.append(UInt8(ascii: "["))
      if pretty {
        bytes.append(UInt8(ascii: "\n"))
        indent += 1
      }
      for (position, item) in array.items.enumerated() {
        if position > 0 {
          bytes.append(UInt8(ascii: ","))
          if pretty { bytes.append(UInt8(ascii: "\n")) }
        }
        if pretty { writeIndent() }
        write(item)
      }
      if pretty {
        bytes.append(UInt8(ascii: "\n"))
        indent -= 1
        writeIndent()
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let object): write(entries: object.sortedEntries())
    }
  }

  private mutating func write(entries: [(key: String, value: OutputNode)]) {
    bytes.append(UInt8(ascii: "{"))
    if pretty {
      bytes.append(UInt8(ascii: "\n"))
      indent += 1
    }
    for (position, entry) in entries.enumerated() {
      if position > 0 {
        bytes.append(UInt8(ascii: ","))
        if pretty { bytes.append(UInt8(ascii: "\n")) }
      }
      if pretty { writeIndent() }
      write(string: entry.key)
      if pretty {
        bytes.append(contentsOf: Self.prettyColon)
      } else {
        bytes.append(UInt8(ascii: ":"))
      }
      write(entry.value)
    }
    if pretty {
      bytes.append(UInt8(ascii: "\n"))
      indent -= 1
      writeIndent()
    }
    bytes.append(UInt8(ascii: "}"))
  }

  private static let trueBytes = Array("true".utf8)
  private static let falseBytes = Array("false".utf8)
  private static let nullBytes = Array("null".utf8)
  private static let prettyColon = Array(" : ".utf8)
  private static let hexDigits = Array("0123456789abcdef".utf8)

  private mutating func writeIndent() {
    for _ in 0..<indent {
      bytes.append(UInt8(ascii: " "))
      bytes.append(UInt8(ascii: " "))
    }
  }

  private mutating func write(string text: String) {
    bytes.append(UInt8(ascii: "\""))
    var text = text
    text.withUTF8 { utf8 in
      var mark = 0
      for (position, byte) in utf8.enumerated()
      where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<position]))
        mark = position + 1
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
          bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
          bytes.append(Self.hexDigits[Int(byte >> 4)])
          bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...]))
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
