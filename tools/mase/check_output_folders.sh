#!/usr/bin/env bash
# The mase tool never deletes or overwrites a file it was not asked to write. Each case sets up a
# folder of the user's files, runs mase with an output that would once have destroyed them, and
# checks the exit status, the message, and every file byte for byte (sha256).
#   check_output_folders.sh MASE MODEL.onnx CONFIG.toml INPUT.pb WORK_DIR
set -uo pipefail
mase="$1" model="$2" config="$3" input="$4" work="$5"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
digest() { (cd "$1" && find . -type f -o -type l | LC_ALL=C sort | while read -r f; do
  if [ -L "$f" ]; then echo "link $f -> $(readlink "$f")"; else sha256sum "$f"; fi; done); }

# expect_refused NAME DIR_TO_WATCH EXIT_REGEX COMMAND...: the command exits 1 with a message
# matching the regex, and DIR_TO_WATCH is unchanged.
expect_refused() {
  local name="$1" watch="$2" regex="$3"
  shift 3
  local before after output status failed_before=$failures
  before="$(digest "$watch")"
  output="$("$@" 2>&1)"
  status=$?
  after="$(digest "$watch")"
  [ "$status" -eq 1 ] || fail "$name: exit status $status, expected 1; output: $output"
  [[ "$output" =~ $regex ]] || fail "$name: output does not match '$regex': $output"
  [ "$before" == "$after" ] || fail "$name: the folder changed:"$'\n'"$(diff <(echo "$before") <(echo "$after"))"
  [ "$failures" -eq "$failed_before" ] || return 1
  echo "ok: $name"
}

user_folder() {  # a folder holding the model, its config and the user's notes
  rm -rf "$1" && mkdir -p "$1" && cp "$model" "$1/model.onnx" && cp "$config" "$1/q.toml" &&
    cp "$input" "$1/x.pb" && echo "the user's notes" > "$1/notes.txt"
}

rm -rf "$work" && mkdir -p "$work" && work="$(cd "$work" && pwd)"
refused="is not empty and is not a project mase wrote"

# -o . in the folder that holds the model (the original data loss).
user_folder "$work/here"
(cd "$work/here" && expect_refused "emit-verilog -o ." "$work/here" "$refused" \
  "$mase" emit-verilog model.onnx -c q.toml -n 1 -o .) || failures=$((failures + 1))

# -o .. from a folder inside the user's.
user_folder "$work/parent" && mkdir -p "$work/parent/inner"
(cd "$work/parent/inner" && expect_refused "emit-verilog -o .." "$work/parent" "$refused" \
  "$mase" emit-verilog ../model.onnx -c ../q.toml -n 1 -o ..) || failures=$((failures + 1))

# -o ~ with a home folder of the user's (the shell expands ~ from HOME).
user_folder "$work/home"
expect_refused "emit-verilog -o ~" "$work/home" "$refused" \
  env HOME="$work/home" bash -c "\"$mase\" emit-verilog ~/model.onnx -c ~/q.toml -n 1 -o ~"

# -o src where src is a folder of the user's sources.
user_folder "$work/project" && mkdir -p "$work/project/src" && echo "module mine; endmodule" > "$work/project/src/mine.sv"
expect_refused "emit-verilog -o src" "$work/project" "$refused" \
  "$mase" emit-verilog "$work/project/model.onnx" -c "$work/project/q.toml" -n 1 -o "$work/project/src"

# A link to an empty folder: the project lands in the folder, the link stays a link; emitting
# again through it replaces the project and keeps a file the user added.
mkdir -p "$work/real" && ln -s real "$work/link"
"$mase" emit-verilog "$model" -c "$config" -n 1 -o "$work/link" > /dev/null 2>&1 || fail "emit-verilog into a link"
[ -L "$work/link" ] && [ -f "$work/real/.mase-project" ] && [ -f "$work/real/rtl/top.sv" ] ||
  fail "emit-verilog into a link: the project is not in the linked folder"
echo "the user's notes" > "$work/real/notes.txt"
"$mase" emit-verilog "$model" -c "$config" -n 2 -o "$work/link" > /dev/null 2>&1 || fail "emit-verilog again into a link"
[ "$(cat "$work/real/notes.txt")" == "the user's notes" ] || fail "emitting again lost the user's notes"
echo "ok: emit-verilog into a link to a folder, twice"

# A link to a folder of the user's is refused like the folder.
user_folder "$work/linked_user" && ln -s linked_user "$work/link_to_user"
expect_refused "emit-verilog -o LINK_TO_USER_FOLDER" "$work/linked_user" "$refused" \
  "$mase" emit-verilog "$model" -c "$config" -n 1 -o "$work/link_to_user"

# A read-only folder: an error naming it, nothing written. Root ignores permission bits, so as
# root the command runs as the unprivileged user nobody.
mkdir -p "$work/read_only" && chmod 0755 "$work" && chmod 0555 "$work/read_only"
as_user=()
if [ "$(id -u)" -eq 0 ]; then as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
expect_refused "emit-verilog into a read-only folder" "$work/read_only" "cannot write into" \
  "${as_user[@]}" "$mase" emit-verilog "$model" -c "$config" -n 1 -o "$work/read_only"
[ -z "$(ls -A "$work/read_only")" ] || fail "the read-only folder is not empty"

# mase run -o . next to its own input: the output y.pb must not replace an input named y.pb.
user_folder "$work/run" && mv "$work/run/x.pb" "$work/run/y.pb"
(cd "$work/run" && expect_refused "run -o . onto its input" "$work/run" "would overwrite" \
  "$mase" run model.onnx -i x=y.pb -o . --format pb) || failures=$((failures + 1))
# … and next to other files of the user's, it writes its output and touches nothing else.
user_folder "$work/run_beside"
before="$(digest "$work/run_beside")"
(cd "$work/run_beside" && "$mase" run model.onnx -i x=x.pb -o . --format npy > /dev/null) || fail "run -o . beside files"
after="$(cd "$work/run_beside" && rm y.npy && cd .. && digest "$work/run_beside")"
[ "$before" == "$after" ] || fail "run -o . changed the user's files"
echo "ok: run -o . beside the user's files"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every output folder check passed"
