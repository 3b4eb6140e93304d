// MASE's quantize configs (DeepWok/mase at ae4660b1: configs/tests/quantize/*.toml) read with
// toml++ and mapped to formats.
#include <mase/format/format_string.hpp>
#include <mase/format/mase_config.hpp>

#include <catch2/catch.hpp>
#include <toml++/toml.h>

#include <string>

using namespace mase;

namespace {

quant_config from_toml(std::string_view text) {
  const toml::table doc = toml::parse(text);
  const toml::table& cfg = *doc["passes"]["quantize"]["default"]["config"].as_table();
  quant_config out;
  for (const auto& [key, node] : cfg) {
    const std::string k(key.str());
    if (auto v = node.value_exact<bool>()) out[k] = *v;
    else if (auto i = node.value_exact<std::int64_t>()) out[k] = *i;
    else if (auto d = node.value_exact<double>()) out[k] = *d;
    else if (auto s = node.value_exact<std::string>()) out[k] = *s;
    else if (const toml::array* a = node.as_array()) {
      std::vector<std::int64_t> dims;
      for (const auto& e : *a) dims.push_back(e.value_or<std::int64_t>(0));
      out[k] = dims;
    }
  }
  return out;
}

std::string format_of(std::string_view toml_text, std::string_view operand) {
  return to_string(format_from_mase_config(from_toml(toml_text), operand));
}

// The error a config gives, or "no error".
std::string message(std::string_view toml_text, std::string_view operand) {
  try {
    format_from_mase_config(from_toml(toml_text), operand);
  } catch (const error& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

}  // namespace

TEST_CASE("integer config: data_in / weight / bias width and frac_width") {
  constexpr std::string_view text = R"(
[passes.quantize.default.config]
name = "integer"
data_in_width = 8
data_in_frac_width = 3
weight_width = 8
weight_frac_width = 3
bias_width = 16
bias_frac_width = 4
)";
  CHECK(format_of(text, "data_in") == "fixed<8,3>");
  CHECK(format_of(text, "weight") == "fixed<8,3>");
  CHECK(format_of(text, "bias") == "fixed<16,4>");
}

TEST_CASE("minifloat, log and block configs") {
  CHECK(format_of(R"(
[passes.quantize.default.config]
name = "minifloat_ieee"
data_in_width = 8
data_in_exponent_width = 4
data_in_exponent_bias = 7
)", "data_in") == "minifloat<8,4,7>");
  CHECK(format_of(R"(
[passes.quantize.default.config]
name = "log"
weight_width = 8
weight_exponent_bias = "none"
)", "weight") == "log<8,63>");
  constexpr std::string_view block_fp = R"(
[passes.quantize.default.config]
name = "block_fp"
data_in_width = 7
data_in_exponent_width = 8
data_in_exponent_bias = 127
data_in_block_size = [1, 16]
weight_width = 7
weight_exponent_width = 8
weight_exponent_bias = 127
weight_block_size = [1, 16]
bias_width = 7
bias_exponent_width = 8
bias_exponent_bias = 127
bias_block_size = [16]
)";
  CHECK(format_of(block_fp, "data_in") == "block_fp<7,8,127,[1,16]>");
  CHECK(format_of(block_fp, "weight") == "block_fp<7,8,127,[1,16],weight>");
  CHECK(format_of(block_fp, "bias") == "block_fp<7,8,127,[16],weight>");
  CHECK(format_of(R"(
[passes.quantize.default.config]
name = "block_minifloat"
data_in_width = 8
data_in_exponent_width = 4
data_in_exponent_bias_width = 4
data_in_block_size = [16]
)", "data_in") == "block_minifloat<8,4,4,[16]>");
  CHECK(format_of(R"(
[passes.quantize.default.config]
name = "block_log"
weight_width = 8
weight_exponent_bias_width = 4
weight_block_size = [16]
)", "weight") == "block_log<8,4,[16],weight>");
  CHECK(format_of(R"(
[passes.quantize.default.config]
name = "mxint_hardware"
data_in_width = 12
data_in_exponent_width = 4
data_in_parallelism = [1, 2]
)", "data_in") == "mxint<12,4,[1,2]>");
}

TEST_CASE("binary and ternary configs") {
  CHECK(format_of(R"(
[passes.quantize.default.config]
name = "binary"
data_in_width = 1
data_in_stochastic = 0
data_in_bipolar = 1
)", "data_in") == "binary");
  CHECK(format_of(R"(
[passes.quantize.default.config]
name = "ternary"
weight_width = 2
weight_scaling_factor = false
weight_mean = "NA"
)", "weight") == "ternary<0.5>");
}

TEST_CASE("bad configs name the key and the fix") {
  CHECK_THAT(message(R"(
[passes.quantize.default.config]
name = "integer"
data_in_width = 8
)", "data_in"), Catch::Contains("data_in_frac_width"));
  CHECK_THAT(message(R"(
[passes.quantize.default.config]
name = "intger"
)", "data_in"), Catch::Contains("unknown name = \"intger\""));
  CHECK_THAT(message(R"(
[passes.quantize.default.config]
name = "integer"
data_in_width = 0
data_in_frac_width = 3
)", "data_in"), Catch::Contains("width must be at least 1"));
  CHECK_THAT(message(R"(
[passes.quantize.default.config]
name = "binary"
weight_bipolar = 0
)", "weight"), Catch::Contains("mase::compat::binary_quantizer"));
}

// Found by the quant_config fuzz target (UBSan): values outside int's range and exponent widths
// whose default bias is a negative or too wide shift are errors, not undefined behaviour.
TEST_CASE("out-of-range integers and exponent widths are refused, naming the key") {
  CHECK_THAT(message(R"(
[passes.quantize.default.config]
name = "integer"
data_in_width = 8
data_in_frac_width = -2147483649
)", "data_in"), Catch::Contains("data_in_frac_width\" = -2147483649 is out of range"));
  CHECK_THAT(message(R"(
[passes.quantize.default.config]
name = "integer"
data_in_width = -9.2e15
data_in_frac_width = 3
)", "data_in"), Catch::Contains("data_in_width\" must be an integer"));
  CHECK(message(R"(
[passes.quantize.default.config]
name = "minifloat_ieee"
data_in_width = 8
data_in_exponent_width = 0
)", "data_in") != "no error");
  CHECK(message(R"(
[passes.quantize.default.config]
name = "block_fp"
data_in_width = 8
data_in_exponent_width = 40
data_in_block_size = [16]
)", "data_in") != "no error");
  CHECK(message(R"(
[passes.quantize.default.config]
name = "log"
data_in_width = 1
)", "data_in") != "no error");
}
