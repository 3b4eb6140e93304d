// Every writer of the library leaves files it was not asked to write byte for byte as they were:
// a foreign file beside the target survives every write, and a foreign file at the target
// survives a write that fails (the new content only ever replaces it whole, by a rename).

#include <mase/core/tensor.hpp>
#include <mase/io/checkpoint.hpp>
#include <mase/io/draw.hpp>
#include <mase/io/npy.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/report.hpp>

#include "../support/folder_snapshot.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using mase_test::read_file;
using mase_test::snapshot;
using mase_test::write_file;

// Foreign files every test places beside its target: names a writer might be tempted to use.
const std::map<std::string, std::string> foreign = {
    {"notes.txt", "the user's notes\n"},
    {"model.json.bak", "{\"a backup\": true}"},
    {".model.json.tmp", "looks like a temporary file, but is the user's"},
};

fs::path folder_with_foreign_files(const std::string& name) {
  const fs::path dir = mase_test::fresh_folder("writers", name);
  for (const auto& [file, text] : foreign) write_file(dir / file, text);
  return dir;
}

// The folder holds exactly the foreign files, unchanged, and `written` (no temporary files).
void check_only(const fs::path& dir, std::initializer_list<std::string> written) {
  std::map<std::string, std::string> now = snapshot(dir);
  for (const auto& [file, text] : foreign) {
    INFO(file);
    CHECK(now[file] == text);
    now.erase(file);
  }
  for (const std::string& file : written) {
    INFO(file);
    CHECK(now.erase(file) == 1);
  }
  CHECK(now.empty());
}

mase::graph small_graph() {
  mase::builder b(5);
  auto x = b.input("x", {2, 4});
  auto h = b.add("fc1", mase::op::linear{.in_features = 4, .out_features = 3}, x);
  return b.output(b.add("relu", mase::op::relu{}, h));
}

}  // namespace

TEST_CASE("export_checkpoint writes only its pair and replaces it whole") {
  const fs::path dir = folder_with_foreign_files("checkpoint");
  const mase::graph g = small_graph();
  mase::export_checkpoint(g, dir / "model");
  check_only(dir, {"model.json", "model.safetensors"});
  CHECK(mase::from_checkpoint(dir / "model") == g);

  // A failed save (one name of the pair taken by a folder) changes neither file of the pair:
  // the other file, an earlier checkpoint's, is not replaced either.
  for (const std::string taken : {"other.safetensors", "other.json"}) {
    const std::string kept = taken == "other.json" ? "other.safetensors" : "other.json";
    const std::string earlier = read_file(dir / (taken == "other.json" ? "model.safetensors" : "model.json"));
    write_file(dir / kept, earlier);
    fs::create_directory(dir / taken);
    CHECK_THROWS_WITH(mase::export_checkpoint(g, dir / "other"), Catch::Contains(taken));
    CHECK(read_file(dir / kept) == earlier);
    fs::remove(dir / kept);
    fs::remove(dir / taken);
  }
  check_only(dir, {"model.json", "model.safetensors"});
}

TEST_CASE("export_checkpoint replaces only a checkpoint mase wrote, and refuses a folder for a stem") {
  const fs::path dir = folder_with_foreign_files("checkpoint_foreign");
  const mase::graph g = small_graph();
  // The user's files at either name of the pair: an ONNX model kept as model.json, a TOML config
  // kept as cfg.safetensors. Each is refused before any file is written.
  write_file(dir / "model.json", "\x08\x07\x12\x07pytorch");
  CHECK_THROWS_WITH(mase::export_checkpoint(g, dir / "model"),
                    Catch::Contains("model.json exists and is not a checkpoint mase wrote"));
  write_file(dir / "cfg.safetensors", "[passes.quantize]\nname = \"integer\"\n");
  CHECK_THROWS_WITH(mase::export_checkpoint(g, dir / "cfg"),
                    Catch::Contains("cfg.safetensors exists and is not a checkpoint mase wrote"));
  check_only(dir, {"model.json", "cfg.safetensors"});
  CHECK(read_file(dir / "model.json") == "\x08\x07\x12\x07pytorch");
  // A stem that names a folder would give hidden files (".json").
  CHECK_THROWS_WITH(mase::export_checkpoint(g, dir / ""), Catch::Contains("names a folder, not a checkpoint stem"));
  CHECK_THROWS_WITH(mase::export_checkpoint(g, dir / "."), Catch::Contains("names a folder, not a checkpoint stem"));
  check_only(dir, {"model.json", "cfg.safetensors"});
  // mase's own pair is replaced, whichever layout its .json has.
  mase::export_checkpoint(g, dir / "mine");
  CHECK_NOTHROW(mase::check_checkpoint_stem(dir / "mine"));
  mase::export_checkpoint(g, dir / "mine");
  CHECK(mase::from_checkpoint(dir / "mine") == g);
  check_only(dir, {"model.json", "cfg.safetensors", "mine.json", "mine.safetensors"});
}

TEST_CASE("draw writes only its file") {
  const fs::path dir = folder_with_foreign_files("draw");
  mase::draw(small_graph(), dir / "g.dot");
  check_only(dir, {"g.dot"});
  CHECK(read_file(dir / "g.dot").rfind("digraph", 0) == 0);

  // A drawing that cannot be made (no Graphviz on PATH) leaves the file at the target alone.
  write_file(dir / "g.svg", "<svg>the user's drawing</svg>");
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", "/nonexistent", 1);
  CHECK_THROWS_WITH(mase::draw(small_graph(), dir / "g.svg"), Catch::Contains("not on PATH"));
  ::setenv("PATH", path.c_str(), 1);
  CHECK(read_file(dir / "g.svg") == "<svg>the user's drawing</svg>");
  check_only(dir, {"g.dot", "g.svg"});
}

TEST_CASE("npy::save writes only its file and refuses a folder at the target") {
  const fs::path dir = folder_with_foreign_files("npy");
  const mase::tensor t({2, 3}, {1, 2, 3, 4, 5, 6});
  mase::npy::save(dir / "t.npy", t);
  check_only(dir, {"t.npy"});
  CHECK(mase::npy::load(dir / "t.npy") == t);

  fs::create_directory(dir / "taken.npy");
  write_file(dir / "taken.npy" / "inside.txt", "inside");
  CHECK_THROWS_WITH(mase::npy::save(dir / "taken.npy", t), Catch::Contains("taken.npy"));
  CHECK(read_file(dir / "taken.npy" / "inside.txt") == "inside");
  fs::remove_all(dir / "taken.npy");
  check_only(dir, {"t.npy"});
}

TEST_CASE("a report written to a file writes only that file") {
  const fs::path dir = folder_with_foreign_files("report");
  const auto g = small_graph() | mase::init_metadata | mase::add_common_metadata;
  g | mase::report_node_shape(dir / "shapes.txt");
  check_only(dir, {"shapes.txt"});
  CHECK(read_file(dir / "shapes.txt").find("fc1") != std::string::npos);
}
