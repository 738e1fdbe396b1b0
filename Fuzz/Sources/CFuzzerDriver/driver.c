// SPDX-License-Identifier: Apache-2.0
// CFuzzerDriver: no code; SwiftPM wants one source file in a C target. The header declares a
// function of the libFuzzer runtime that `-sanitize=fuzzer` links in.
#include "CFuzzerDriver.h"
