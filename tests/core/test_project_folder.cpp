// The rules of core/project_folder.hpp: mase writes a project only into a new or empty folder or
// one it wrote before, replaces only what the previous manifest lists, and leaves every file it
// did not write byte for byte as it was, whatever fails.

#include <mase/core/project_folder.hpp>

#include "../support/folder_snapshot.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

fs::path fresh_folder(const std::string& name) { return mase_test::fresh_folder("project_folder", name); }
using mase_test::read_file;
using mase_test::snapshot;
using mase_test::write_file;

// Writes a small project: `files` relative paths with their text.
mase::project_manifest emit(const fs::path& dir, const std::map<std::string, std::string>& files) {
  mase::project_writer out(dir, "test", "emit_test");
  for (const auto& [name, text] : files) write_file(out.staging() / name, text);
  return out.publish({"sim"});
}

}  // namespace

TEST_CASE("a project goes into a new folder, with a marker listing what mase wrote") {
  const fs::path dir = fresh_folder("new") / "a" / "b";
  const mase::project_manifest m = emit(dir, {{"rtl/top.sv", "module top; endmodule\n"}, {"tb/tb.sv", "tb"}});
  CHECK(m.files == std::set<std::string>{"rtl/top.sv", "tb/tb.sv"});
  CHECK(m.folders == std::set<std::string>{"rtl", "tb"});
  CHECK(m.work_folders == std::set<std::string>{"sim"});
  CHECK(read_file(dir / "rtl/top.sv") == "module top; endmodule\n");
  const auto recorded = mase::read_project_manifest(dir);
  REQUIRE(recorded.has_value());
  CHECK(*recorded == m);
  CHECK(read_file(dir / ".mase-project").rfind("mase-project 1\nmase 0.1.0\nkind test\n", 0) == 0);
  // Nothing but the project: no staging folder left behind.
  CHECK(snapshot(dir).size() == 5);  // rtl/, rtl/top.sv, tb/, tb/tb.sv, .mase-project
}

TEST_CASE("a project goes into an empty folder, and into a link to one") {
  const fs::path root = fresh_folder("empty");
  fs::create_directory(root / "out");
  emit(root / "out", {{"x.txt", "x"}});
  CHECK(read_file(root / "out/x.txt") == "x");

  fs::create_directory(root / "real");
  fs::create_directory_symlink("real", root / "link");
  emit(root / "link", {{"y.txt", "y"}});
  CHECK(fs::is_symlink(root / "link"));  // the link stays, the project lands where it points
  CHECK(read_file(root / "real/y.txt") == "y");
}

TEST_CASE("a folder holding files mase did not write is refused and left untouched") {
  const fs::path dir = fresh_folder("foreign");
  write_file(dir / "model.onnx", "onnx bytes");
  write_file(dir / "q.toml", "[default]\n");
  write_file(dir / "notes.txt", "my notes");
  write_file(dir / "src/top.sv", "my own RTL");
  const auto before = snapshot(dir);
  CHECK_THROWS_WITH(emit(dir, {{"rtl/top.sv", "generated"}}),
                    Catch::Contains("is not empty and is not a project mase wrote") &&
                        Catch::Contains("model.onnx, notes.txt, q.toml and 1 more") &&
                        Catch::Contains("Nothing was changed"));
  CHECK(snapshot(dir) == before);
}

TEST_CASE("the current folder, its parent and the home folder are refused when they hold anything") {
  const fs::path dir = fresh_folder("relative");
  write_file(dir / "inner/model.onnx", "model");
  write_file(dir / "notes.txt", "notes");
  const auto before = snapshot(dir);
  const fs::path previous = fs::current_path();
  fs::current_path(dir / "inner");
  CHECK_THROWS_WITH(emit(".", {{"a", "a"}}), Catch::Contains("model.onnx"));
  CHECK_THROWS_WITH(emit("..", {{"a", "a"}}), Catch::Contains("inner, notes.txt"));
  fs::current_path(previous);
  CHECK(snapshot(dir) == before);
}

TEST_CASE("a file or a link to a file at the target is refused") {
  const fs::path dir = fresh_folder("file_target");
  write_file(dir / "out", "a file, not a folder");
  fs::create_symlink("out", dir / "link");
  const auto before = snapshot(dir);
  CHECK_THROWS_WITH(emit(dir / "out", {{"a", "a"}}), Catch::Contains("exists and is not a folder"));
  CHECK_THROWS_WITH(emit(dir / "link", {{"a", "a"}}), Catch::Contains("exists and is not a folder"));
  CHECK(snapshot(dir) == before);
}

