// SPDX-License-Identifier: Apache-2.0
// ImprintQR: turns what a person typed (text, an address, payment options) into the QR payload.

import ImprintCore

/// What the input of a QR code is.
public enum QRPayloadKind: String, Sendable, Codable, CaseIterable {
  /// Plain text or a URL, encoded as given.
  case text
  /// An Ethereum address (EIP-55), or an EIP-681 payment request.
  case ethereum
  /// A Bitcoin address, or a BIP-21 payment request.
  case bitcoin

  /// The kind's short name, as a manifest's `payloadType` and `imprint qr`'s flags give it:
  /// `text`, `eth` or `btc`.
  public var shortName: String {
    switch self {
    case .text: "text"
    case .ethereum: "eth"
    case .bitcoin: "btc"
    }
  }

  /// The kind a short name (`text`, `eth`, `btc`) names, or nil for any other text.
  public init?(shortName: String) {
    guard let kind = Self.allCases.first(where: { $0.shortName == shortName }) else { return nil }
    self = kind
  }

  /// The short names, for a message saying what was expected: `text, eth or btc`.
  public static var shortNames: String { Formatting.alternatives(allCases.map(\.shortName)) }
}

/// Payment details for `--request`; every value is the text the person typed.
public struct PaymentOptions: Sendable, Hashable {
  /// Make a payment-request URI rather than the bare address.
  public var request = false
  /// The amount: ether, token units (with `token`), or BTC.
  public var amount: String?
  /// ERC-20 token contract (Ethereum).
  public var token: String?
  /// The token's decimals (Ethereum, with `token`); 18 when nil.
  public var decimals: Int?
  /// Chain id (Ethereum).
  public var chainID: String?
  /// Gas limit (Ethereum).
  public var gasLimit: String?
  /// Gas price in gwei (Ethereum).
  public var gasPrice: String?
  /// Recipient label (Bitcoin).
  public var label: String?
  /// Payment message (Bitcoin).
  public var message: String?

  /// No payment details.
  public init() {}

  /// Whether any detail implies a payment request.
  public var impliesRequest: Bool {
    request || amount != nil || token != nil || chainID != nil || gasLimit != nil
      || gasPrice != nil || label != nil || message != nil
  }
}

/// A payload ready to encode.
public struct QRPayload: Sendable, Hashable {
  /// The exact text the symbol holds.
  public let text: String
  /// The address (checksummed) when the payload is one, for a caption.
  public let address: String?
  /// Cautions for the person printing it.
  public let warnings: [String]

  /// Builds the payload for `input` of `kind` with `payment` details.
  ///
  /// - Throws: `QRError` for an empty payload, an invalid address or checksum, or an invalid
  ///   amount, gas value or chain id.
  public static func build(
    _ input: String, kind: QRPayloadKind, payment: PaymentOptions = PaymentOptions(),
    source: String = "the payload"
  ) throws(QRError) -> QRPayload {
    guard !input.isEmpty else { throw .emptyPayload(source: source) }
    switch kind {
    case .text:
      return QRPayload(text: input, address: nil, warnings: [])
    case .ethereum:
      return try ethereum(input, payment)
    case .bitcoin:
      return try bitcoin(input, payment)
    }
  }

  private static func ethereum(_ input: String, _ payment: PaymentOptions) throws(QRError)
    -> QRPayload
  {
    let address = try EthereumAddress(input)
    var warnings: [String] = []
    if let chain = address.eip1191ChainID {
      warnings.append(
        "address '\(input)' carries an EIP-1191 checksum for chain \(chain) (RSK); "
          + "it is encoded with its EIP-55 checksum")
    }
    guard payment.impliesRequest else {
      return QRPayload(text: address.checksummed, address: address.checksummed, warnings: warnings)
    }
    let request = try ethereumRequest(to: address, payment)
    return QRPayload(
      text: request.uri, address: address.checksummed, warnings: warnings + request.warnings)
  }

  private static func ethereumRequest(to address: EthereumAddress, _ payment: PaymentOptions)
    throws(QRError) -> EthereumPaymentRequest
  {
    let token = try payment.token.map { (text: String) throws(QRError) in try EthereumAddress(text)
    }
    let decimals = payment.decimals ?? 18
    let range = QROption.decimalsRange
    guard range.contains(decimals) else {
      throw .invalidAmount(
        field: .decimals, value: "\(decimals)",
        expected: "\(range.lowerBound) to \(range.upperBound)")
    }
    let amount = try payment.amount.map { (text: String) throws(QRError) in
      let amount = try DecimalAmount(text, decimals: decimals, field: .amount)
      // EIP-681 carries the amount as a uint256 of atomic units (wei, token base units): a
      // larger one would be a URI no wallet can pay (or one that wraps around).
      guard amount.fitsUInt256 else {
        throw .amountOutOfRange(
          field: .amount, value: text,
          maximum: DecimalAmount.uint256Maximum(decimals: decimals)
            + (payment.token == nil ? " ether" : " token units with \(decimals) decimals")
            + " (2^256 - 1 atomic units)")
      }
      return amount
    }
    let chainID = try payment.chainID.map { (text: String) throws(QRError) in
      guard let value = UInt64(text), value > 0 else {
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
          text.contains(where: { $0 != "0" })
        {
          throw .amountOutOfRange(field: .chainID, value: text, maximum: "\(UInt64.max)")
        }
        throw .invalidAmount(field: .chainID, value: text, expected: "a positive integer")
      }
      return value
    }
    let gasLimit = try payment.gasLimit.map { (text: String) throws(QRError) in
      guard let value = UInt64(text) else {
        throw .invalidAmount(
          field: .gasLimit, value: text, expected: "an integer from 21000 to 30000000")
      }
      return value
    }
    let gasPrice = try payment.gasPrice.map { (text: String) throws(QRError) in
      try DecimalAmount(text, decimals: 9, field: .gasPrice)
    }
    return try EthereumPaymentRequest(
      recipient: address, amount: amount, token: token, chainID: chainID, gasLimit: gasLimit,
      gasPriceGwei: gasPrice)
  }

  /// Checks the payment details on their own, before any address is known (for example once
  /// before a bulk run, so that a bad amount is reported once rather than on every line).
  ///
  /// - Throws: `QRError.invalidAmount`, or `QRError.invalidEthereumAddress` for a bad token.
  public static func validate(_ payment: PaymentOptions, kind: QRPayloadKind) throws(QRError) {
    guard payment.impliesRequest else { return }
    switch kind {
    case .text: return
    case .ethereum:
      _ = try ethereumRequest(
        to: try EthereumAddress("0x" + String(repeating: "0", count: 40)), payment)
    case .bitcoin:
      let amount = try payment.amount.map { (text: String) throws(QRError) in
        try DecimalAmount(text, decimals: 8, field: .amount)
      }
      try BitcoinPaymentRequest.check(amount)
    }
  }

  private static func bitcoin(_ input: String, _ payment: PaymentOptions) throws(QRError)
    -> QRPayload
  {
    let address = try BitcoinAddress(input)
    guard payment.impliesRequest else {
      return QRPayload(text: address.text, address: address.text, warnings: [])
    }
    let amount = try payment.amount.map { (text: String) throws(QRError) in
      try DecimalAmount(text, decimals: 8, field: .amount)
    }
    let request = try BitcoinPaymentRequest(
      address: address, amount: amount, label: payment.label, message: payment.message)
    return QRPayload(text: request.uri, address: address.text, warnings: [])
  }
}
