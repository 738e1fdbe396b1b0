// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: kept answers are the function's answers, shared by threads, and bounded.

import Foundation
import ImprintCore
import ImprintTestSupport
import Synchronization
import Testing

@Suite("Memo and the locale answers it keeps", .liveHandlesChecked)
struct MemoTests {
  @Test("an answer is computed once per key, kept per key, and the table empties at its limit")
  func keeps() {
    let calls = Mutex(0)
    let memo = Memo<Int, String>(limit: 3)
    func square(_ n: Int) -> String {
      calls.withLock { $0 += 1 }
      return String(n * n)
    }
    #expect(memo.value(2, square) == "4" && memo.value(3, square) == "9")
    #expect(memo.value(2, square) == "4" && calls.withLock { $0 } == 2, "2 was kept")
    #expect(memo.value(4, square) == "16" && calls.withLock { $0 } == 3)
    // The fourth key empties the table: 2 is computed again, and still right.
    #expect(memo.value(5, square) == "25" && memo.value(2, square) == "4")
    #expect(calls.withLock { $0 } == 5)
  }

  @Test("valueComputedOnce: threads asking a new key at once compute it once")
  func computedOnce() async {
    let memo = Memo<Int, Int>(limit: 8)
    final class Calls: Sendable { let count = Mutex(0) }
    let calls = Calls()
    let answers = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<8 {
        group.addTask {
          memo.valueComputedOnce(7) { key in
            calls.count.withLock { $0 += 1 }
            usleep(20_000)  // long enough for the other tasks to ask meanwhile
            return key * 6
          }
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(answers == Array(repeating: 42, count: 8))
    #expect(calls.count.withLock { $0 } == 1)
  }

  @Test("valueComputedOnce: a thread waiting for another's computation sleeps, not spins")
  func waiterSleeps() {
    // Swift's Mutex is a priority-inheriting futex on Linux, whose waiter spins in the kernel
    // while the owner runs: a waiter for a computation under it burnt as much CPU as the
    // computation (from a few to 45 ms of CPU over this test's 300-ms computation, in runs with
    // Mutex). The computing thread here runs (busy) for 300 ms of its own CPU time; the
    // waiter, asleep, uses a tenth of a millisecond of CPU over its wait.
    let memo = Memo<Int, Int>(limit: 8)
    let computing = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    @Sendable func threadCPU() -> Double {
      var time = timespec()
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
      return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
    Thread.detachNewThread {
      _ = memo.valueComputedOnce(1) { key in
        computing.signal()
        let start = threadCPU()
        var spins = 0
        while threadCPU() - start < 0.3 { spins &+= 1 }
        return key + (spins > 0 ? 1 : 0)
      }
      done.signal()
    }
    computing.wait()
    let before = threadCPU()
    let answer = memo.valueComputedOnce(1) { _ in -1 }
    let waited = threadCPU() - before
    done.wait()
    #expect(answer == 2, "the computing thread's answer")
    #expect(waited < 0.005, "the waiter used \(waited) s of CPU while another computed for 0.3 s")
  }

  @Test("many threads asking the same and different keys all get the function's answers")
  func threads() async {
    let memo = Memo<Int, Int>(limit: 64)
    let wrong = await withTaskGroup(of: Int.self) { group in
      for task in 0..<8 {
        group.addTask {
          var wrong = 0
          for n in 0..<2000
          where memo.value((n * 7 + task) % 100, { $0 * 3 }) != (n * 7 + task) % 100 * 3 {
            wrong += 1
          }
          return wrong
        }
      }
      return await group.reduce(0, +)
    }
    #expect(wrong == 0)
  }

  @Test("kept locale answers equal Foundation's, asked again and interleaved")
  func locales() {
    for _ in 0..<3 {
      for identifier in ["ar", "en", "fa", "he", "hi", "ur", "zh-TW", "pt_BR"] {
        #expect(
          LocaleData.isRightToLeft(identifier)
            == (Locale.Language(identifier: identifier).characterDirection == .rightToLeft),
          "\(identifier)")
      }
      #expect(LocaleData.lookupKeys("zh-TW") == ["zh-TW", "zh-Hant-TW", "zh-Hant", "zh"])
      #expect(LocaleData.lookupKeys("pt_BR") == ["pt-BR", "pt-Latn-BR", "pt-Latn", "pt"])
      #expect(LocaleData.count(1_234_567, locale: LocaleData.locale("hi")) == "12,34,567")
      #expect(
        LocaleData.count(1_234_567, locale: LocaleData.locale("fa", nativeDigits: true))
          == "۱٬۲۳۴٬۵۶۷")
      #expect(LocaleData.count(1_234_567, locale: LocaleData.locale("fa")) == "1,234,567")
    }
  }
}
