#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmark scripts: the release build and the real-PDF corpus.
# Sourced with $root set to the repository.

# build_imprint: builds the release binary (as the README's quick start does: the Swift runtime
# linked in) and sets $imprint to it.
build_imprint() {
  (cd "$root" && swift build -c release --static-swift-stdlib --product imprint >/dev/null 2>&1)
  imprint="$root/.build/release/imprint"
}

# corpus_folder DIR: echoes DIR (default Benchmarks/out/corpus), fetching the corpus with
# ../shared/corpus/get-corpus.sh when it holds no PDF yet.
corpus_folder() {
  local corpus="${1:-$root/Benchmarks/out/corpus}"
  if ! ls "$corpus"/*.pdf >/dev/null 2>&1; then
    mkdir -p "$corpus"
    bash "$root/../shared/corpus/get-corpus.sh" "$corpus" >/dev/null
  fi
  echo "$corpus"
}
