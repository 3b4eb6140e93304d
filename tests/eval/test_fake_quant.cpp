// fake_quant mode against MASE's quantized ops. tests/fixtures/fake_quant/<op>.json, written by
// tests/fixtures/make_fake_quant_fixtures.py, holds for linear, conv2d, relu, matmul and add
// cases with a MASE "integer" config (MASE's keys), the operands as MASE quantizes them and the
// float32 result of MASE's quantized op (linear_integer, Conv2dInteger, relu_integer,
// matmul_integer, add_integer), computed with torch ops.
//
// Each case becomes a one-node graph quantized by type with the case's config as the default
// (init_metadata | add_common_metadata | quantize) and run by mase::evaluator in fake_quant mode.
// Checks: the inputs the kernel reads are MASE's quantized operands bit for bit, and every result
// element lies within the case's tolerance of MASE's. The quantized operands are exact, so the
// tolerance is only the float op's own rounding: 0 for add and relu (one exact operation), and
// (K+2)·eps·max Σ|x||w| (+|b|) for the dot products of K terms (two summation orders).
//
// mase's quantize pass also gives linear, conv2d, matmul and add a data_out format where MASE
// quantizes no output (the exact accumulator / sum format, see pass/quantize.hpp), and fake_quant
// rounds the float result to it. That format holds every exact result only when the bias fits
// it, which the bias_* cases probe.

#include <mase/eval/evaluator.hpp>
#include <mase/io/quant_config.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/op_traits.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#ifndef MASE_FIXTURE_DIR
#define MASE_FIXTURE_DIR "tests/fixtures"
#endif

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path fixture_root = fs::path(MASE_FIXTURE_DIR);

json read_json(const fs::path& path) {
  std::ifstream in(path);
  mase::require(in.good(), fmt::format("cannot open {}; generate it with /usr/bin/python3 "
                                       "tests/fixtures/make_fake_quant_fixtures.py",
                                       path.string()));
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw mase::error(fmt::format("{}: not valid JSON: {}", path.string(), e.what()));
  }
}

// The fixture of one op, parsed once (Catch2 reruns a test case for each section).
const json& fixture(const std::string& op) {
  static std::map<std::string, json> cache;
  auto it = cache.find(op);
  if (it == cache.end()) it = cache.emplace(op, read_json(fixture_root / "fake_quant" / (op + ".json"))).first;
  return it->second;
}

const json& case_named(const std::string& op, const std::string& name) {
  for (const json& c : fixture(op).at("cases"))
    if (c.at("name").get<std::string>() == name) return c;
  throw mase::error(fmt::format("fake_quant/{}.json has no case \"{}\"", op, name));
}

std::int64_t integer_of(const json& v, const std::string& where) {
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
  for (const json& v : j.at("data")) {
    mase::require(v.is_number(), fmt::format("{}: data holds a non-number {}", where, v.dump()));
    values.push_back(static_cast<float>(v.get<double>()));  // nine digits: exactly the float written
  }
  mase::require(static_cast<std::int64_t>(values.size()) == s.numel(),
                fmt::format("{}: shape {} holds {} values, data has {}", where, mase::to_string(s), s.numel(),
                            values.size()));
  return mase::tensor(s, std::move(values));
}

mase::ordered_map<mase::attribute_value> attributes_of(const json& j, const std::string& where) {
  mase::ordered_map<mase::attribute_value> out;
  for (const auto& [name, v] : j.items()) {
    if (v.is_boolean()) out.insert_or_assign(name, v.get<bool>());
    else if (v.is_number_integer()) out.insert_or_assign(name, v.get<std::int64_t>());
    else if (v.is_array()) out.insert_or_assign(name, shape_of(v, where + "." + name));
    else throw mase::error(fmt::format("{}.{}: unexpected attribute {}", where, name, v.dump()));
  }
  return out;
}

// MASE's config keys, as a TOML config would give them.
mase::quant_config config_of(const json& j, const std::string& where) {
  mase::quant_config c;
  for (const auto& [key, v] : j.items()) {
    if (v.is_string()) c.insert_or_assign(key, v.get<std::string>());
    else if (v.is_boolean()) c.insert_or_assign(key, v.get<bool>());
    else if (v.is_number_integer()) c.insert_or_assign(key, v.get<std::int64_t>());
    else throw mase::error(fmt::format("{}.config.{}: unexpected value {}", where, key, v.dump()));
  }
  return c;
}

struct mismatch {
  std::size_t index;
  float got;
  float want;
  double allowed;
};

std::string describe(const std::vector<mismatch>& bad, std::size_t total, std::string_view what) {
  std::string text = fmt::format("{}: {} of {} elements differ; the first:", what, bad.size(), total);
  for (std::size_t i = 0; i < bad.size() && i < 8; ++i)
    text += fmt::format("\n  [{}] mase {:.9g}, MASE {:.9g}, |difference| {:.3g}, allowed {:.3g}", bad[i].index,
                        bad[i].got, bad[i].want, std::fabs(static_cast<double>(bad[i].got) - bad[i].want),
                        bad[i].allowed);
  return text;
}

// Elements outside atol + rtol·|want| (a NaN from mase fails); shapes are checked by the caller.
std::vector<mismatch> compare(const mase::tensor& got, const mase::tensor& want, double atol, double rtol) {
  std::vector<mismatch> bad;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float g = got.data()[i];
    const float w = want.data()[i];
    const double allowed = atol + rtol * std::fabs(static_cast<double>(w));
    if (!(std::fabs(static_cast<double>(g) - w) <= allowed)) bad.push_back({i, g, w, allowed});
  }
  return bad;
}

