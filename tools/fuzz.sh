#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (+ ASan/UBSan) and fuzzes each for a while,
# starting from tests/fuzz/corpus. New inputs that crash are written to build/fuzz/crashes.
#   tools/fuzz.sh [seconds per target, default 60]
# Needs clang and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DMASE_BUILD_FUZZERS=ON -DMASE_BUILD_BENCHMARKS=OFF -DMASE_BUILD_EXAMPLES=OFF
mkdir -p build/fuzz/crashes
for target in parse_format checkpoint onnx_model; do
  cmake --build build/fuzz --target "fuzz_${target}"
  work="build/fuzz/corpus_${target}"
  mkdir -p "$work"
  "build/fuzz/tests/fuzz/fuzz_${target}" "$work" "tests/fuzz/corpus/${target}" \
      -max_total_time="$seconds" -artifact_prefix=build/fuzz/crashes/ -print_final_stats=1
done
