// init_metadata and add_common_metadata: MASE's schema and names, shapes from the ops' rules.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/verify.hpp>

#include <catch2/catch.hpp>

using namespace mase;

namespace {
graph small_model() {
  builder b;
  auto x = b.input("x", {8, 16});
  auto fc = b.add("fc1", op::linear{.in_features = 16, .out_features = 12}, x);
  auto parts = b.add("split", op::split{.split_size = 5, .dim = 1}, fc);
  auto last = b.add("getitem", op::getitem{.index = 2}, parts);
  auto first = b.add("getitem_1", op::getitem{.index = 0}, parts);
  auto sum = b.add("add", op::add{}, first, first);
  return b.output(sum, last);
}
const tensor_meta& tensor_arg(const node& n, std::string_view name) { return std::get<tensor_meta>(n.meta.common.args.at(name)); }
}  // namespace

TEST_CASE("init_metadata sets mase_op and mase_type and resets the rest") {
  graph g = small_model();
  g.at("fc1").meta.hardware.device_id = 7;
  const graph out = g | init_metadata;
  CHECK(out.at("fc1").meta.common.mase_op == "linear");
  CHECK(out.at("fc1").meta.common.mase_type == node_kind::module_related_func);
  CHECK(out.at("x").meta.common.mase_type == node_kind::placeholder);
  CHECK(out.at("split").meta.common.mase_type == node_kind::implicit_func);
  CHECK(out.at("add").meta.common.mase_type == node_kind::builtin_func);
  CHECK(out.at("fc1").meta.hardware.device_id == -1);
  CHECK(out.at("fc1").meta.common.args.empty());
}

TEST_CASE("add_common_metadata names args and results as MASE does") {
  const graph g = small_model() | init_metadata | add_common_metadata;
  const node& fc1 = g.at("fc1");
  std::vector<std::string> keys;
  for (const auto& [k, v] : fc1.meta.common.args) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"data_in_0", "weight", "bias"});  // modules: no config args
  CHECK(tensor_arg(fc1, "data_in_0").shape == shape{8, 16});
  CHECK(tensor_arg(fc1, "weight").shape == shape{12, 16});
  CHECK(tensor_arg(fc1, "bias").shape == shape{12});
  CHECK(tensor_arg(fc1, "data_in_0").type() == "float");
  CHECK(fc1.meta.common.results.at("data_out_0").shape == shape{8, 12});

  // split: a function call, so its arguments (split_size, dim) are config args; three results.
  const node& split = g.at("split");
  CHECK(std::get<config_value>(split.meta.common.args.at("split_size")) == config_value(std::int64_t{5}));
  CHECK(std::get<config_value>(split.meta.common.args.at("dim")) == config_value(std::int64_t{1}));
  REQUIRE(split.meta.common.results.size() == 3);
  CHECK(split.meta.common.results.at("data_out_0").shape == shape{8, 5});
  CHECK(split.meta.common.results.at("data_out_2").shape == shape{8, 2});
  CHECK(g.at("getitem").meta.common.results.at("data_out_0").shape == shape{8, 2});
  CHECK(tensor_arg(g.at("add"), "data_in_1").shape == shape{8, 5});
  // output: one data_in and one data_out per graph result
  const node& out = g.at("output");
  CHECK(tensor_arg(out, "data_in_1").shape == shape{8, 2});
  CHECK(out.meta.common.results.at("data_out_1").shape == shape{8, 2});
  CHECK(verify.run(g).nodes == 7);
}

TEST_CASE("add_common_metadata keeps formats already set and propagates them to readers") {
  auto g = small_model() | init_metadata | add_common_metadata;
  g.at("fc1").meta.common.results.at("data_out_0").precision = fixed_fmt{.width = 8, .frac = 3};
  const graph again = std::move(g) | add_common_metadata;
  CHECK(again.at("fc1").meta.common.results.at("data_out_0").precision == format(fixed_fmt{.width = 8, .frac = 3}));
  CHECK(tensor_arg(again.at("split"), "data_in_0").precision == format(fixed_fmt{.width = 8, .frac = 3}));
  CHECK(tensor_arg(again.at("split"), "data_in_0").type() == "fixed");
}

TEST_CASE("a shape that does not fit is an error naming the node, op and shapes") {
  builder b;
  auto x = b.input("x", {8, 16});
  auto fc = b.add("fc1", op::linear{.in_features = 15, .out_features = 4}, x);
  const graph g = b.output(fc);
  CHECK_THROWS_WITH(g | init_metadata | add_common_metadata,
                    "node fc1 (linear(in_features=15, out_features=4, bias=true)): linear: the input's last dimension "
                    "differs from in_features; input shape(s) [8, 16]");
}
