// SPDX-License-Identifier: Apache-2.0
// CFuzzerDriver: libFuzzer's entry point for programs that have their own main
// (compiler-rt/lib/fuzzer/FuzzerInterface.h), defined by the -sanitize=fuzzer runtime.

#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Parses libFuzzer's flags from argc/argv and runs the fuzzing loop (or the given inputs) with
/// `callback`; returns the process exit status.
int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*callback)(const uint8_t *data, size_t size));

#endif
