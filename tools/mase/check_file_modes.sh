#!/usr/bin/env bash
# What mase writes comes out as a plain open would create it: under umask 022 every file is 0644
# and every folder 0755, under umask 077 0600 and 0700 (stat), for the files written atomically
# (checkpoints, tensors, drawings, the search's outputs, project markers) and the emitted RTL alike.
#   check_file_modes.sh MASE MODEL.onnx QUANT.toml INPUT.pb SEARCH.toml LABELS.npy MLP.onnx HW.toml WORK_DIR
# MODEL takes INPUT as it is; MLP (a symbolic batch) is emitted for one sample.
set -uo pipefail
mase="$1" model="$2" quant="$3" input="$4" search="$5" labels="$6" mlp="$7" hardware="$8" work="$9"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

drawing=m.dot
command -v dot > /dev/null && drawing=m.svg  # an SVG needs Graphviz's dot
for mask in 022 077; do
  file_mode=$(printf '%o' $((0666 & ~0$mask)))
  folder_mode=$(printf '%o' $((0777 & ~0$mask)))
  dir="$work/umask_$mask"
  rm -rf "$dir"
  mkdir -p "$dir"
  if ! output="$(cd "$dir" && umask "$mask" &&
      "$mase" quantize "$model" -c "$quant" -o q &&
      "$mase" run "$model" -i "x=$input" -o out &&
      "$mase" draw "$model" -o "$drawing" &&
      "$mase" search "$model" -c "$search" -d "x=$input" --labels "$labels" -j 1 -o search &&
      "$mase" emit-verilog "$mlp" --input-shape x=1,784 -c "$hardware" -o hw 2>&1)"; then
    fail "umask $mask: a command failed: $output"
    continue
  fi
  for f in q.json q.safetensors out/y.pb "$drawing" search/trials.jsonl search/pareto.csv search/pareto.svg \
           search/best.toml search/.mase-project hw/.mase-project hw/rtl/top.sv; do
    [ -f "$dir/$f" ] || fail "umask $mask: $f was not written"
  done
  while read -r mode kind path; do
    expected=$file_mode
    [ "$kind" == d ] && expected=$folder_mode
    [ "$mode" == "$expected" ] || fail "umask $mask: $path has mode $mode, expected $expected"
  done < <(cd "$dir" && find . -mindepth 1 -printf '%m %y %P\n')
  [ "$failures" -eq 0 ] && echo "ok: umask $mask: $(cd "$dir" && find . -type f | wc -l) files $file_mode, folders $folder_mode"
done
if [ "$failures" -eq 0 ]; then
  echo "every file mode check passed"
else
  echo "$failures file mode check(s) failed"
  exit 1
fi
