// The static graph: shapes computed at compile time by the ops' shape rules (checked against
// PyTorch's documented output-size formulas), formats carried as template arguments, iteration
// over typed node descriptors, and conversion to the dynamic graph node by node.

#include <mase/ir/op/conv.hpp>
#include <mase/ir/op/flatten.hpp>
#include <mase/ir/op/max_pool.hpp>
#include <mase/ir/static_graph.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

using mase::from;
using mase::input;
using mase::layer;
using mase::result;
using mase::shape;
namespace op = mase::op;
namespace formats = mase::formats;

constexpr mase::fixed_fmt q8_3{.width = 8, .frac = 3};
constexpr mase::fixed_fmt q8_4{.width = 8, .frac = 4};

// 784 → 256 → 10, with an 8-bit fixed-point activation.
using mlp = mase::static_graph<                                                               //
    input<"x", shape{1, 784}>,                                                                //
    layer<"fc1", op::linear{.in_features = 784, .out_features = 256}, from<"x">>,            //
    layer<"relu1", op::relu{}, from<"fc1">, q8_3>,                                            //
    layer<"fc2", op::linear{.in_features = 256, .out_features = 10, .bias = false}, from<"relu1">>,  //
    result<"fc2">>;

// torch.split(x, 4, dim=1) of a [2, 10] tensor gives chunks [2, 4], [2, 4], [2, 2]; getitem picks
// them (index -1 is the last); add broadcasts [2, 4] with [3, 1, 4] to [3, 2, 4] (NumPy rules).
using branches = mase::static_graph<                                                          //
    input<"x", shape{2, 10}, q8_4>,                                                           //
    input<"scale", shape{3, 1, 4}>,                                                           //
    layer<"parts", op::split{.split_size = 4, .dim = 1}, from<"x">>,                          //
    layer<"first", op::getitem{.index = 0}, from<"parts">>,                                   //
    layer<"second", op::getitem{.index = 1}, from<"parts">>,                                  //
    layer<"last", op::getitem{.index = -1}, from<"parts">, q8_4>,                             //
    layer<"sum", op::add{}, from<"first", "second">>,                                         //
    layer<"scaled", op::add{}, from<"sum", "scale">>,                                         //
    layer<"drop", op::dropout{.p = 0.25}, from<"scaled">, formats::e4m3>,                     //
    result<"drop", "last">>;

// PyTorch: H_out = floor((H + 2 padding - dilation (kernel - 1) - 1) / stride) + 1; max_pool2d's
// stride defaults to its kernel size; nn.Flatten keeps the batch dimension.
using cnn = mase::static_graph<                                                               //
    input<"image", shape{1, 3, 32, 32}>,                                                      //
    layer<"conv1", op::conv2d{.in_channels = 3, .out_channels = 8, .kernel_size = {3}, .padding = {1}},
          from<"image">>,                                                                     //
    layer<"relu1", op::relu{}, from<"conv1">>,                                                //
    layer<"pool1", op::max_pool2d{.kernel_size = {2}}, from<"relu1">>,                        //
    layer<"conv2", op::conv2d{.in_channels = 8, .out_channels = 16, .kernel_size = {3, 5}, .stride = {2}},
          from<"pool1">>,                                                                     //
    layer<"flat", op::flatten{}, from<"conv2">>,                                              //
    layer<"fc", op::linear{.in_features = 16 * 7 * 6, .out_features = 10}, from<"flat">>,    //
    result<"fc">>;

// ---- shapes at compile time --------------------------------------------------------------------

static_assert(mlp::size() == 5);
static_assert(mlp::valid);
static_assert(mlp::shape_of<"x"> == shape{1, 784});
static_assert(mlp::shape_of<"fc1"> == shape{1, 256});
static_assert(mlp::shape_of<"relu1"> == shape{1, 256});
static_assert(mlp::shape_of<"fc2"> == shape{1, 10});
static_assert(mlp::shape_of<"output"> == shape{1, 10});
static_assert(mlp::index_of<"relu1"> == 2);
static_assert(mlp::node<"fc2">::inputs == std::array<std::size_t, 1>{2});
static_assert(mlp::node<"fc2">::input_names[0] == "relu1");
static_assert(mlp::node<"fc2">::input_shapes.size() == 1 && mlp::node<"fc2">::input_shapes[0] == shape{1, 256});
static_assert(mlp::node<"fc1">::kind == mase::node_kind::module_related_func);
static_assert(mlp::node<"output">::kind == mase::node_kind::output);
static_assert(mlp::node<"fc1">::op == op::linear{.in_features = 784, .out_features = 256});
// torch.nn.Linear: weight [out_features, in_features], bias [out_features].
static_assert(mlp::node<"fc1">::parameters.size() == 2);
static_assert(mlp::node<"fc1">::parameters[0].role == "weight" && mlp::node<"fc1">::parameters[0].shape == shape{256, 784});
static_assert(mlp::node<"fc1">::parameters[1].role == "bias" && mlp::node<"fc1">::parameters[1].shape == shape{256});
static_assert(mlp::node<"fc2">::parameters.size() == 1);

