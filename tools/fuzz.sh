#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (+ ASan/UBSan) and fuzzes each in turn for a
# while, starting from tests/fuzz/corpus. Inputs that crash, hang (-timeout) or take more memory
# than -rss_limit_mb are written to build/clang/crashes; docs/reliability.md has the last figures.
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
# The clang preset (CMakePresets.json) instruments every unit for libFuzzer with ASan + UBSan.
cmake --preset clang
mkdir -p build/clang/crashes
for target in "${targets[@]}"; do
  cmake --build build/clang --target "fuzz_${target}" -j2
  work="build/clang/corpus_${target}"
  mkdir -p "$work"
  # No input may cost memory out of proportion to its size: 1 GiB is far above what any corpus
  # input needs, and far below what a declared-but-absent tensor would take.
  "build/clang/tests/fuzz/fuzz_${target}" "$work" "tests/fuzz/corpus/${target}" \
      -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
      -artifact_prefix="build/clang/crashes/${target}-" -print_final_stats=1
done
