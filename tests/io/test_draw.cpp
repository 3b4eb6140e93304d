#include <mase/io/draw.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// x -> fc1 -> act, act + x -> sum -> output; fc1 has a recorded fixed-point result.
mase::graph small_graph() {
  mase::graph g;
  const auto x = g.add("x", mase::op::placeholder{.shape = {1, 4}});
  const auto fc1 = g.add("fc1", mase::op::linear{.in_features = 4, .out_features = 4, .bias = false}, {x});
  const auto act = g.add("act", mase::op::relu{}, {fc1});
  const auto sum = g.add("sum", mase::op::add{}, {act, x});
  g.add("output", mase::op::output{}, {sum});
  g[fc1].meta.common.results["data_out_0"] =
      mase::tensor_meta{.shape = {1, 4}, .precision = mase::fixed_fmt{.width = 16, .frac = 7}, .value = {}};
  return g;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh folder, removed at the end of the test.
struct scratch_dir {
  fs::path path = fs::temp_directory_path() / ("mase_test_draw_" + std::to_string(::getpid()));
  scratch_dir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~scratch_dir() { fs::remove_all(path); }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), {})); }
};

// Sets PATH for one scope and puts the old value back.
struct path_override {
  std::optional<std::string> saved;
  explicit path_override(const std::string& value) {
    if (const char* old = std::getenv("PATH")) saved = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~path_override() {
    if (saved) ::setenv("PATH", saved->c_str(), 1);
    else ::unsetenv("PATH");
  }
};

}  // namespace

TEST_CASE("to_dot: one quoted node per graph node with name, op and escaped results, one edge per input") {
  const mase::graph g = small_graph();
  const std::string dot = mase::to_dot(g);
  CHECK(dot.rfind("digraph mase_graph {\n", 0) == 0);
  CHECK(dot.size() >= 2);
  CHECK(dot.substr(dot.size() - 2) == "}\n");

  CHECK(count(dot, "[label=") == 5);
  CHECK(count(dot, "  \"x\" [label=\"{x|placeholder(shape=[1, 4])}\"") == 1);
  // '<' and '>' of the format would open a record port: escaped.
  CHECK(count(dot, "  \"fc1\" [label=\"{fc1|linear(in_features=4, out_features=4, bias=false)|data_out_0: "
                   "fixed\\<16,7\\> [1, 4]}\"") == 1);
  CHECK(count(dot, "  \"act\" [label=\"{act|relu(inplace=false)}\"") == 1);
  CHECK(count(dot, "  \"sum\" [label=\"{sum|add()}\"") == 1);
  CHECK(count(dot, "  \"output\" [label=\"{output|output()}\"") == 1);

  CHECK(count(dot, " -> ") == 5);
  for (const char* edge : {"\"x\" -> \"fc1\";\n", "\"fc1\" -> \"act\";\n", "\"act\" -> \"sum\";\n", "\"x\" -> \"sum\";\n",
                           "\"sum\" -> \"output\";\n"})
    CHECK(count(dot, edge) == 1);
}

TEST_CASE("to_dot with a respelling: each op and result shape text goes through it, and is escaped after") {
  const mase::graph g = small_graph();
  std::vector<std::string> seen;
  const std::string dot = mase::to_dot(g, [&](const mase::node& n, std::string_view part, std::string text) {
    seen.push_back(fmt::format("{} {} {}", n.name, part, text));
    return n.name == "x" || part == "data_out_0" ? "<" + text + ">" : text;
  });
  CHECK(seen == std::vector<std::string>{"x op placeholder(shape=[1, 4])",
                                         "fc1 op linear(in_features=4, out_features=4, bias=false)",
                                         "fc1 data_out_0 [1, 4]", "act op relu(inplace=false)", "sum op add()",
                                         "output op output()"});
  CHECK(count(dot, "  \"x\" [label=\"{x|\\<placeholder(shape=[1, 4])\\>}\"") == 1);
  CHECK(count(dot, "|data_out_0: fixed\\<16,7\\> \\<[1, 4]\\>}\"") == 1);
  // Without one, the texts as they are.
  CHECK(mase::to_dot(g, {}) == mase::to_dot(g));
}

TEST_CASE("record label escaping covers DOT quoting and record structure characters") {
  CHECK(mase::detail::escape_dot_record("plain text [1, 2]") == "plain text [1, 2]");
  CHECK(mase::detail::escape_dot_record("a\"b\\c{d}e|f<g>h") == "a\\\"b\\\\c\\{d\\}e\\|f\\<g\\>h");
  CHECK(mase::detail::quote_dot_id("fc\"1\\") == "\"fc\\\"1\\\\\"");
}