static_assert(branches::shapes_of<"parts">.size() == 3);
static_assert(branches::shapes_of<"parts">[0] == shape{2, 4});
static_assert(branches::shapes_of<"parts">[1] == shape{2, 4});
static_assert(branches::shapes_of<"parts">[2] == shape{2, 2});
// getitem reads every result of split.
static_assert(branches::node<"second">::input_shapes.size() == 3);
static_assert(branches::shape_of<"first"> == shape{2, 4});
static_assert(branches::shape_of<"last"> == shape{2, 2});
static_assert(branches::shape_of<"sum"> == shape{2, 4});
static_assert(branches::shape_of<"scaled"> == shape{3, 2, 4});
static_assert(branches::shape_of<"drop"> == shape{3, 2, 4});
static_assert(branches::shapes_of<"output">.size() == 2);
static_assert(branches::shapes_of<"output">[0] == shape{3, 2, 4});
static_assert(branches::shapes_of<"output">[1] == shape{2, 2});
static_assert(branches::node<"sum">::inputs == std::array<std::size_t, 2>{3, 4});

static_assert(cnn::shape_of<"conv1"> == shape{1, 8, 32, 32});  // (32 + 2 - 2 - 1) / 1 + 1
static_assert(cnn::shape_of<"pool1"> == shape{1, 8, 16, 16});  // (32 - 1 - 1) / 2 + 1
static_assert(cnn::shape_of<"conv2"> == shape{1, 16, 7, 6});   // (16 - 2 - 1) / 2 + 1, (16 - 4 - 1) / 2 + 1
static_assert(cnn::shape_of<"flat"> == shape{1, 672});
static_assert(cnn::shape_of<"output"> == shape{1, 10});
static_assert(cnn::node<"conv2">::parameters[0].shape == shape{16, 8, 3, 5});

// ---- formats -----------------------------------------------------------------------------------

static_assert(mlp::format_of<"x"> == formats::float32);
static_assert(mlp::format_of<"relu1"> == q8_3);
static_assert(mlp::format_of<"fc2"> == formats::float32);
static_assert(branches::format_of<"x"> == q8_4);
static_assert(branches::format_of<"drop"> == formats::e4m3);
// The output node passes its inputs' formats through; its own `format` is its first input's.
static_assert(branches::format_of<"output"> == formats::e4m3);

// ---- iteration ---------------------------------------------------------------------------------

// Descriptors are constants, so a pass can compute over the graph at compile time.
constexpr std::int64_t parameter_count(auto graph) {
  std::int64_t count = 0;
  graph.for_each_node([&](auto node) {
    for (const mase::parameter_spec& p : node.parameters) count += p.shape.numel();
  });
  return count;
}
// 784*256 + 256 + 256*10 (fc2 has no bias).
static_assert(parameter_count(mlp{}) == 203520);
// conv1: 8*3*3*3 + 8; conv2: 16*8*3*5 + 16; fc: 672*10 + 10.
static_assert(parameter_count(cnn{}) == 224 + 1936 + 6730);

TEST_CASE("for_each_node visits every node in order with its typed descriptor", "[static_graph]") {
  std::vector<std::string> visited;
  std::vector<mase::shape> shapes;
  branches::for_each_node([&](auto node) {
    static_assert(node.index < branches::size());
    if constexpr (node.kind == mase::node_kind::placeholder) visited.push_back("input " + std::string(node.name));
    else visited.push_back(std::string(node.name));
    shapes.push_back(node.shape);
  });
  CHECK(visited == std::vector<std::string>{"input x", "input scale", "parts", "first", "second", "last", "sum",
                                            "scaled", "drop", "output"});
  CHECK(shapes == std::vector<mase::shape>{{2, 10}, {3, 1, 4}, {2, 4}, {2, 4}, {2, 4}, {2, 2}, {2, 4}, {3, 2, 4},
                                           {3, 2, 4}, {3, 2, 4}});
}

// ---- conversion to the dynamic graph -----------------------------------------------------------

mase::tensor_meta result_meta(mase::shape s, mase::format precision = formats::float32) {
  return {.shape = s, .precision = precision, .value = std::nullopt};
}

void expect_results(mase::graph& g, mase::node_id id, std::string mase_op, mase::node_kind kind,
                    const std::vector<mase::tensor_meta>& results) {
  mase::common_meta& common = g[id].meta.common;
  common.mase_op = std::move(mase_op);
  common.mase_type = kind;
  for (std::size_t i = 0; i < results.size(); ++i) common.results.insert_or_assign(mase::data_out_name(i), results[i]);
}

