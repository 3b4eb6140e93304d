// add_common_metadata(dummy_in): the metadata MASE's add_common_metadata_analysis_pass records by
// running the model. Checked against the two things it must agree with: the shape-only mode
// (same entries, same shapes, when the input has the placeholder's shape; the shapes of a graph
// built for the input's batch size otherwise) and a float evaluator run separately on the same
// inputs (every recorded value bit-identical to what that run computed).

#include <mase/eval/evaluator.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace mase;

namespace {

// x [batch, 16] → fc1 (16→12) → relu1 → fc2 (12→5, no bias) → output
graph mlp(std::int64_t batch) {
  builder b(1);
  auto x = b.input("x", {batch, 16});
  auto fc1 = b.add("fc1", op::linear{.in_features = 16, .out_features = 12}, x);
  auto relu1 = b.add("relu1", op::relu{}, fc1);
  auto fc2 = b.add("fc2", op::linear{.in_features = 12, .out_features = 5, .bias = false}, relu1);
  return b.output(fc2);
}

// x [batch, 3, 8, 8] → conv1 (3→4, 3×3, pad 1) → relu1 → pool (2×2) → flat → fc (64→10) → output
graph cnn(std::int64_t batch) {
  builder b(2);
  auto x = b.input("x", {batch, 3, 8, 8});
  auto c = b.add("conv1",
                 op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .stride = {1}, .padding = {1}},
                 x);
  auto r = b.add("relu1", op::relu{}, c);
  auto p = b.add("pool", op::max_pool2d{.kernel_size = {2}, .stride = {2}}, r);
  auto f = b.add("flat", op::flatten{.start_dim = 1}, p);
  auto y = b.add("fc", op::linear{.in_features = 64, .out_features = 10}, f);
  return b.output(y);
}

// x [batch, 10] → fc (10→12) → split (5, dim 1: [·,5] [·,5] [·,2]) → getitem 2, getitem_1 0 →
// add (getitem_1 + getitem_1) → output (add, getitem)
graph split_model(std::int64_t batch) {
  builder b(3);
  auto x = b.input("x", {batch, 10});
  auto fc = b.add("fc", op::linear{.in_features = 10, .out_features = 12}, x);
  auto parts = b.add("split", op::split{.split_size = 5, .dim = 1}, fc);
  auto last = b.add("getitem", op::getitem{.index = 2}, parts);
  auto first = b.add("getitem_1", op::getitem{.index = 0}, parts);
  auto sum = b.add("add", op::add{}, first, first);
  return b.output(sum, last);
}

struct model {
  std::string name;
  std::function<graph(std::int64_t)> build;
  shape input_shape;  // of x, at batch size 1 (the batch is dimension 0)
};

const std::vector<model>& models() {
  static const std::vector<model> all{
      {"mlp", mlp, {1, 16}}, {"cnn", cnn, {1, 3, 8, 8}}, {"split_model", split_model, {1, 10}}};
  return all;
}

// Deterministic values of both signs, none zero (so relu and max pooling select something).
tensor dummy(const shape& s, float phase) {
  tensor t(s);
  std::span<float> v = t.values();
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 2.0f * std::sin(0.37f * static_cast<float>(i) + phase) + 0.01f;
  return t;
}

shape with_batch(shape s, std::int64_t batch) {
  s[0] = batch;
  return s;
}

const tensor_meta& tensor_arg(const node& n, std::string_view name) {
  return std::get<tensor_meta>(n.meta.common.args.at(name));
}

std::string message_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const error& e) {
    return e.what();
  }
  return "(no mase::error was thrown)";
}

// The same entries in the same order, with the same shapes, precisions and config values;
// recorded values are not compared.
void check_same_entries(const graph& got, const graph& want) {
  REQUIRE(got.size() == want.size());
  for (node_id id : want.order()) {
    const node& w = want[id];
    const node& g = got.at(w.name);
    INFO("node " << w.name);
    CHECK(g.meta.common.mase_op == w.meta.common.mase_op);
    CHECK(g.meta.common.mase_type == w.meta.common.mase_type);
    std::vector<std::string> got_args, want_args;
    for (const auto& [name, arg] : g.meta.common.args) got_args.push_back(name);
    for (const auto& [name, arg] : w.meta.common.args) want_args.push_back(name);
    CHECK(got_args == want_args);
    for (const auto& [name, arg] : w.meta.common.args) {
      INFO("arg " << name);
      REQUIRE(g.meta.common.args.contains(name));
      const arg_meta& other = g.meta.common.args.at(name);
      REQUIRE(other.index() == arg.index());
      if (const tensor_meta* t = std::get_if<tensor_meta>(&arg)) {
        CHECK(to_string(std::get<tensor_meta>(other).shape) == to_string(t->shape));
        CHECK(std::get<tensor_meta>(other).precision == t->precision);
      } else {
        CHECK(std::get<config_value>(other) == std::get<config_value>(arg));
      }
    }
    std::vector<std::string> got_results, want_results;
    for (const auto& [name, r] : g.meta.common.results) got_results.push_back(name);
    for (const auto& [name, r] : w.meta.common.results) want_results.push_back(name);
    CHECK(got_results == want_results);
    for (const auto& [name, r] : w.meta.common.results) {
      INFO("result " << name);
      REQUIRE(g.meta.common.results.contains(name));
      CHECK(to_string(g.meta.common.results.at(name).shape) == to_string(r.shape));
      CHECK(g.meta.common.results.at(name).precision == r.precision);
    }
  }
}