// The case's one-node graph: placeholders x0, x1, …, the op as "node", the output.
mase::graph case_graph(const std::string& op, const json& c, const std::string& where) {
  mase::graph g;
  std::vector<mase::node_id> inputs;
  const json& input_list = c.at("inputs");
  for (std::size_t i = 0; i < input_list.size(); ++i)
    inputs.push_back(g.add(fmt::format("x{}", i),
                           mase::op::placeholder{shape_of(input_list[i].at("shape"), where + ": inputs")}));
  const mase::node_id n = g.add("node", mase::make_op(op, attributes_of(c.at("attributes"), where), where), inputs);
  for (const auto& [role, value] : c.at("parameters").items())
    g.set_parameter(n, role, tensor_of(value, fmt::format("{}: parameters.{}", where, role)));
  g.add("output", mase::op::output{}, {n});
  return g;
}

// Quantizes the case's graph with `config`, runs it in fake_quant mode and checks the kernel's
// inputs and the result against MASE's.
void run_case(const std::string& op, const json& c, const mase::quantize_config& config) {
  const std::string where = fmt::format("fake_quant/{}.json, case {}", op, c.at("name").get<std::string>());
  INFO(where << " (" << c.at("note").get<std::string>() << ")");
  const mase::graph g = case_graph(op, c, where) | mase::init_metadata | mase::add_common_metadata |
                        mase::quantize(config);

  mase::ordered_map<mase::tensor> inputs;
  std::vector<mase::tensor> want_inputs;
  for (std::size_t i = 0; i < c.at("inputs").size(); ++i) {
    inputs.insert_or_assign(fmt::format("x{}", i),
                            tensor_of(c.at("inputs")[i], fmt::format("{}: inputs[{}]", where, i)));
    want_inputs.push_back(tensor_of(c.at("quantized_inputs")[i], fmt::format("{}: quantized_inputs[{}]", where, i)));
  }
  const mase::tensor want = tensor_of(c.at("outputs")[0], where + ": outputs[0]");
  const double atol = c.at("atol").get<double>();
  const double rtol = c.at("rtol").get<double>();

  mase::evaluator ev(g, mase::eval_mode::fake_quant);
  // Twice: the second run reuses every buffer, cast copies included.
  for (int run = 1; run <= 2; ++run) {
    INFO("run " << run << " of the evaluator");
    std::vector<mase::tensor> read;
    const std::span<const mase::tensor> y = ev.run_with(inputs, [&](const mase::node_run& r) {
      if (r.n.name == "node")
        for (const mase::tensor* t : r.inputs) read.push_back(*t);
    });
    // relu_integer quantizes with the unsigned quantizer (negatives become 0 before the relu),
    // so only relu's result is comparable there.
    if (op != "relu") {
      REQUIRE(read.size() == want_inputs.size());
      for (std::size_t i = 0; i < read.size(); ++i) {
        REQUIRE(read[i].shape() == want_inputs[i].shape());
        const std::vector<mismatch> bad = compare(read[i], want_inputs[i], 0.0, 0.0);
        INFO(describe(bad, want_inputs[i].size(), fmt::format("quantized input {}", i)));
        CHECK(bad.empty());
      }
    }
    REQUIRE(y.size() == 1);
    INFO(fmt::format("mase shape {}, MASE shape {}", mase::to_string(y[0].shape()), mase::to_string(want.shape())));
    REQUIRE(y[0].shape() == want.shape());
    const std::vector<mismatch> bad = compare(y[0], want, atol, rtol);
    INFO(describe(bad, want.size(), "result"));
    CHECK(bad.empty());
  }
}

mase::quantize_config by_type_default(const mase::quant_config& c) {
  return mase::quantize_config{.by = mase::quantize_by::type, .default_config = c};
}

void run_cases(const std::string& op) {
  const json& cases = fixture(op).at("cases");
  REQUIRE(!cases.empty());
  for (const json& c : cases) {
    const std::string where = fmt::format("fake_quant/{}.json, case {}", op, c.at("name").get<std::string>());
    run_case(op, c, by_type_default(config_of(c.at("config"), where)));
  }
}

}  // namespace

TEST_CASE("fake_quant linear matches MASE's linear_integer", "[eval][fake_quant][mase]") { run_cases("linear"); }

TEST_CASE("fake_quant conv2d matches MASE's Conv2dInteger", "[eval][fake_quant][mase]") { run_cases("conv2d"); }

TEST_CASE("fake_quant relu matches MASE's relu_integer", "[eval][fake_quant][mase]") { run_cases("relu"); }

TEST_CASE("fake_quant matmul matches MASE's matmul_integer", "[eval][fake_quant][mase]") { run_cases("matmul"); }

TEST_CASE("fake_quant add matches MASE's add_integer", "[eval][fake_quant][mase]") { run_cases("add"); }

TEST_CASE("MASE's integer.toml loaded from file gives MASE's linear_integer result", "[eval][fake_quant][mase][io]") {
  const mase::quantize_config loaded = mase::load_quantize_config(fixture_root / "quantize" / "integer.toml");
  const json& c = case_named("linear", "integer_toml");
  // The case was generated with the file's config: the same keys and values.
  REQUIRE(loaded.by == mase::quantize_by::type);
  REQUIRE(loaded.entries.empty());
  REQUIRE(loaded.default_config.has_value());
  CHECK(*loaded.default_config == mase::node_quantize_config(config_of(c.at("config"), "integer_toml")));
  run_case("linear", c, loaded);
}
