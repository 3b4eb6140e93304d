#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): run from the repository root after installing
# tools/debian-packages.txt. Each stage prints its wall time.
#   1. release:  the tests, examples and tool at -O2, warnings as errors, and runs the tests;
#   2. sanitize: clang 14 builds the tests, the tool, the benchmarks and every libFuzzer target
#                under AddressSanitizer + UndefinedBehaviorSanitizer, runs the tests again but the
#                network-scale ones and replays each fuzz target's corpus with its libFuzzer binary;
#   3. plain:    a bare configure (no preset: CMake's Release at -O3, the compiler's own warnings,
#                none as errors), as a user's project builds mase: the library, examples and tool.
# The test presets set OBJCACHE=ccache, which Verilator's generated makefiles read: every
# simulated design compiles Verilator's runtime (verilated.cpp, …) again, and ccache does it once.
set -euo pipefail
cd "$(dirname "$0")/.."

stage() {
  local name="$1" started=$SECONDS
  shift
  echo "== test_all: $name"
  "$@"
  echo "== test_all: $name took $((SECONDS - started)) s"
}

release() { cmake --preset release && cmake --build --preset release && ctest --preset release; }
sanitize() { cmake --preset sanitize && cmake --build --preset sanitize && ctest --preset sanitize; }
plain() {
  local launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S . -B build/plain -G Ninja -DCMAKE_BUILD_TYPE=Release -DMASE_BUILD_TESTS=OFF -DMASE_BUILD_BENCHMARKS=OFF \
        "${launcher[@]}"
  cmake --build build/plain -j2
}

stage release release
stage sanitize sanitize
stage plain plain
