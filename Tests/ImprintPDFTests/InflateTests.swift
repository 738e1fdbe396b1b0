// SPDX-License-Identifier: Apache-2.0
// CImprintInflate_inflate (libdeflate where it reads a stream as zlib does, zlib otherwise)
// against zlib alone: the same answer and the same bytes for whole, cut, damaged, oddly-headed
// and too-big streams.

import CImprintInflate
import ImprintTestSupport
import Testing

/// A zlib stream of `data`: raw deflate at `level` from CImprintInflate, a header declaring
/// `windowBits` (8-15; 15 as zlib writes it), `dictionary` flagged or not, and Adler-32.
private func zlibStream(
  _ data: [UInt8], level: Int32 = 6, windowBits: Int = 15, dictionary: Bool = false
) -> [UInt8] {
  let bound = CImprintInflate_deflate_bound(data.count)
  var raw = [UInt8](repeating: 0, count: bound)
  let written = data.withUnsafeBufferPointer { input in
    raw.withUnsafeMutableBufferPointer { output in
      CImprintInflate_deflate_raw(
        input.baseAddress, input.count, level, output.baseAddress, output.count)
    }
  }
  precondition(written >= 0, "deflate failed")
  let cmf = UInt8((windowBits - 8) << 4 | 8)
  var flg = UInt8(2 << 6 | (dictionary ? 0x20 : 0))
  flg += UInt8(31 - (Int(cmf) * 256 + Int(flg)) % 31) % 31
  var a: UInt32 = 1
  var b: UInt32 = 0
  for byte in data {
    a = (a + UInt32(byte)) % 65_521
    b = (b + a) % 65_521
  }
  let adler = b << 16 | a
  return [cmf, flg] + raw.prefix(written)
    + [
      UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF),
    ]
}

/// Both inflaters' answers for `stream` into `capacity` bytes: the return value and the bytes
/// written.
private func answers(_ stream: [UInt8], capacity: Int) -> (
  mine: (Int, [UInt8]), zlib: (Int, [UInt8])
) {
  func run(_ inflate: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, Int) -> Int)
    -> (Int, [UInt8])
  {
    var output = [UInt8](repeating: 0xAA, count: capacity)
    let written = stream.withUnsafeBufferPointer { input in
      output.withUnsafeMutableBufferPointer { buffer in
        inflate(input.baseAddress, input.count, buffer.baseAddress, buffer.count)
      }
    }
    return (written, Array(output.prefix(max(0, written))))
  }
  return (run(CImprintInflate_inflate), run(CImprintInflate_inflate_zlib))
}

/// Page-content-like text: operators and numbers, repeating with variations (far matches).
private func sample(_ count: Int, seed: UInt64) -> [UInt8] {
  var random = SeededGenerator(state: seed)
  var bytes: [UInt8] = []
  while bytes.count < count {
    let state = random.next()
    let line =
      "\(state >> 50) \(state >> 40 & 0x3FF) Td (Page \(state >> 58)) Tj 0 g q 1 0 0 1 re f Q\n"
    bytes += Array(line.utf8)
    if state >> 61 == 0 {
      bytes += [UInt8](repeating: UInt8(state & 0xFF), count: Int(state >> 20 & 0xFFF))
    }
  }
  return Array(bytes.prefix(count))
}

@Suite struct InflateTests {
  @Test func wholeStreamsAsZlibInflatesThem() {
    for (index, size) in [0, 1, 100, 4096, 70_000, 300_000].enumerated() {
      let data = sample(size, seed: UInt64(index))
      for level: Int32 in [0, 1, 6, 9] {
        let stream = zlibStream(data, level: level)
        let result = answers(stream, capacity: max(1, size))
        #expect(result.mine.0 == size && result.mine.1 == data)
        #expect(result.mine == result.zlib)
        // One byte short: both say it would not fit (-2).
        if size > 1 {
          let short = answers(stream, capacity: size - 1)
          #expect(short.mine.0 == -2 && short.mine == short.zlib)
        }
        // Trailing bytes after the stream: ignored by both.
        let trailing = answers(stream + [0x0A, 0x65, 0x6E, 0x64], capacity: size + 10)
        #expect(trailing.mine.0 == size && trailing.mine == trailing.zlib)
      }
    }
  }

  @Test func smallDeclaredWindowsAndDictionariesAreZlibs() {
    // 6 000 bytes of noise said again after 2 000 more: matches 8 000 bytes back, past a
    // declared window of 256 bytes to 4 KiB, which both read (Debian's zlib is not built with
    // INFLATE_STRICT); a declared window past 32 KiB (bits 16), which both refuse.
    var random = SeededGenerator(state: 7)
    let noise = (0..<8_000).map { _ in UInt8(random.next() >> 56) }
    let data = Array((noise + noise.prefix(6_000) + sample(56_000, seed: 7)).prefix(70_000))
    for bits in 8...16 {
      let stream = zlibStream(data, windowBits: bits)
      let result = answers(stream, capacity: 70_000)
      #expect(result.mine == result.zlib, "window bits \(bits)")
      #expect(result.mine.0 == (bits <= 15 ? 70_000 : -1), "window bits \(bits)")
    }
    let flagged = answers(zlibStream(data, dictionary: true), capacity: 70_000)
    #expect(flagged.mine.0 == -1 && flagged.mine == flagged.zlib)
  }

  @Test func cutAndDamagedStreamsAsZlibAnswersThem() {
    let data = sample(50_000, seed: 11)
    let stream = zlibStream(data)
    var random = SeededGenerator(state: 2026)
    var partial = 0
    for trial in 0..<400 {
      let state = random.next()
      var damaged = stream
      if trial.isMultiple(of: 2) {
        damaged = Array(stream.prefix(Int(state >> 33) % stream.count))
      } else {
        for flip in 0..<(1 + trial % 3) {
          let at = Int((state >> UInt64(10 + flip * 7)) % UInt64(stream.count))
          damaged[at] ^= UInt8(1 << (trial % 8))
        }
      }
      let result = answers(damaged, capacity: 60_000)
      #expect(result.mine == result.zlib, "trial \(trial)")
      if result.mine.0 > 0 && result.mine.0 < data.count { partial += 1 }
    }
    // Cut streams give the bytes they have, as zlib does (PDF writers leave such streams).
    #expect(partial > 50)
    for bytes in [[], [0x78], [0x78, 0x9C], [0x78, 0x9C, 0x03], [0x08, 0x1D]] as [[UInt8]] {
      let result = answers(bytes, capacity: 16)
      #expect(result.mine == result.zlib)
    }
  }
}