TEST_CASE("replacing a project removes what its manifest lists, and nothing a user added") {
  const fs::path dir = fresh_folder("replace");
  emit(dir, {{"rtl/top.sv", "v1"}, {"rtl/old_rom.hex", "00"}, {"gone/only_v1.txt", "v1"}});
  write_file(dir / "notes.txt", "user notes");       // beside the project
  write_file(dir / "rtl/my_wrapper.sv", "user RTL");  // inside one of its folders
  write_file(dir / "sim/verilator.log", "a log");     // in its work folder: mase's
  emit(dir, {{"rtl/top.sv", "v2"}, {"tb/tb.sv", "tb v2"}});
  CHECK(read_file(dir / "rtl/top.sv") == "v2");
  CHECK(read_file(dir / "tb/tb.sv") == "tb v2");
  CHECK_FALSE(fs::exists(dir / "rtl/old_rom.hex"));
  CHECK_FALSE(fs::exists(dir / "gone"));  // emptied, so removed
  CHECK_FALSE(fs::exists(dir / "sim"));   // the work folder goes with the old project
  CHECK(read_file(dir / "notes.txt") == "user notes");
  CHECK(read_file(dir / "rtl/my_wrapper.sv") == "user RTL");
  CHECK(mase::read_project_manifest(dir)->files == std::set<std::string>{"rtl/top.sv", "tb/tb.sv"});
}

TEST_CASE("a user's file where the new project puts one stops the swap before anything changes") {
  const fs::path dir = fresh_folder("in_the_way");
  emit(dir, {{"rtl/top.sv", "v1"}});
  write_file(dir / "rtl/extra.sv", "the user's extra.sv");
  const auto before = snapshot(dir);
  CHECK_THROWS_WITH(emit(dir, {{"rtl/top.sv", "v2"}, {"rtl/extra.sv", "generated"}}),
                    Catch::Contains("rtl/extra.sv") && Catch::Contains("nothing was changed"));
  CHECK(snapshot(dir) == before);
}

TEST_CASE("removal never goes through a link the user put in place of a project folder") {
  const fs::path root = fresh_folder("links");
  const fs::path dir = root / "project";
  emit(dir, {{"rtl/top.sv", "v1"}});
  write_file(root / "my_sources/top.sv", "precious");
  fs::remove_all(dir / "rtl");
  fs::create_directory_symlink("../my_sources", dir / "rtl");
  CHECK_THROWS_WITH(emit(dir, {{"rtl/top.sv", "v2"}}), Catch::Contains("rtl"));
  CHECK(read_file(root / "my_sources/top.sv") == "precious");
  CHECK(fs::is_symlink(dir / "rtl"));
}

TEST_CASE("a failure before publishing leaves the folder as it was") {
  const fs::path root = fresh_folder("failure");
  {
    mase::project_writer out(root / "new/deep", "test", "emit_test");
    write_file(out.staging() / "half.sv", "half");
  }  // destroyed without publish(): an exception while writing
  CHECK_FALSE(fs::exists(root / "new"));  // the folders it created are gone again

  emit(root / "old", {{"a.txt", "v1"}});
  const auto before = snapshot(root / "old");
  {
    mase::project_writer out(root / "old", "test", "emit_test");
    write_file(out.staging() / "a.txt", "v2");
  }
  CHECK(snapshot(root / "old") == before);
}

TEST_CASE("a marker that lists paths outside the folder, or of another kind, is refused") {
  const fs::path root = fresh_folder("bad_marker");
  write_file(root / "victim.txt", "keep me");
  write_file(root / "p/.mase-project", "mase-project 1\nkind test\nfile ../victim.txt\n");
  CHECK_THROWS_WITH(emit(root / "p", {{"a", "a"}}), Catch::Contains("not a path inside the folder"));
  write_file(root / "q/.mase-project", "mase-project 1\nkind test\nfile /etc/passwd\n");
  CHECK_THROWS_WITH(emit(root / "q", {{"a", "a"}}), Catch::Contains("not a path inside the folder"));
  write_file(root / "r/.mase-project", "mase-project 1\nkind other\n");
  CHECK_THROWS_WITH(emit(root / "r", {{"a", "a"}}), Catch::Contains("holds a mase other project"));
  write_file(root / "s/.mase-project", "not a marker\n");
  CHECK_THROWS_WITH(emit(root / "s", {{"a", "a"}}), Catch::Contains("first line"));
  CHECK(read_file(root / "victim.txt") == "keep me");
}

