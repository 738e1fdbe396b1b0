// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: every suite ends with none of the C handles it opened still alive.

// A library target, so `swift build -c release` builds it too, where the Testing module is not
// on the search path: the trait exists only where Testing does (every test build).
#if canImport(Testing)
  import ImprintGraphics
  import Testing

  /// A suite trait: when the suite's last test has ended, none of the C handles it opened is alive.
  ///
  /// Its tests count the handles they open in a scope of their own (`LiveHandles.Scope`,
  /// task-local, so suites running beside it do not count). Debug builds count; release builds
  /// count nothing.
  public struct LiveHandleCheck: SuiteTrait, TestScoping {
    public init() {}

    public var isRecursive: Bool { false }

    public func provideScope(
      for test: Test, testCase: Test.Case?,
      performing function: @Sendable () async throws -> Void
    ) async throws {
      let scope = LiveHandles.Scope()
      try await LiveHandles.$scope.withValue(scope) { try await function() }
      let live = scope.live
      #expect(
        live.isEmpty, "C handles still alive after the suite '\(test.name)': \(live)",
        sourceLocation: test.sourceLocation)
    }
  }

  /// A suite trait: its tests run on `testExecutor`'s threads, not Swift's global pool, so
  /// that what other suites block there never holds them up between two steps.
  ///
  /// Not recursive: the suite's scope holds its tests, which run as its child tasks and so
  /// keep its executor preference.
  public struct TestThreads: SuiteTrait, TestScoping {
    public init() {}

    public var isRecursive: Bool { false }

    public func provideScope(
      for test: Test, testCase: Test.Case?,
      performing function: @Sendable () async throws -> Void
    ) async throws {
      try await withTaskExecutorPreference(testExecutor) { try await function() }
    }
  }

  extension Trait where Self == TestThreads {
    /// Runs the suite's tests on threads of their own (see `TestThreads`).
    public static var onTestThreads: Self { TestThreads() }
  }

  extension Trait where Self == LiveHandleCheck {
    /// Checks that the suite leaves no C handle alive (see `LiveHandleCheck`).
    public static var liveHandlesChecked: Self { LiveHandleCheck() }
  }
#endif
