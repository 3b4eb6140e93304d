// The float evaluator against PyTorch. tests/fixtures/ops/<op>.json, written by
// tests/fixtures/make_op_fixtures.py with PyTorch's own functional ops, holds for every op cases
// covering its attributes: inputs, parameters and PyTorch's float32 results. Each case becomes a
// graph (placeholders x0, x1, …, the op node, one getitem per result of a multi-result op, the
// output) run by mase::evaluator; every result element must satisfy |y − r| ≤ atol + rtol·|r|
// with the case's tolerances, which the script derives from the op's rounding error.

#include <mase/eval/evaluator.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/op_traits.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path fixture_dir = fs::path(MASE_FIXTURE_DIR) / "ops";

bool has_computation(std::string_view op) { return op != "placeholder" && op != "constant" && op != "output"; }

struct fixture_file {
  fs::path path;
  json doc;
};

// Every fixture file, parsed once (Catch2 reruns the test case once per section).
const std::vector<fixture_file>& fixture_files() {
  static const std::vector<fixture_file> files = [] {
    std::vector<fixture_file> out;
    mase::require(fs::is_directory(fixture_dir),
                  fmt::format("no fixture directory {}; generate it with /usr/bin/python3 "
                              "tests/fixtures/make_op_fixtures.py",
                              fixture_dir.string()));
    for (const fs::directory_entry& e : fs::directory_iterator(fixture_dir))
      if (e.is_regular_file() && e.path().extension() == ".json") {
        std::ifstream in(e.path());
        mase::require(in.good(), fmt::format("cannot open {}", e.path().string()));
        try {
          out.push_back({e.path(), json::parse(in)});
        } catch (const json::exception& ex) {
          throw mase::error(fmt::format("{}: not valid JSON: {}", e.path().string(), ex.what()));
        }
      }
    std::sort(out.begin(), out.end(), [](const fixture_file& a, const fixture_file& b) { return a.path < b.path; });
    return out;
  }();
  return files;
}

std::int64_t integer_of(const json& v, const std::string& where) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    mase::require(u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
                  fmt::format("{}: {} does not fit in int64", where, u));
    return static_cast<std::int64_t>(u);
  }
  mase::require(v.is_number_integer(), fmt::format("{}: expected an integer, got {}", where, v.dump()));
  return v.get<std::int64_t>();
}

mase::shape shape_of(const json& j, const std::string& where) {
  mase::require(j.is_array() && j.size() <= static_cast<std::size_t>(mase::shape::max_rank),
                fmt::format("{}: \"shape\" must be a list of at most {} integers", where, mase::shape::max_rank));
  mase::shape s;
  for (const json& d : j) s.push_back(integer_of(d, where + ".shape"));
  return s;
}

mase::tensor tensor_of(const json& j, const std::string& where) {
  mase::require(j.is_object() && j.contains("shape") && j.contains("data") && j.at("data").is_array(),
                fmt::format("{}: a tensor is {{\"shape\": [...], \"data\": [...]}}", where));
  const mase::shape s = shape_of(j.at("shape"), where);
  std::vector<float> values;
  values.reserve(j.at("data").size());
  for (const json& v : j.at("data")) {
    mase::require(v.is_number(), fmt::format("{}: data holds a non-number {}", where, v.dump()));
    // Nine significant digits: the nearest double rounds to exactly the float PyTorch wrote.
    values.push_back(static_cast<float>(v.get<double>()));
  }
  mase::require(static_cast<std::int64_t>(values.size()) == s.numel(),
                fmt::format("{}: shape {} holds {} values, data has {}", where, mase::to_string(s), s.numel(),
                            values.size()));
  return mase::tensor(s, std::move(values));
}

mase::attribute_value attribute_of(const json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_float()) return v.get<double>();
  if (v.is_number()) return integer_of(v, where);
  if (v.is_array()) return shape_of(v, where);
  throw mase::error(fmt::format("{}: an attribute is a bool, a number or a list of integers, not {}", where, v.dump()));
}

mase::ordered_map<mase::attribute_value> attributes_of(const json& j, const std::string& where) {
  mase::require(j.is_object(), fmt::format("{}: \"attributes\" must be an object", where));
  mase::ordered_map<mase::attribute_value> out;
  for (const auto& [name, value] : j.items()) out.insert_or_assign(name, attribute_of(value, where + "." + name));
  return out;
}

struct mismatch {
  std::size_t index;
  float got;
  float want;
  double allowed;
};

std::string describe(const std::vector<mismatch>& bad, std::size_t total) {
  std::string text = fmt::format("{} of {} elements outside the tolerance; the first:", bad.size(), total);
  for (std::size_t i = 0; i < bad.size() && i < 8; ++i)
    text += fmt::format("\n  [{}] mase {:.9g}, PyTorch {:.9g}, |difference| {:.3g}, allowed {:.3g}", bad[i].index,
                        bad[i].got, bad[i].want, std::fabs(static_cast<double>(bad[i].got) - bad[i].want),
                        bad[i].allowed);
  return text;
}

