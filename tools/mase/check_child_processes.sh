#!/usr/bin/env bash
# The tools mase starts end with it: `kill -TERM` of `mase emit-verilog --synth` while yosys runs
# must end yosys too (every process working in the project is gone soon after mase), and leave no
# synthesis report that looks finished.
#   check_child_processes.sh MASE MODEL.onnx CONFIG.toml WORK_DIR
set -uo pipefail
mase="$1" model="$2" config="$3" work="$4"
rm -rf "$work" && mkdir -p "$work" && work="$(cd "$work" && pwd)"
project="$work/project"
command -v yosys > /dev/null || { echo "FAIL: yosys is not installed (apt-get install yosys)"; exit 1; }

# The processes whose working folder is the project (yosys runs there, as every tool does).
in_project() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/cwd" 2> /dev/null)" == "$project" ] && echo "${p#/proc/} $(cat "$p/comm" 2> /dev/null)"
  done
}

yosys_running() { [[ $'\n'"$(in_project)"$'\n' == *" yosys"$'\n'* ]]; }

"$mase" emit-verilog "$model" -c "$config" -n 1 -o "$project" --synth > "$work/mase.log" 2>&1 &
pid=$!
# Wait (up to 120 s) for yosys to be running in the project.
for _ in $(seq 1200); do
  yosys_running && break
  kill -0 "$pid" 2> /dev/null || break
  sleep 0.1
done
if ! yosys_running; then
  echo "FAIL: yosys never ran in $project; mase said:"; cat "$work/mase.log"; exit 1
fi
kill -TERM "$pid"
wait "$pid"
status=$?
[ "$status" -eq 143 ] || { echo "FAIL: mase exited with status $status after SIGTERM, expected 143"; exit 1; }
for _ in $(seq 50); do
  [ -z "$(in_project)" ] && break
  sleep 0.1
done
left="$(in_project)"
if [ -n "$left" ]; then
  echo "FAIL: processes still run in the project 5 s after mase ended: $left"
  kill -KILL $(echo "$left" | cut -d' ' -f1) 2> /dev/null
  exit 1
fi
if [ -e "$project/reports/utilization.txt" ]; then
  echo "FAIL: the interrupted synthesis left reports/utilization.txt"; exit 1
fi
echo "yosys ended with mase"