TEST_CASE("an interrupted swap leaves a marker the next emission cleans up") {
  const fs::path dir = fresh_folder("interrupted");
  emit(dir, {{"a.txt", "v1"}});
  // What a process killed during the swap leaves: a staging folder listed in the marker.
  write_file(dir / ".mase-staging-dead01/a.txt", "v2");
  write_file(dir / ".mase-project", "mase-project 1\nkind test\nfile a.txt\nwork .mase-staging-dead01\nwork sim\n");
  emit(dir, {{"a.txt", "v3"}});
  CHECK(read_file(dir / "a.txt") == "v3");
  CHECK_FALSE(fs::exists(dir / ".mase-staging-dead01"));
}

TEST_CASE("require_project accepts only a marked folder of the right kind") {
  const fs::path dir = fresh_folder("require");
  CHECK_THROWS_WITH(mase::require_project(dir, "test", "simulate"),
                    Catch::Contains("simulate:") && Catch::Contains("is not a test project written by mase"));
  emit(dir, {{"a", "a"}});
  CHECK_NOTHROW(mase::require_project(dir, "test", "simulate"));
  CHECK_THROWS(mase::require_project(dir, "verilog", "simulate"));
}

TEST_CASE("a folder mase may not write into is an error that changes nothing") {
  // Root ignores permission bits, so as root the folder is made unwritable for everyone by
  // pointing inside /proc, a file system nobody can create files in.
  if (::geteuid() == 0) {
    CHECK_THROWS_WITH(emit("/proc/self/mase_project", {{"a", "a"}}), Catch::Contains("emit_test: cannot"));
    return;
  }
  const fs::path dir = fresh_folder("read_only");
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  CHECK_THROWS_WITH(emit(dir, {{"a", "a"}}), Catch::Contains("cannot write into"));
  fs::permissions(dir, fs::perms::owner_all);
  CHECK(fs::is_empty(dir));
}

TEST_CASE("an output folder filled entry by entry is new, empty or its own, and only listed entries are replaced") {
  const fs::path dir = fresh_folder("output_folder");
  {
    mase::output_folder out(dir / "search", "search", "search_test");
    const fs::path journal = out.claim_file("trials.jsonl");
    write_file(journal, "{}\n");
    out.write("pareto/trial_1.toml", "one");
    out.write("best.toml", "best");
    CHECK(out.owns("pareto"));
    CHECK(out.owns("pareto/trial_1.toml"));
  }
  const std::optional<mase::project_manifest> m = mase::read_project_manifest(dir / "search");
  REQUIRE(m);
  CHECK(m->kind == "search");
  CHECK(m->files == std::set<std::string>{"best.toml", "pareto/trial_1.toml", "trials.jsonl"});
  CHECK(m->folders == std::set<std::string>{"pareto"});

  // The user's files beside and inside mase's: a second run keeps them, and refuses to write
  // over one.
  write_file(dir / "search" / "notes.txt", "the user's notes");
  write_file(dir / "search" / "pareto" / "mine.toml", "the user's config");
  {
    mase::output_folder out(dir / "search", "search", "search_test");
    out.write("best.toml", "better");
    out.remove("pareto/trial_1.toml");
    out.remove("pareto/mine.toml");  // not mase's: left alone
    CHECK_THROWS_WITH(out.write("notes.txt", "mase's"), Catch::Contains("holds something mase did not write"));
    CHECK_THROWS_WITH(out.claim_file("pareto/mine.toml"), Catch::Contains("holds something mase did not write"));
  }
  CHECK(read_file(dir / "search" / "notes.txt") == "the user's notes");
  CHECK(read_file(dir / "search" / "pareto" / "mine.toml") == "the user's config");
  CHECK(read_file(dir / "search" / "best.toml") == "better");
  CHECK(!fs::exists(dir / "search" / "pareto" / "trial_1.toml"));

  // A folder of the user's, or another kind's, is refused and left as it was.
  write_file(dir / "users" / "best.toml", "the user's best");
  const auto before = snapshot(dir / "users");
  CHECK_THROWS_WITH(mase::output_folder(dir / "users", "search", "search_test"),
                    Catch::Contains("is not empty and is not a folder mase wrote"));
  CHECK(snapshot(dir / "users") == before);
  CHECK_THROWS_WITH(mase::output_folder(dir / "search", "verilog", "emit_test"),
                    Catch::Contains("holds a mase search project, not a verilog folder"));
  // An empty folder is taken.
  fs::create_directories(dir / "empty");
  CHECK_NOTHROW(mase::output_folder(dir / "empty", "search", "search_test"));
  CHECK(fs::exists(dir / "empty" / mase::project_marker_name));
}