// Builds the case's graph, runs it, and checks every result.
void run_case(const std::string& op, const json& c, const std::string& where) {
  mase::graph g;
  mase::ordered_map<mase::tensor> inputs;
  std::vector<mase::node_id> placeholders;
  const json& input_list = c.at("inputs");
  for (std::size_t i = 0; i < input_list.size(); ++i) {
    const std::string name = fmt::format("x{}", i);
    mase::tensor x = tensor_of(input_list[i], fmt::format("{}: inputs[{}]", where, i));
    placeholders.push_back(g.add(name, mase::op::placeholder{x.shape()}));
    inputs.insert_or_assign(name, std::move(x));
  }
  std::vector<mase::node_id> op_inputs = placeholders;
  if (c.contains("producer")) {
    // The node the op reads (getitem reads the results of a split).
    const json& p = c.at("producer");
    const std::string producer_op = p.at("op").get<std::string>();
    op_inputs = {g.add("producer",
                       mase::make_op(producer_op, attributes_of(p.at("attributes"), where + ": producer"), where),
                       placeholders)};
  }
  const mase::node_id n = g.add("node", mase::make_op(op, attributes_of(c.at("attributes"), where), where), op_inputs);
  for (const auto& [role, value] : c.at("parameters").items())
    g.set_parameter(n, role, tensor_of(value, fmt::format("{}: parameters.{}", where, role)));

  const json& expected = c.at("outputs");
  std::vector<mase::node_id> results{n};
  if (expected.size() > 1) {
    results.clear();
    for (std::size_t i = 0; i < expected.size(); ++i)
      results.push_back(g.add(fmt::format("result{}", i), mase::op::getitem{static_cast<std::int64_t>(i)}, {n}));
  }
  g.add("output", mase::op::output{}, results);

  const double rtol = c.at("rtol").get<double>();
  const double atol = c.at("atol").get<double>();
  std::vector<mase::tensor> want;
  for (std::size_t k = 0; k < expected.size(); ++k)
    want.push_back(tensor_of(expected[k], fmt::format("{}: outputs[{}]", where, k)));

  mase::evaluator ev(g);
  // Twice: the second run reuses the result buffers, which kernels must overwrite, not add to.
  for (int run = 1; run <= 2; ++run) {
    INFO("run " << run << " of the evaluator");
    const std::span<const mase::tensor> y = ev.run(inputs);
    REQUIRE(y.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      INFO(fmt::format("{}: output {}: mase shape {}, PyTorch shape {}", where, k, mase::to_string(y[k].shape()),
                       mase::to_string(want[k].shape())));
      REQUIRE(y[k].shape() == want[k].shape());
      std::vector<mismatch> bad;
      for (std::size_t i = 0; i < want[k].size(); ++i) {
        const float got = y[k].data()[i];
        const float ref = want[k].data()[i];
        const double allowed = atol + rtol * std::fabs(static_cast<double>(ref));
        // Written so that a NaN from mase fails.
        if (!(std::fabs(static_cast<double>(got) - ref) <= allowed)) bad.push_back({i, got, ref, allowed});
      }
      INFO(describe(bad, want[k].size()));
      CHECK(bad.empty());
    }
  }
}

}  // namespace

TEST_CASE("every float kernel matches PyTorch on the op fixtures", "[eval][torch]") {
  for (const fixture_file& f : fixture_files()) {
    const std::string op = f.doc.at("op").get<std::string>();
    const json& cases = f.doc.at("cases");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const json& c = cases[i];
      const std::string name = c.at("name").get<std::string>();
      DYNAMIC_SECTION(op << "/" << name) {
        const std::string where = fmt::format("{} case {}", f.path.filename().string(), name);
        INFO(where << " (" << c.value("note", std::string()) << ")");
        try {
          run_case(op, c, where);
        } catch (const std::exception& e) {
          FAIL_CHECK(e.what());  // the INFO above names the file and case
        }
      }
    }
  }
}

TEST_CASE("every op of the vocabulary has a PyTorch fixture", "[eval][torch]") {
  std::vector<std::string> covered;
  for (const fixture_file& f : fixture_files()) {
    const std::string file = f.path.filename().string();
    INFO(file);
    const std::string op = f.doc.at("op").get<std::string>();
    CHECK(op == f.path.stem().string());  // the test names cases by the file's op
    const auto& names = mase::op_names();
    const bool in_vocabulary = std::find(names.begin(), names.end(), op) != names.end();
    CHECK(in_vocabulary);  // else the op left the vocabulary: rerun the script, which deletes the file
    CHECK(f.doc.at("cases").is_array());
    if (f.doc.at("cases").is_array() && !f.doc.at("cases").empty()) covered.push_back(op);
  }
  for (std::string_view op : mase::op_names()) {
    if (!has_computation(op)) continue;
    INFO(fmt::format("op {} has no case in {}/{}.json; add a generator to tests/fixtures/make_op_fixtures.py "
                     "and run it",
                     op, fixture_dir.string(), op));
    const bool has_fixture = std::find(covered.begin(), covered.end(), op) != covered.end();
    CHECK(has_fixture);
  }
}
