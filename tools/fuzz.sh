#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (+ ASan/UBSan) and fuzzes each in turn for a
# while, starting from tests/fuzz/corpus. Inputs that crash, hang (-timeout) or take more memory
# than -rss_limit_mb are written to build/fuzz/crashes; docs/reliability.md has the last figures.
#   tools/fuzz.sh [seconds per target, default 60] [target...]
# The targets: parse_format checkpoint onnx_model quant_config npy tensor_proto cli_options.
# Needs clang and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(parse_format checkpoint onnx_model quant_config npy tensor_proto cli_options)
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DMASE_BUILD_FUZZERS=ON -DMASE_BUILD_BENCHMARKS=OFF -DMASE_BUILD_EXAMPLES=OFF "${launcher[@]}"
mkdir -p build/fuzz/crashes
for target in "${targets[@]}"; do
  cmake --build build/fuzz --target "fuzz_${target}" -j2
  work="build/fuzz/corpus_${target}"
  mkdir -p "$work"
  # No input may cost memory out of proportion to its size: 1 GiB is far above what any corpus
  # input needs, and far below what a declared-but-absent tensor would take.
  "build/fuzz/tests/fuzz/fuzz_${target}" "$work" "tests/fuzz/corpus/${target}" \
      -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
      -artifact_prefix="build/fuzz/crashes/${target}-" -print_final_stats=1
done