// Every tensor entry holds a value (or none when `present` is false).
void check_values_present(const graph& g, bool present) {
  for (node_id id : g.order()) {
    const node& n = g[id];
    INFO("node " << n.name);
    for (const auto& [name, arg] : n.meta.common.args)
      if (const tensor_meta* t = std::get_if<tensor_meta>(&arg)) {
        INFO("arg " << name);
        CHECK(t->value.has_value() == present);
      }
    for (const auto& [name, r] : n.meta.common.results) {
      INFO("result " << name);
      CHECK(r.value.has_value() == present);
    }
  }
}

// The recorded values against a float evaluator run on the unannotated graph: each result is
// the node's result, each data_in_i the result its producer gave, each parameter the graph's.
void check_values_match_evaluator(const graph& annotated, const graph& plain, const tensor& x) {
  evaluator ev(plain);
  ev.run({{"x", x}});
  for (node_id id : plain.order()) {
    const node& p = plain[id];
    const node& n = annotated.at(p.name);
    INFO("node " << p.name);
    const std::span<const tensor* const> results = ev.results(id);
    REQUIRE(n.meta.common.results.size() == results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      INFO("result " << data_out_name(i));
      const tensor_meta& r = n.meta.common.results.at(data_out_name(i));
      REQUIRE(r.value.has_value());
      CHECK(r.value->identical(*results[i]));
      CHECK(to_string(r.value->shape()) == to_string(r.shape));
    }
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      INFO("arg " << data_in_name(i));
      const tensor_meta& a = tensor_arg(n, data_in_name(i));
      REQUIRE(a.value.has_value());
      CHECK(a.value->identical(*ev.results(p.inputs[i])[0]));
      CHECK(to_string(a.value->shape()) == to_string(a.shape));
    }
    for (const auto& [role, value] : p.parameters) {
      INFO("parameter " << role);
      const tensor_meta& a = tensor_arg(n, role);
      REQUIRE(a.value.has_value());
      CHECK(a.value->identical(value));
    }
  }
}

}  // namespace

TEST_CASE("running the model records the shapes the shape-only mode computes", "[pass][common_metadata]") {
  for (const model& m : models()) {
    INFO("model " << m.name);
    const tensor x = dummy(with_batch(m.input_shape, 4), 0.3f);
    const graph by_rules = m.build(4) | init_metadata | add_common_metadata;
    const graph by_run = m.build(4) | init_metadata | add_common_metadata({{"x", x}});
    check_same_entries(by_run, by_rules);
    check_values_present(by_rules, false);
    check_values_present(by_run, true);
  }
}

TEST_CASE("with another batch size the shapes follow the real input", "[pass][common_metadata]") {
  for (const model& m : models()) {
    INFO("model " << m.name);
    const tensor x = dummy(with_batch(m.input_shape, 3), 1.1f);
    // Declared with batch 8, run with 3: every shape is that of the graph built for batch 3.
    const graph by_run = m.build(8) | init_metadata | add_common_metadata({{"x", x}});
    const graph batch3 = m.build(3) | init_metadata | add_common_metadata;
    check_same_entries(by_run, batch3);
    CHECK(by_run.at("x").meta.common.results.at("data_out_0").shape == with_batch(m.input_shape, 3));
  }
  // Spelled out for one node: the CNN's flatten at batch 5.
  const graph g = cnn(2) | init_metadata | add_common_metadata({{"x", dummy({5, 3, 8, 8}, 0.0f)}});
  CHECK(tensor_arg(g.at("flat"), "data_in_0").shape == shape{5, 4, 4, 4});
  CHECK(g.at("flat").meta.common.results.at("data_out_0").shape == shape{5, 64});
  CHECK(tensor_arg(g.at("fc"), "weight").shape == shape{10, 64});
  CHECK(g.at("output").meta.common.results.at("data_out_0").shape == shape{5, 10});
}

TEST_CASE("the values recorded are the float evaluator's, bit for bit", "[pass][common_metadata]") {
  for (const model& m : models()) {
    for (const std::int64_t batch : {std::int64_t{4}, std::int64_t{2}}) {
      INFO("model " << m.name << ", input batch " << batch << " (declared 4)");
      const tensor x = dummy(with_batch(m.input_shape, batch), 0.7f);
      const graph plain = m.build(4);
      const graph annotated = m.build(4) | init_metadata | add_common_metadata({{"x", x}});
      check_values_match_evaluator(annotated, plain, x);
      // The placeholder's result is the dummy input itself.
      CHECK(annotated.at("x").meta.common.results.at("data_out_0").value->identical(x));
    }
  }
}

