// add_hardware_metadata: MASE's parameter names and conventions (DeepWok/mase at ae4660b1:
// src/chop/passes/graph/analysis/add_metadata/add_hardware_metadata.py), the parallelism rule,
// and the errors for nodes without hardware; the ROM word packing.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog/hex.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace mase;

namespace {

format fixed(int width, int frac) { return format(fixed_fmt{.width = width, .frac = frac}); }

quantize_config fixed_config() {
  return {.by = quantize_by::type,
          .default_config = operand_formats{.data_in = fixed(8, 3), .weight = fixed(6, 4), .bias = fixed(10, 5),
                                            .data_out = fixed(7, 2)}};
}

std::int64_t param(const node& n, const std::string& key) {
  const verilog_value& v = n.meta.hardware.verilog_param.at(key);
  if (const bool* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  return std::get<std::int64_t>(v);
}

}  // namespace

TEST_CASE("add_hardware_metadata: MASE's parameter names on a linear layer", "[hardware]") {
  builder b;
  auto x = b.input("x", {1, 784});
  auto h = b.add("fc1", op::linear{.in_features = 784, .out_features = 10}, x);
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  auto y = b.add("relu", op::relu{}, h);
  const auto g = b.output(y) | init_metadata | add_common_metadata | quantize(fixed_config()) |
                 add_hardware_metadata({.max_parallelism = {4, 4, 4, 4}});
  const node& fc1 = g.at("fc1");
  CHECK(fc1.meta.hardware.module == "mase_linear");
  CHECK(fc1.meta.hardware.toolchain == toolchain::internal_rtl);
  CHECK_FALSE(fc1.meta.hardware.is_implicit);
  CHECK(fc1.meta.hardware.interface.at("weight") == interface_entry{"BRAM", false});
  CHECK(param(fc1, "DATA_IN_0_PRECISION_0") == 8);
  CHECK(param(fc1, "DATA_IN_0_PRECISION_1") == 3);
  CHECK(param(fc1, "DATA_IN_0_TENSOR_SIZE_DIM_0") == 784);  // dimension 0 is the innermost
  CHECK(param(fc1, "DATA_IN_0_TENSOR_SIZE_DIM_1") == 1);
  CHECK(param(fc1, "DATA_IN_0_PARALLELISM_DIM_0") == 4);
  CHECK(param(fc1, "DATA_IN_0_PARALLELISM_DIM_1") == 1);
  CHECK(param(fc1, "WEIGHT_PRECISION_0") == 6);
  CHECK(param(fc1, "WEIGHT_TENSOR_SIZE_DIM_0") == 784);  // in_features
  CHECK(param(fc1, "WEIGHT_TENSOR_SIZE_DIM_1") == 10);   // out_features
  CHECK(param(fc1, "WEIGHT_PARALLELISM_DIM_0") == 4);
  CHECK(param(fc1, "WEIGHT_PARALLELISM_DIM_1") == 2);  // the largest divisor of 10 that is at most 4
  CHECK(param(fc1, "BIAS_PRECISION_0") == 10);
  CHECK(param(fc1, "BIAS_TENSOR_SIZE_DIM_0") == 10);
  CHECK(param(fc1, "DATA_OUT_0_PRECISION_0") == 7);
  CHECK(param(fc1, "DATA_OUT_0_PARALLELISM_DIM_0") == 2);
  CHECK(param(fc1, "HAS_BIAS") == 1);
  CHECK(g.at("flatten").meta.hardware.is_implicit);
  CHECK_FALSE(g.at("flatten").meta.hardware.module.has_value());
  CHECK(g.at("x").meta.hardware.is_implicit);
  // The relu reads the flatten's stream: the linear's 2 lanes.
  CHECK(param(g.at("relu"), "DATA_IN_0_PARALLELISM_DIM_0") == 2);
  CHECK(g.at("relu").meta.hardware.max_parallelism == std::array<int, 4>{4, 4, 4, 4});
}

TEST_CASE("add_hardware_metadata: a node without a component, or not fixed point, is an error naming it",
          "[hardware]") {
  builder b;
  auto x = b.input("x", {1, 8});
  auto h = b.add("fc1", op::linear{.in_features = 8, .out_features = 8}, x);
  auto y = b.add("soft", op::log_softmax{.dim = -1}, h);
  const auto quantized = b.output(y) | init_metadata | add_common_metadata | quantize(fixed_config());
  CHECK_THROWS_WITH(quantized | add_hardware_metadata,
                    Catch::Contains("node soft (log_softmax) has no hardware component"));

  // A division has hardware only by a constant power of two (the codes stay, the point moves).
  builder d;
  auto dx = d.input("x", {1, 8});
  auto dh = d.add("fc1", op::linear{.in_features = 8, .out_features = 8}, dx);
  auto three = d.add("three", op::constant{});
  d.set_parameter(three, "value", tensor(shape{}, {3.0f}));
  const auto divided = d.output(d.add("div", op::div{}, dh, three)) | init_metadata | add_common_metadata |
                       quantize(fixed_config());
  CHECK_THROWS_WITH(divided | add_hardware_metadata,
                    Catch::Contains("node div (div): the hardware divides only by a constant power of two") &&
                        Catch::Contains("this one divides by three"));

  // An average pool of 3 x 3 (or of a divisor_override of 3) has no exact fixed-point mean, so
  // quantize leaves its result float unless hardware_formats gives it its input's format: the
  // error says so, not that the config should be fixed point (it is). With it, both have hardware.
  for (const op::avg_pool2d& pool : {op::avg_pool2d{.kernel_size = {3}}, op::avg_pool2d{.kernel_size = {2}, .divisor_override = 3}}) {
    builder p;
    auto px = p.input("x", {1, 2, 6, 6});
    auto pc = p.add("conv", op::conv2d{.in_channels = 2, .out_channels = 2, .kernel_size = {1}}, px);
    const auto pooled = p.output(p.add("pool", pool, pc)) | init_metadata | add_common_metadata;
    CHECK_THROWS_WITH(pooled | quantize(fixed_config()) | add_hardware_metadata,
                      Catch::Contains("node pool (avg_pool2d): its result has no fixed-point format") &&
                          Catch::Contains("hardware_formats"));
    quantize_config for_hardware = fixed_config();
    for_hardware.hardware_formats = true;
    const graph g = pooled | quantize(for_hardware) | add_hardware_metadata;
    CHECK(std::get<std::int64_t>(g[g.id("pool")].meta.hardware.verilog_param.at("MODE")) == 1);
  }

  builder f;
  auto fx = f.input("x", {1, 8});
  auto fy = f.add("fc1", op::linear{.in_features = 8, .out_features = 8}, fx);
  const auto minifloat = f.output(fy) | init_metadata | add_common_metadata |
                         quantize({.by = quantize_by::type,
                                   .default_config = operand_formats::all(format(minifloat_fmt{.exp_bits = 4, .man_bits = 3}))});
  CHECK_THROWS_WITH(minifloat | add_hardware_metadata,
                    Catch::Contains("node fc1 (linear): data_in_0 has format") && Catch::Contains("fixed point"));
}

TEST_CASE("largest_divisor_at_most picks a parallelism that divides the size", "[hardware]") {
  CHECK(largest_divisor_at_most(10, 4) == 2);
  CHECK(largest_divisor_at_most(784, 4) == 4);
  CHECK(largest_divisor_at_most(7, 4) == 1);
  CHECK(largest_divisor_at_most(3, 8) == 3);
}

TEST_CASE("ROM words pack lanes of any width, lane 0 in the low bits", "[hardware]") {
  std::string text;
  // Three 5-bit lanes: -1 (11111), 2 (00010), -16 (10000): bits 10000 00010 11111 = 0x405f.
  const std::vector<std::int64_t> codes{-1, 2, -16};
  verilog::append_hex_word(text, codes, 5);
  CHECK(text == "405f\n");
  text.clear();
  const std::vector<std::int64_t> one{-3};
  verilog::append_hex_word(text, one, 3);  // 101
  CHECK(text == "5\n");
}
