#!/usr/bin/env bash
# What including mase costs a user: the compile time and peak memory of each umbrella header and
# of examples/tutorial_1.cpp, each as a ratio to `#include <Eigen/Dense>` compiled in the same run
# with the same flags. A measurement, not a test (the figures depend on the machine and its load);
# docs/architecture.md lists the budgets and the last figures.
#
#   tools/compile_budget.sh [-n REPEATS] [-f "FLAGS"] [SUBJECT...]
#
# SUBJECT is a header below include/ (mase/ir.hpp) or a .cpp file, compiled in the default mode
# (-DMASE_SEPARATE_COMPILATION -DMASE_ONNX_SEPARATE_COMPILATION, as linking mase::mase and
# mase::onnx does), or header-only with "+header_only" appended (as linking mase::header_only
# does); by default every umbrella, and mase.hpp and tutorial_1 both ways. Each subject is compiled REPEATS times (default 3) and its fastest time is kept;
# peak memory is the largest resident set of those runs. CXX picks the compiler (default g++).
set -euo pipefail

repeats=3
# ONNX_* as Debian's onnx_proto target defines them: tutorial_1 imports ONNX.
flags="-std=c++20 -O2 -DONNX_ML=1 -DONNX_NAMESPACE=onnx"
while getopts "n:f:" option; do
  case "$option" in
    n) repeats="$OPTARG" ;;
    f) flags="$OPTARG" ;;
    *) echo "usage: $0 [-n REPEATS] [-f FLAGS] [SUBJECT...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

root="$(cd "$(dirname "$0")/.." && pwd)"
compiler="${CXX:-g++}"
[[ -x /usr/bin/time ]] || { echo "compile_budget: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

subjects=("$@")
if [[ ${#subjects[@]} -eq 0 ]]; then
  subjects=(mase/core.hpp mase/formats.hpp mase/ir.hpp mase/eval.hpp mase/passes.hpp mase/io.hpp mase/mase.hpp
            mase/verilog.hpp mase/mase.hpp+header_only "$root/examples/tutorial_1.cpp"
            "$root/examples/tutorial_1.cpp+header_only")
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# measure SOURCE [EXTRA_FLAG]: prints "SECONDS KILOBYTES" (fastest time, largest peak memory).
measure() {
  local source="$1" extra="${2:-}" best="" peak=0 seconds kilobytes
  for ((i = 0; i < repeats; ++i)); do
    # shellcheck disable=SC2086  # flags are words on purpose
    /usr/bin/time -f "%e %M" -o "$work/time" "$compiler" $flags -I"$root/include" -isystem /usr/include/eigen3 \
      -DTOML_HEADER_ONLY=0 $extra -c "$source" -o "$work/out.o"
    read -r seconds kilobytes < "$work/time"
    if [[ -z "$best" ]] || awk "BEGIN{exit !($seconds < $best)}"; then best="$seconds"; fi
    ((kilobytes > peak)) && peak="$kilobytes"
  done
  echo "$best $peak"
}

source_for() {
  local subject="$1"
  if [[ "$subject" == *.cpp ]]; then echo "$subject"; return; fi
  local file="$work/$(echo "$subject" | tr '/.' '__').cpp"
  echo "#include <$subject>" > "$file"
  echo "$file"
}

read -r base_seconds base_kilobytes < <(measure "$(source_for Eigen/Dense)")
echo "compiler: $("$compiler" --version | head -1); flags: $flags; fastest of $repeats"
printf "%-28s %8s %8s %9s %8s\n" subject seconds ratio "peak MB" ratio
printf "%-28s %8.2f %8.2f %9.0f %8.2f\n" "Eigen/Dense" "$base_seconds" 1 "$((base_kilobytes / 1024))" 1
for subject in "${subjects[@]}"; do
  extra="-DMASE_SEPARATE_COMPILATION -DMASE_ONNX_SEPARATE_COMPILATION"
  if [[ "$subject" == *+header_only ]]; then extra=""; fi
  read -r seconds kilobytes < <(measure "$(source_for "${subject%+header_only}")" "$extra")
  printf "%-28s %8.2f %8.2f %9.0f %8.2f\n" "${subject#"$root/"}" "$seconds" \
    "$(awk "BEGIN{print $seconds / $base_seconds}")" "$((kilobytes / 1024))" \
    "$(awk "BEGIN{print $kilobytes / $base_kilobytes}")"
done