TEST_CASE("the split model's recorded values, spelled out", "[pass][common_metadata]") {
  const tensor x = dummy({3, 10}, 0.2f);
  const graph g = split_model(6) | init_metadata | add_common_metadata({{"x", x}});
  const tensor& fc = *g.at("fc").meta.common.results.at("data_out_0").value;
  REQUIRE(fc.shape() == shape{3, 12});
  const node& split = g.at("split");
  REQUIRE(split.meta.common.results.size() == 3);
  // split's results are column blocks of fc's result: [0, 5), [5, 10), [10, 12).
  const std::int64_t starts[] = {0, 5, 10};
  const std::int64_t widths[] = {5, 5, 2};
  for (std::size_t k = 0; k < 3; ++k) {
    const tensor& part = *split.meta.common.results.at(data_out_name(k)).value;
    REQUIRE(part.shape() == shape{3, widths[k]});
    for (std::int64_t r = 0; r < 3; ++r)
      for (std::int64_t c = 0; c < widths[k]; ++c)
        CHECK(part.data()[static_cast<std::size_t>(r * widths[k] + c)] ==
              fc.data()[static_cast<std::size_t>(r * 12 + starts[k] + c)]);
  }
  // getitem 2 returns the last block; add doubles the first.
  CHECK(g.at("getitem").meta.common.results.at("data_out_0").value->identical(
      *split.meta.common.results.at("data_out_2").value));
  const tensor& first = *split.meta.common.results.at("data_out_0").value;
  const tensor& sum = *g.at("add").meta.common.results.at("data_out_0").value;
  REQUIRE(sum.shape() == first.shape());
  for (std::size_t i = 0; i < first.size(); ++i) CHECK(sum.data()[i] == first.data()[i] + first.data()[i]);
  CHECK(tensor_arg(g.at("add"), "data_in_1").value->identical(first));
  CHECK(tensor_arg(g.at("output"), "data_in_1").value->identical(*split.meta.common.results.at("data_out_2").value));
}

TEST_CASE("add_value = false records shapes and no values", "[pass][common_metadata]") {
  for (const model& m : models()) {
    INFO("model " << m.name);
    const tensor x = dummy(with_batch(m.input_shape, 3), 0.5f);
    const graph g = m.build(8) | init_metadata | add_common_metadata({{"x", x}}, {.add_value = false});
    check_values_present(g, false);
    check_same_entries(g, m.build(3) | init_metadata | add_common_metadata);
  }
}

TEST_CASE("a wrong or missing dummy input is an error naming it", "[pass][common_metadata]") {
  const tensor x = dummy({4, 16}, 0.0f);
  CHECK_THAT(message_of([&] { (void)(mlp(4) | init_metadata | add_common_metadata({{"y", x}})); }),
             Catch::Contains("\"y\" is not an input of the graph"));
  CHECK_THAT(message_of([&] { (void)(mlp(4) | init_metadata | add_common_metadata({})); }),
             Catch::Contains("no tensor given for the graph input \"x\""));

  // Two inputs, one given: the message names the other.
  builder b;
  auto a_in = b.input("a", {2, 3});
  auto b_in = b.input("b", {2, 3});
  const graph two = b.output(b.add("add", op::add{}, a_in, b_in));
  CHECK_THAT(message_of([&] { (void)(two | init_metadata | add_common_metadata({{"a", dummy({2, 3}, 0.0f)}})); }),
             Catch::Contains("graph input \"b\""));
  // Both given, one extra: the extra one is named.
  CHECK_THAT(message_of([&] {
               (void)(two | init_metadata |
                      add_common_metadata({{"a", dummy({2, 3}, 0.0f)}, {"b", dummy({2, 3}, 1.0f)},
                                           {"c", dummy({2, 3}, 2.0f)}}));
             }),
             Catch::Contains("\"c\" is not an input of the graph"));
  // An input no op accepts: the error names the node that rejects it.
  CHECK_THAT(message_of([&] { (void)(mlp(4) | init_metadata | add_common_metadata({{"x", dummy({4, 15}, 0.0f)}})); }),
             Catch::Contains("fc1"));
}

TEST_CASE("precisions set before the run are kept and reach the readers", "[pass][common_metadata]") {
  const tensor x = dummy({4, 16}, 0.9f);
  auto g = mlp(4) | init_metadata | add_common_metadata({{"x", x}});
  const format out_format = fixed_fmt{.width = 8, .frac = 3};
  const format weight_format = fixed_fmt{.width = 6, .frac = 4};
  g.at("fc1").meta.common.results.at("data_out_0").precision = out_format;
  std::get<tensor_meta>(g.at("fc1").meta.common.args.at("weight")).precision = weight_format;
  const graph again = std::move(g) | add_common_metadata({{"x", x}});
  CHECK(again.at("fc1").meta.common.results.at("data_out_0").precision == out_format);
  CHECK(tensor_arg(again.at("fc1"), "weight").precision == weight_format);
  CHECK(tensor_arg(again.at("relu1"), "data_in_0").precision == out_format);
  CHECK(tensor_arg(again.at("fc2"), "weight").precision == format(formats::float32));
  // The run is in float32 whatever the formats say: the values are those of a plain run.
  check_values_match_evaluator(again, mlp(4), x);
}