TEST_CASE("draw to .dot writes the DOT text and leaves no temporary file") {
  const scratch_dir dir;
  const mase::graph g = small_graph();
  const fs::path file = dir.path / "model.dot";
  mase::draw(g, file);
  CHECK(read(file) == mase::to_dot(g));
  CHECK(dir.entries() == 1);
  // Drawing again replaces the file.
  mase::graph other;
  other.add("only", mase::op::placeholder{.shape = {2}});
  mase::draw(other, file);
  CHECK(read(file) == mase::to_dot(other));
  CHECK(dir.entries() == 1);
}

TEST_CASE("draw rejects other extensions, naming the supported ones") {
  const scratch_dir dir;
  const mase::graph g = small_graph();
  for (const char* name : {"model.png", "model", "model.DOTX"}) {
    CHECK_THROWS_WITH(mase::draw(g, dir.path / name),
                      Catch::Contains(name) && Catch::Contains(".dot") && Catch::Contains(".svg"));
  }
  CHECK(dir.entries() == 0);
  CHECK_THROWS_AS(mase::draw(g, dir.path / "missing_folder" / "model.dot"), mase::error);
}

TEST_CASE("draw to .svg without dot on PATH says how to install it") {
  const scratch_dir dir;
  const path_override no_dot((dir.path / "empty").string() + ":/nonexistent");
  CHECK_THROWS_WITH(mase::draw(small_graph(), dir.path / "model.svg"),
                    Catch::Contains("install graphviz (apt-get install graphviz) or draw to a .dot file"));
  CHECK(dir.entries() == 0);
}

TEST_CASE("a failing dot is reported with its exit status and error output, and no file is left") {
  const scratch_dir dir;
  const fs::path bin = dir.path / "bin";
  fs::create_directories(bin);
  {
    std::ofstream script(bin / "dot");
    script << "#!/bin/sh\necho \"Error: syntax error in line 1\" >&2\nexit 3\n";
  }
  fs::permissions(bin / "dot", fs::perms::owner_all);
  const path_override fake_dot(bin.string());
  CHECK_THROWS_WITH(mase::draw(small_graph(), dir.path / "model.svg"),
                    Catch::Contains("exit status 3") && Catch::Contains("Error: syntax error in line 1") &&
                        Catch::Contains("model.svg"));
  CHECK(dir.entries() == 1);  // only bin/
}

TEST_CASE("draw to .svg renders with Graphviz when it is installed") {
  const auto dot = mase::detail::find_program("dot");
  if (!dot) {
    WARN("Graphviz's dot is not on PATH; SVG rendering not tested (apt-get install graphviz)");
    return;
  }
  const scratch_dir dir;
  const mase::graph g = small_graph();
  const fs::path file = dir.path / "model.svg";
  mase::draw(g, file);
  CHECK(dir.entries() == 1);
  const std::string svg = read(file);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(count(svg, "<svg") == 1);
  CHECK(count(svg, "</svg>") == 1);
  for (const char* name : {"x", "fc1", "act", "sum", "output"}) {
    CHECK(count(svg, std::string("<title>") + name + "</title>") == 1);
    CHECK(count(svg, std::string(">") + name + "</text>") == 1);
  }
  // An edge's title is "from&#45;&gt;to".
  CHECK(count(svg, "<title>x&#45;&gt;sum</title>") == 1);
  // The escaped label fields come out as the original text.
  CHECK(count(svg, ">data_out_0: fixed&lt;16,7&gt; [1, 4]</text>") == 1);
  CHECK(count(svg, ">linear(in_features=4, out_features=4, bias=false)</text>") == 1);
}

TEST_CASE("Graphviz reads escaped record fields back as the original text") {
  const auto dot = mase::detail::find_program("dot");
  if (!dot) {
    WARN("Graphviz's dot is not on PATH; escaping not checked against it");
    return;
  }
  const scratch_dir dir;
  const fs::path input = dir.path / "in.dot";
  const fs::path output = dir.path / "out.svg";
  const fs::path errors = dir.path / "err.txt";
  {
    std::ofstream text(input);
    text << "digraph t {\n  node [shape=record];\n  \"n\" [label=\"{"
         << mase::detail::escape_dot_record("q\"t") << "|" << mase::detail::escape_dot_record("b\\s\\n") << "|"
         << mase::detail::escape_dot_record("{x}|y") << "|" << mase::detail::escape_dot_record("fixed<8,3>")
         << "}\"];\n}\n";
  }
  { std::ofstream touch(errors); }
  const int status = mase::detail::run_program(*dot, {"-Tsvg", "-o", output.string(), input.string()}, errors, output);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::string svg = read(output);
  CHECK(count(svg, ">q&quot;t</text>") == 1);
  CHECK(count(svg, ">b\\s\\n</text>") == 1);
  CHECK(count(svg, ">{x}|y</text>") == 1);
  CHECK(count(svg, ">fixed&lt;8,3&gt;</text>") == 1);
}
