// SPDX-License-Identifier: Apache-2.0
// ImprintQR: EIP-681 (Ethereum) and BIP-21 (Bitcoin) payment-request URIs.

/// An EIP-681 payment request: ether, or an ERC-20 token transfer.
///
/// `ethereum:<address>[@<chainId>][?value=<wei>&gas=<limit>&gasPrice=<wei>]`, or for a token
/// `ethereum:<token>[@<chainId>]/transfer?address=<recipient>&uint256=<atomic units>`. Integers
/// only (never `2.014e18`), addresses in EIP-55 form.
public struct EthereumPaymentRequest: Sendable, Hashable {
  /// Who is paid.
  public var recipient: EthereumAddress
  /// The amount in ether (18 decimals) or in token units (`tokenDecimals`).
  public var amount: DecimalAmount?
  /// The ERC-20 token contract, for a token transfer.
  public var token: EthereumAddress?
  /// The chain id (`@1` is mainnet); omitted when nil, since `@1` breaks some exchanges.
  public var chainID: UInt64?
  /// The suggested gas limit.
  public var gasLimit: UInt64?
  /// The suggested gas price, in gwei (9 decimals).
  public var gasPriceGwei: DecimalAmount?

  /// The gas-price range the wallet allows, in gwei.
  public static let gasPriceRange = 1...100
  /// The gas-limit range accepted: a plain transfer costs 21 000; 30 000 000 is a whole block.
  public static let gasLimitRange: ClosedRange<UInt64> = 21_000...30_000_000

  /// Creates a request, checking the gas values.
  ///
  /// - Throws: `QRError.invalidAmount` for a gas price outside 1-100 gwei or a gas limit outside
  ///   21 000 - 30 000 000, or a zero chain id.
  public init(
    recipient: EthereumAddress, amount: DecimalAmount? = nil, token: EthereumAddress? = nil,
    chainID: UInt64? = nil, gasLimit: UInt64? = nil, gasPriceGwei: DecimalAmount? = nil
  ) throws(QRError) {
    if let gasPriceGwei {
      let low = try DecimalAmount(
        "\(Self.gasPriceRange.lowerBound)", decimals: 9, field: .gasPrice)
      let high = try DecimalAmount(
        "\(Self.gasPriceRange.upperBound)", decimals: 9, field: .gasPrice)
      guard !low.exceeds(gasPriceGwei), !gasPriceGwei.exceeds(high) else {
        throw .invalidAmount(
          field: .gasPrice, value: gasPriceGwei.decimalString,
          expected: "a price from 1 to 100 gwei")
      }
    }
    if let gasLimit, !Self.gasLimitRange.contains(gasLimit) {
      throw .invalidAmount(
        field: .gasLimit, value: "\(gasLimit)", expected: "an integer from 21000 to 30000000")
    }
    if chainID == 0 {
      throw .invalidAmount(field: .chainID, value: "0", expected: "a positive integer")
    }
    self.recipient = recipient
    self.amount = amount
    self.token = token
    self.chainID = chainID
    self.gasLimit = gasLimit
    self.gasPriceGwei = gasPriceGwei
  }

  /// The `ethereum:` URI.
  public var uri: String {
    var parameters: [String] = []
    var uri = "ethereum:"
    if let token {
      uri += token.checksummed + (chainID.map { "@\($0)" } ?? "") + "/transfer"
      parameters.append("address=\(recipient.checksummed)")
      if let amount { parameters.append("uint256=\(amount.atomicUnits)") }
    } else {
      uri += recipient.checksummed + (chainID.map { "@\($0)" } ?? "")
      if let amount { parameters.append("value=\(amount.atomicUnits)") }
    }
    if let gasLimit { parameters.append("gas=\(gasLimit)") }
    if let gasPriceGwei { parameters.append("gasPrice=\(gasPriceGwei.atomicUnits)") }
    return parameters.isEmpty ? uri : uri + "?" + parameters.joined(separator: "&")
  }

  /// Cautions for the person printing the code.
  public var warnings: [String] {
    guard token != nil else { return [] }
    return [
      "token transfer request: some wallets have sent the payment to the token contract itself; "
        + "test the code with the wallets your payers use"
    ]
  }
}

/// A BIP-21 payment request: `bitcoin:<address>[?amount=<BTC>&label=<text>&message=<text>]`.
public struct BitcoinPaymentRequest: Sendable, Hashable {
  /// Who is paid.
  public var address: BitcoinAddress
  /// The amount in BTC (8 decimals).
  public var amount: DecimalAmount?
  /// A label for the recipient.
  public var label: String?
  /// A message for the payment.
  public var message: String?

  /// Creates a request; the amount must be above zero and at most 21 000 000 BTC.
  ///
  /// - Throws: `QRError.invalidAmount`.
  public init(
    address: BitcoinAddress, amount: DecimalAmount? = nil, label: String? = nil,
    message: String? = nil
  ) throws(QRError) {
    try Self.check(amount)
    self.address = address
    self.amount = amount
    self.label = label
    self.message = message
  }

  /// Checks that an amount is above zero and at most 21 000 000 BTC.
  ///
  /// - Throws: `QRError.invalidAmount`.
  static func check(_ amount: DecimalAmount?) throws(QRError) {
    guard let amount else { return }
    let cap = try DecimalAmount("21000000", decimals: 8, field: .amount)
    guard !amount.isZero, !amount.exceeds(cap) else {
      throw .invalidAmount(
        field: .amount, value: amount.decimalString,
        expected: "more than 0 and at most 21000000 BTC")
    }
  }

  /// The `bitcoin:` URI; label and message are percent-encoded (RFC 3986 unreserved kept).
  public var uri: String {
    var parameters: [String] = []
    if let amount { parameters.append("amount=\(amount.decimalString)") }
    if let label { parameters.append("label=\(percentEncode(label))") }
    if let message { parameters.append("message=\(percentEncode(message))") }
    let base = "bitcoin:" + address.text
    return parameters.isEmpty ? base : base + "?" + parameters.joined(separator: "&")
  }
}

/// Percent-encodes every byte outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`).
func percentEncode(_ text: String) -> String {
  var result = ""
  for byte in text.utf8 {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
      UInt8(ascii: "_"), UInt8(ascii: "~"):
      result.append(Character(Unicode.Scalar(byte)))
    default:
      result += "%" + hexByte(byte).uppercased()
    }
  }
  return result
}

/// Groups the characters of an address in fours for reading aloud (`0x 5290 8400 …`).
public func groupedForReading(_ address: String) -> String {
  var prefix = ""
  var body = Substring(address)
  if body.hasPrefix("0x") {
    prefix = "0x "
    body = body.dropFirst(2)
  }
  var groups: [String] = []
  var index = body.startIndex
  while index < body.endIndex {
    let end = body.index(index, offsetBy: 4, limitedBy: body.endIndex) ?? body.endIndex
    groups.append(String(body[index..<end]))
    index = end
  }
  return prefix + groups.joined(separator: " ")
}