TEST_CASE("to_graph turns the MLP into the dynamic graph built by hand", "[static_graph]") {
  mase::graph expected;
  const auto x = expected.add("x", op::placeholder{.shape = {1, 784}});
  const auto fc1 = expected.add("fc1", op::linear{.in_features = 784, .out_features = 256}, {x});
  expected.set_parameter(fc1, "weight", mase::tensor(shape{256, 784}));
  expected.set_parameter(fc1, "bias", mase::tensor(shape{256}));
  const auto relu1 = expected.add("relu1", op::relu{}, {fc1});
  const auto fc2 = expected.add("fc2", op::linear{.in_features = 256, .out_features = 10, .bias = false}, {relu1});
  expected.set_parameter(fc2, "weight", mase::tensor(shape{10, 256}));
  const auto out = expected.add("output", op::output{}, {fc2});
  using k = mase::node_kind;
  expect_results(expected, x, "placeholder", k::placeholder, {result_meta({1, 784})});
  expect_results(expected, fc1, "linear", k::module_related_func, {result_meta({1, 256})});
  expect_results(expected, relu1, "relu", k::module_related_func, {result_meta({1, 256}, q8_3)});
  expect_results(expected, fc2, "linear", k::module_related_func, {result_meta({1, 10})});
  expect_results(expected, out, "output", k::output, {result_meta({1, 10})});

  const mase::graph g = mlp::to_graph();
  CHECK(g == expected);

  // The same, spelled out for the parts a reader cares about.
  REQUIRE(g.size() == 5);
  std::vector<std::string> names;
  for (mase::node_id id : g.order()) names.push_back(g[id].name);
  CHECK(names == std::vector<std::string>{"x", "fc1", "relu1", "fc2", "output"});
  CHECK(g.at("fc1").as<op::linear>() == op::linear{.in_features = 784, .out_features = 256});
  REQUIRE(g.at("fc2").inputs.size() == 1);
  CHECK(g[g.at("fc2").inputs[0]].name == "relu1");
  const mase::tensor& weight = g.parameter("fc1.weight");
  CHECK(weight.shape() == shape{256, 784});
  CHECK(std::all_of(weight.values().begin(), weight.values().end(), [](float v) { return v == 0.0f; }));
  CHECK(g.at("fc2").parameters.size() == 1);
  const mase::common_meta& relu = g.at("relu1").meta.common;
  CHECK(relu.mase_op == "relu");
  CHECK(relu.mase_type == mase::node_kind::module_related_func);
  CHECK(relu.results.at("data_out_0").shape == shape{1, 256});
  CHECK(relu.results.at("data_out_0").precision == mase::format(q8_3));
  CHECK(relu.results.at("data_out_0").type() == "fixed");
  CHECK(g.at("fc2").meta.common.results.at("data_out_0").type() == "float");
}

TEST_CASE("to_graph keeps several results, edges to them and the formats of each", "[static_graph]") {
  const mase::graph g = branches::to_graph();
  REQUIRE(g.size() == branches::size());

  const mase::common_meta& parts = g.at("parts").meta.common;
  CHECK(parts.mase_op == "split");
  CHECK(parts.mase_type == mase::node_kind::implicit_func);
  CHECK(parts.results.key_list() == "data_out_0, data_out_1, data_out_2");
  CHECK(parts.results.at("data_out_2").shape == shape{2, 2});

  const mase::node& sum = g.at("sum");
  REQUIRE(sum.inputs.size() == 2);
  CHECK(g[sum.inputs[0]].name == "first");
  CHECK(g[sum.inputs[1]].name == "second");
  CHECK(g.at("last").as<op::getitem>().index == -1);
  CHECK(g.at("x").meta.common.results.at("data_out_0").precision == mase::format(q8_4));
  CHECK(g.at("drop").meta.common.results.at("data_out_0").precision == mase::format(formats::e4m3));

  // The output node: one input per result, each result with its node's shape and format.
  const mase::node& out = g.at("output");
  CHECK(out.kind() == mase::node_kind::output);
  REQUIRE(out.inputs.size() == 2);
  CHECK(g[out.inputs[0]].name == "drop");
  CHECK(g[out.inputs[1]].name == "last");
  const mase::common_meta& results = out.meta.common;
  REQUIRE(results.results.size() == 2);
  CHECK(results.results.at("data_out_0") ==
        result_meta({3, 2, 4}, formats::e4m3));
  CHECK(results.results.at("data_out_1") ==
        result_meta({2, 2}, q8_4));
  CHECK(g.output() == g.id("output"));
  CHECK(g.placeholders() == std::vector<mase::node_id>{g.id("x"), g.id("scale")});
  CHECK(g.named_parameters().empty());
}

}  // namespace
