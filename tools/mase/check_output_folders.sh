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

# expect_status NAME DIR_TO_WATCH STATUS REGEX COMMAND...: the command exits with STATUS and a
# message matching the regex, and DIR_TO_WATCH is unchanged.
expect_status() {
  local name="$1" watch="$2" expected="$3" regex="$4"
  shift 4
  local before after output status failed_before=$failures
  before="$(digest "$watch")"
  output="$("$@" 2>&1)"
  status=$?
  after="$(digest "$watch")"
  [ "$status" -eq "$expected" ] || fail "$name: exit status $status, expected $expected; output: $output"
  [[ "$output" =~ $regex ]] || fail "$name: output does not match '$regex': $output"
  [ "$before" == "$after" ] || fail "$name: the folder changed:"$'\n'"$(diff <(echo "$before") <(echo "$after"))"
  [ "$failures" -eq "$failed_before" ] || return 1
  echo "ok: $name"
}
# expect_refused NAME DIR_TO_WATCH REGEX COMMAND...: an error (exit 1), the folder unchanged.
expect_refused() {
  local name="$1" watch="$2" regex="$3"
  shift 3
  expect_status "$name" "$watch" 1 "$regex" "$@"
}

# The digest of the files in DIR that mase did not write (not the marker, nor a file it lists).
user_digest() {
  local marker="$1/.mase-project"
  digest "$1" | while read -r sum file; do
    [ "$file" == "./.mase-project" ] && continue
    [ -f "$marker" ] && grep -qxF "file ${file#./}" "$marker" && continue
    echo "$sum $file"
  done | LC_ALL=C sort
}

