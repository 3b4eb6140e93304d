#include <mase/ir/print.hpp>

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

namespace {

using mase::fixed_fmt;

// x -> fc1 (linear 4->2) -> act (relu) -> output, with every metadata field of fc1 filled in.
struct small_graph {
  mase::graph g;
  mase::node_id x, fc1, act, out;

  small_graph() {
    x = g.add("x", mase::op::placeholder{.shape = {1, 4}});
    fc1 = g.add("fc1", mase::op::linear{.in_features = 4, .out_features = 2, .bias = true}, {x});
    act = g.add("act", mase::op::relu{}, {fc1});
    out = g.add("output", mase::op::output{}, {act});
    g.set_parameter(fc1, "weight", mase::tensor({2, 4}, {0.5f, -1.0f, 0.25f, 2.0f, 0.0f, 1.0f, 3.5f, -0.125f}));
    g.set_parameter(fc1, "bias", mase::tensor({2}, {0.75f, -2.0f}));

    mase::node_metadata& m = g[fc1].meta;
    m.common.mase_op = "linear";
    m.common.mase_type = mase::node_kind::module_related_func;
    m.common.args["data_in_0"] = mase::tensor_meta{.shape = {1, 4},
                                                   .precision = fixed_fmt{.width = 8, .frac = 3},
                                                   .value = mase::tensor({1, 4}, {1.5f, -0.5f, 0.125f, 3.0f})};
    m.common.args["weight"] = mase::tensor_meta{.shape = {2, 4}, .precision = fixed_fmt{.width = 6, .frac = 4}, .value = {}};
    m.common.args["bias"] = mase::tensor_meta{.shape = {1, 2}, .precision = mase::formats::float32, .value = {}};
    m.common.args["scale_dim"] = mase::config_value(std::int64_t{-1});
    m.common.results["data_out_0"] =
        mase::tensor_meta{.shape = {1, 2}, .precision = fixed_fmt{.width = 16, .frac = 7}, .value = {}};

    auto& range = m.software.args["data_in_0"].stat["range_min_max"];
    range["min"] = -1.5;
    range["max"] = 2.25;
    range["range"] = 3.75;
    range["count"] = 40.0;
    auto& variance = m.software.results["data_out_0"].stat["variance_precise"];
    variance["mean"] = std::vector<double>{0.5, -0.0625};
    variance["variance"] = mase::not_available{};
    m.software.args["weight"];  // an entry with no statistics yet

    m.hardware.is_implicit = false;
    m.hardware.device_id = 3;
    m.hardware.toolchain = mase::toolchain::internal_hls;
    m.hardware.module = "fixed_linear";
    m.hardware.interface["weight"] = mase::interface_entry{.storage = "BRAM", .transpose = true};
    m.hardware.verilog_param["DATA_IN_0_PRECISION_0"] = std::int64_t{8};
    m.hardware.verilog_param["DATA_IN_0_TENSOR_SIZE_DIM_0"] = std::int64_t{4};
    m.hardware.verilog_param["HAS_BIAS"] = true;
    m.hardware.verilog_param["IND_A"] = std::vector<std::int64_t>{3, 1, 2};
    m.hardware.verilog_param["PART"] = std::string("xcu250");
    m.hardware.dependence_files = {"linear_layers/fixed_linear.sv", "common/join2.sv"};
    m.hardware.max_parallelism = {2, 4, 8, 16};
    m.hardware.channels_last = true;
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("to_string(tensor_meta) shows type, precision, shape and the start of the value") {
  const mase::tensor_meta plain{.shape = {1, 784}, .precision = mase::formats::float32, .value = {}};
  CHECK(mase::to_string(plain) == "{type: float, precision: float32, shape: [1, 784]}");

  const mase::tensor_meta with_value{.shape = {2, 4},
                                     .precision = fixed_fmt{.width = 8, .frac = 3},
                                     .value = mase::tensor({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8.5f})};
  CHECK(mase::to_string(with_value) ==
        "{type: fixed, precision: fixed<8,3>, shape: [2, 4], value: tensor[2, 4](1, 2, 3, 4, 5, 6, … 2 more)}");
}

TEST_CASE("summarize shows every value of a small tensor and a count for the rest of a large one") {
  CHECK(mase::summarize(mase::tensor({3}, {0.1f, -2.5f, 0.0f})) == "tensor[3](0.1, -2.5, 0)");
  CHECK(mase::summarize(mase::tensor({2, 2}, {1, 2, 3, 4}), 2) == "tensor[2, 2](1, 2, … 2 more)");
  CHECK(mase::summarize(mase::tensor({0})) == "tensor[0]()");
}

TEST_CASE("to_string(common_meta) lists op, type, every arg and result under MASE's names") {
  const small_graph s;
  const std::string text = mase::to_string(s.g[s.fc1].meta.common);
  CHECK(text ==
        "mase_op: linear\n"
        "mase_type: module_related_func\n"
        "args:\n"
        "  data_in_0: {type: fixed, precision: fixed<8,3>, shape: [1, 4], value: tensor[1, 4](1.5, -0.5, 0.125, 3)}\n"
        "  weight: {type: fixed, precision: fixed<6,4>, shape: [2, 4]}\n"
        "  bias: {type: float, precision: float32, shape: [1, 2]}\n"
        "  scale_dim: {type: int, value: -1}\n"
        "results:\n"
        "  data_out_0: {type: fixed, precision: fixed<16,7>, shape: [1, 2]}\n");
}

TEST_CASE("unfilled common metadata prints as not set rather than as the default kind") {
  const mase::common_meta empty;
  CHECK(mase::to_string(empty) == "mase_op: (not set)\nmase_type: (not set)\nargs: {}\nresults: {}\n");
}

TEST_CASE("to_string(software_meta) shows every statistic and its fields, NA included") {
  const small_graph s;
  CHECK(mase::to_string(s.g[s.fc1].meta.software) ==
        "args:\n"
        "  data_in_0:\n"
        "    stat:\n"
        "      range_min_max: {min: -1.5, max: 2.25, range: 3.75, count: 40}\n"
        "  weight:\n"
        "    stat: {}\n"
        "results:\n"
        "  data_out_0:\n"
        "    stat:\n"
        "      variance_precise: {mean: [0.5, -0.0625], variance: NA}\n");
}

TEST_CASE("to_string(hardware_meta) shows every field, verilog parameters of every kind included") {
  const small_graph s;
  CHECK(mase::to_string(s.g[s.fc1].meta.hardware) ==
        "is_implicit: false\n"
        "device_id: 3\n"
        "toolchain: INTERNAL_HLS\n"
        "module: fixed_linear\n"
        "interface:\n"
        "  weight: {storage: BRAM, transpose: true}\n"
        "verilog_param:\n"
        "  DATA_IN_0_PRECISION_0: 8\n"
        "  DATA_IN_0_TENSOR_SIZE_DIM_0: 4\n"
        "  HAS_BIAS: true\n"
        "  IND_A: [3, 1, 2]\n"
        "  PART: \"xcu250\"\n"
        "dependence_files: [linear_layers/fixed_linear.sv, common/join2.sv]\n"
        "max_parallelism: [2, 4, 8, 16]\n"
        "channels_last: true\n");

  const mase::hardware_meta defaults;
  const std::string text = mase::to_string(defaults);
  CHECK(contains(text, "module: None\n"));
  CHECK(contains(text, "interface: {}\n"));
  CHECK(contains(text, "verilog_param: {}\n"));
  CHECK(contains(text, "channels_last: false\n"));
  CHECK(contains(text, "dependence_files: []\n"));
  CHECK(contains(text, "device_id: -1\n"));
}

TEST_CASE("a node prints its op, kind, inputs by name, parameters and all three sections nested") {
  const small_graph s;
  const std::string text = mase::to_string(s.g, s.fc1);
  const std::string expected_head =
      "fc1:\n"
      "  op: linear(in_features=4, out_features=2, bias=true)\n"
      "  kind: module_related_func\n"
      "  inputs: [x]\n"
      "  parameters:\n"
      "    weight: tensor[2, 4](0.5, -1, 0.25, 2, 0, 1, … 2 more)\n"
      "    bias: tensor[2](0.75, -2)\n"
      "  common:\n"
      "    mase_op: linear\n";
  CHECK(text.substr(0, expected_head.size()) == expected_head);
  // Every section appears, indented one level deeper than its header.
  for (const char* part : {"  software:\n    args:\n      data_in_0:\n        stat:\n          range_min_max: {min: -1.5",
                           "  hardware:\n    is_implicit: false\n", "      DATA_IN_0_PRECISION_0: 8\n",
                           "      data_out_0: {type: fixed, precision: fixed<16,7>, shape: [1, 2]}\n",
                           "    max_parallelism: [2, 4, 8, 16]\n"})
    CHECK(contains(text, part));
  // Each section's text is the node's text for that section, indented by two levels.
  std::istringstream hardware(mase::to_string(s.g[s.fc1].meta.hardware));
  for (std::string line; std::getline(hardware, line);) CHECK(contains(text, "\n    " + line + "\n"));

  // Without its graph a node names its inputs by id.
  const std::string alone = mase::to_string(s.g[s.act]);
  CHECK(contains(alone, "act:\n  op: relu(inplace=false)\n  kind: module_related_func\n  inputs: [node#1]\n"));
  CHECK(contains(alone, "  parameters: {}\n"));
  std::ostringstream streamed;
  streamed << s.g[s.act];
  CHECK(streamed.str() == alone);
}

TEST_CASE("a graph prints fx-style, one line per node, with result formats when known") {
  small_graph s;
  s.g[s.act].meta.common.results["data_out_0"] =
      mase::tensor_meta{.shape = {1, 2}, .precision = fixed_fmt{.width = 8, .frac = 3, .is_signed = false}, .value = {}};
  std::ostringstream os;
  os << s.g;
  CHECK(os.str() ==
        "%x : placeholder(shape=[1, 4])()\n"
        "%fc1 : linear(in_features=4, out_features=2, bias=true)(%x)  # data_out_0: fixed<16,7> [1, 2]\n"
        "%act : relu(inplace=false)(%fc1)  # data_out_0: ufixed<8,3> [1, 2]\n"
        "%output : output()(%act)\n");
}

TEST_CASE("nodes with several inputs and results list them all in order") {
  mase::graph g;
  const auto a = g.add("a", mase::op::placeholder{.shape = {4, 2}});
  const auto parts = g.add("parts", mase::op::split{.split_size = 2, .dim = 0}, {a});
  const auto first = g.add("first", mase::op::getitem{.index = 0}, {parts});
  const auto second = g.add("second", mase::op::getitem{.index = 1}, {parts});
  const auto sum = g.add("sum", mase::op::add{}, {first, second});
  g.add("output", mase::op::output{}, {sum, first});
  auto& results = g[parts].meta.common.results;
  results["data_out_0"] = mase::tensor_meta{.shape = {2, 2}, .precision = mase::formats::float16, .value = {}};
  results["data_out_1"] = mase::tensor_meta{.shape = {2, 2}, .precision = mase::formats::bfloat16, .value = {}};
  std::ostringstream os;
  os << g;
  CHECK(os.str() ==
        "%a : placeholder(shape=[4, 2])()\n"
        "%parts : split(split_size=2, dim=0)(%a)  # data_out_0: float16 [2, 2], data_out_1: bfloat16 [2, 2]\n"
        "%first : getitem(index=0)(%parts)\n"
        "%second : getitem(index=1)(%parts)\n"
        "%sum : add()(%first, %second)\n"
        "%output : output()(%sum, %first)\n");
  CHECK(contains(mase::to_string(g, sum), "  inputs: [first, second]\n"));
}