# expect_kept NAME DIR COMMAND...: the command succeeds, and every file of DIR that mase did not
# write is byte for byte what it was (the command may add and replace its own).
expect_kept() {
  local name="$1" dir="$2"
  shift 2
  local before output missing
  before="$(user_digest "$dir")"
  output="$("$@" 2>&1)" || { fail "$name: the command failed: $output"; return 1; }
  missing="$(LC_ALL=C comm -23 <(echo "$before") <(digest "$dir" | sed 's/  / /' | LC_ALL=C sort))"
  [ -z "$missing" ] || { fail "$name: files of the user's changed or went missing:"$'\n'"$missing"; return 1; }
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

# --- mase search: --out is new, empty, or a search mase wrote; no input lies among its outputs ---
search_space() {  # a small search over the MLP: agreement against the float model, no labels
  cp "$(dirname "$0")/../../tests/fixtures/search/mlp_agreement.toml" "$1"
}
search_in() { "$mase" search "$model" -d x="$input" -j 1 "$@"; }
refused_search="is not empty and is not a folder mase wrote"

# The search's own config as --out/best.toml (the original loss: it replaced its config).
mkdir -p "$work/search_same" && search_space "$work/search_same/best.toml"
expect_refused "search --config OUT/best.toml --out OUT" "$work/search_same" "is one of mase search's inputs" \
  search_in -c "$work/search_same/best.toml" -o "$work/search_same"

# A folder of the user's holding files named as a search's outputs, without a journal.
mkdir -p "$work/search_user/pareto" && search_space "$work/search_user/space.toml"
echo "the user's best" > "$work/search_user/best.toml" && echo "a,b" > "$work/search_user/pareto.csv"
echo "the user's trial" > "$work/search_user/pareto/trial_99.toml"
expect_refused "search --out A_FOLDER_OF_THE_USERS" "$work/search_user" "$refused_search" \
  search_in -c "$work/search_user/space.toml" -o "$work/search_user"

# A search folder mase wrote, with files the user added beside and inside its outputs' folder: a
# second search there keeps them; its config and data kept inside the folder stay untouched.
mkdir -p "$work/search_mine" && search_space "$work/search_mine.toml"
search_in -c "$work/search_mine.toml" -o "$work/search_mine" > /dev/null 2>&1 || fail "search into a new folder"
echo "the user's notes" > "$work/search_mine/notes.txt" && echo "mine" > "$work/search_mine/pareto/trial_mine.toml"
cp "$work/search_mine.toml" "$work/search_mine/space.toml" && mkdir -p "$work/search_mine/data" &&
  cp "$input" "$work/search_mine/data/x.pb"
expect_kept "search again into its folder, beside the user's files" "$work/search_mine" \
  "$mase" search "$model" -d x="$work/search_mine/data/x.pb" -c "$work/search_mine/space.toml" -n 6 \
  -o "$work/search_mine"
# … but an input among the files it writes there is refused (a search config saved over best.toml).
cp "$work/search_mine.toml" "$work/search_mine/best.toml"
expect_refused "search --config OUT/best.toml (once mase's) --out OUT" "$work/search_mine" "is one of mase search's inputs" \
  search_in -c "$work/search_mine/best.toml" -o "$work/search_mine"
# A hardware project is not a search folder, nor the reverse.
expect_refused "search --out A_HARDWARE_PROJECT" "$work/real" "holds a mase verilog project" \
  search_in -c "$work/search_mine.toml" -o "$work/real"
expect_refused "emit-verilog --out A_SEARCH_FOLDER" "$work/search_mine" "holds a mase search project" \
  "$mase" emit-verilog "$model" -c "$config" -n 1 -o "$work/search_mine"

# --- mase quantize: the checkpoint never lands on an input or a file mase did not write ---
user_folder "$work/quantize"
cp "$config" "$work/quantize/cfg.json" && cp "$model" "$work/quantize/m.json"
(cd "$work/quantize" && expect_refused "quantize -c cfg.json -o cfg" "$work/quantize" "would overwrite" \
  "$mase" quantize model.onnx -c cfg.json -o cfg) || failures=$((failures + 1))
(cd "$work/quantize" && expect_refused "quantize m.json -o m" "$work/quantize" "would overwrite" \
  "$mase" quantize m.json -c q.toml -o m) || failures=$((failures + 1))
cp "$work/quantize/notes.txt" "$work/quantize/notes.json"
(cd "$work/quantize" && expect_refused "quantize -o notes (a file of the user's named notes.json)" "$work/quantize" \
  "notes.json exists and is not a checkpoint mase wrote" \
  "$mase" quantize model.onnx -c q.toml -o notes) || failures=$((failures + 1))
(cd "$work/quantize" && expect_status "quantize -o FOLDER/" "$work/quantize" 2 "takes a checkpoint stem" \
  "$mase" quantize model.onnx -c q.toml -o sub/) || failures=$((failures + 1))
(cd "$work/quantize" && expect_status "quantize -o ''" "$work/quantize" 2 "takes a checkpoint stem" \
  "$mase" quantize model.onnx -c q.toml -o "") || failures=$((failures + 1))
expect_kept "quantize twice onto its own checkpoint" "$work/quantize" \
  bash -c "cd \"$work/quantize\" && \"$mase\" quantize model.onnx -c q.toml -o ckpt && \"$mase\" quantize model.onnx -c q.toml -o ckpt"

# --- mase draw: the drawing never replaces the model ---
user_folder "$work/draw" && cp "$model" "$work/draw/model.dot"
(cd "$work/draw" && expect_refused "draw model.dot -o model.dot" "$work/draw" "would overwrite" \
  "$mase" draw model.dot -o model.dot) || failures=$((failures + 1))

# --- emit-verilog: its config and stimulus inside the project it replaces stay untouched ---
"$mase" emit-verilog "$model" -c "$config" -n 1 -o "$work/emit_inputs" > /dev/null 2>&1 || fail "emit-verilog"
cp "$config" "$work/emit_inputs/q.toml" && cp "$input" "$work/emit_inputs/x.pb"
expect_kept "emit-verilog -c PROJECT/q.toml -i x=PROJECT/x.pb -o PROJECT" "$work/emit_inputs" \
  "$mase" emit-verilog "$model" --input-shape x=1,784 -c "$work/emit_inputs/q.toml" -i x="$work/emit_inputs/x.pb" \
  -o "$work/emit_inputs"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every output folder check passed"
