// MASE-style TOML quantize configs: each fixture reads into the same quantize_config as the C++
// struct written out by hand, gives the formats MASE's keys describe, and every mistake is an
// error naming the file, the table and the fix.

#include <mase/io/quant_config.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace mase;

#ifndef MASE_FIXTURE_DIR
#define MASE_FIXTURE_DIR "tests/fixtures"
#endif

namespace {

std::filesystem::path fixture(std::string_view name) {
  return std::filesystem::path(MASE_FIXTURE_DIR) / "quantize" / std::string(name);
}

quant_config operand_keys(std::string_view name,
                          std::initializer_list<std::pair<std::string_view, quant_config_value>> per_operand,
                          std::initializer_list<std::string_view> operands = {"data_in", "weight", "bias"}) {
  quant_config c{{"name", std::string(name)}};
  for (std::string_view operand : operands)
    for (const auto& [suffix, value] : per_operand) c[fmt::format("{}_{}", operand, suffix)] = value;
  return c;
}

quant_config integer_keys(std::int64_t width, std::int64_t frac) {
  return operand_keys("integer", {{"width", width}, {"frac_width", frac}});
}

// MASE's toy model: seq_blocks_0 (linear) → seq_blocks_1 (relu) → seq_blocks_2 (linear).
auto toy_model() {
  builder b;
  auto x = b.input("x", {2, 16});
  auto h = b.add("seq_blocks_0", op::linear{.in_features = 16, .out_features = 16}, x);
  h = b.add("seq_blocks_1", op::relu{}, h);
  h = b.add("seq_blocks_2", op::linear{.in_features = 16, .out_features = 5}, h);
  return b.output(h) | init_metadata | add_common_metadata;
}

const format& arg_format(const graph& g, std::string_view node_name, std::string_view entry) {
  return std::get<tensor_meta>(g.at(node_name).meta.common.args.at(entry)).precision;
}
const format& result_format(const graph& g, std::string_view node_name) {
  return g.at(node_name).meta.common.results.at("data_out_0").precision;
}

std::string message_of(const auto& run) {
  try {
    run();
  } catch (const error& e) {
    return e.what();
  }
  FAIL("no mase::error was thrown");
  return {};
}

std::string parse_error(std::string_view text) {
  return message_of([&] { (void)parse_quantize_config(text, "bad.toml"); });
}

}  // namespace

TEST_CASE("integer.toml: MASE's transform layout, one default config") {
  const quantize_config c = load_quantize_config(fixture("integer.toml"));
  CHECK(c ==
        quantize_config{.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}, .report = true});
  CHECK(c.source.file == fixture("integer.toml").string());
  CHECK(c.source.table == "passes.quantize");

  quantize_config quiet = c;
  quiet.report = false;
  const graph g = toy_model() | quantize(quiet);
  CHECK(arg_format(g, "seq_blocks_0", "data_in_0") == format(fixed_fmt{.width = 8, .frac = 3}));
  CHECK(arg_format(g, "seq_blocks_0", "bias") == format(fixed_fmt{.width = 8, .frac = 3}));
  // K = 16: 8 + 8 + 4 + 1 = 21 bits
  CHECK(result_format(g, "seq_blocks_0") == format(fixed_fmt{.width = 21, .frac = 6}));
  // seq_blocks_1 is a relu: "integer" quantizes its input unsigned, as MASE's relu_integer does.
  CHECK(result_format(g, "seq_blocks_1") == format(fixed_fmt{.width = 8, .frac = 3, .is_signed = false}));
}

TEST_CASE("fixed.toml: data_out keys and floor = true") {
  const quantize_config c = load_quantize_config(fixture("fixed.toml"));
  quant_config expected =
      operand_keys("fixed", {{"width", 8}, {"frac_width", 3}}, {"data_in", "weight", "bias", "data_out"});
  expected["floor"] = true;
  CHECK(c == quantize_config{.by = quantize_by::type, .default_config = expected, .entries = {}, .report = true});

  quantize_config quiet = c;
  quiet.report = false;
  const graph g = toy_model() | quantize(quiet);
  const format floor83 = fixed_fmt{.width = 8, .frac = 3, .round = rounding::floor};
  CHECK(arg_format(g, "seq_blocks_0", "weight") == floor83);
  CHECK(result_format(g, "seq_blocks_0") == floor83);
  CHECK(result_format(g, "seq_blocks_2") == floor83);
}

TEST_CASE("minifloat_ieee.toml") {
  const quantize_config c = load_quantize_config(fixture("minifloat_ieee.toml"));
  CHECK(c == quantize_config{.by = quantize_by::type,
                             .default_config = operand_keys(
                                 "minifloat_ieee", {{"width", 8}, {"exponent_width", 4}, {"exponent_bias", 7}}),
                             .entries = {},
                             .report = true});
  quantize_config quiet = c;
  quiet.report = false;
  const graph g = toy_model() | quantize(quiet);
  const format e4m3_finite = minifloat_fmt{.exp_bits = 4, .man_bits = 3, .bias = 7};
  CHECK(arg_format(g, "seq_blocks_0", "data_in_0") == e4m3_finite);
  CHECK(arg_format(g, "seq_blocks_2", "bias") == e4m3_finite);
  CHECK(result_format(g, "seq_blocks_0") == format(formats::float32));  // no fixed accumulator to derive
  CHECK(result_format(g, "seq_blocks_1") == e4m3_finite);                // relu keeps its input's format
}

TEST_CASE("block_fp.toml: block sizes per operand, activations blocked per row") {
  const quantize_config c = load_quantize_config(fixture("block_fp.toml"));
  quant_config expected = operand_keys("block_fp", {{"width", 7}, {"exponent_width", 8}, {"exponent_bias", 127}});
  expected["data_in_block_size"] = std::vector<std::int64_t>{1, 16};
  expected["weight_block_size"] = std::vector<std::int64_t>{1, 16};
  expected["bias_block_size"] = std::vector<std::int64_t>{16};
  CHECK(c == quantize_config{.by = quantize_by::type, .default_config = expected, .entries = {}, .report = true});

  quantize_config quiet = c;
  quiet.report = false;
  const graph g = toy_model() | quantize(quiet);
  CHECK(arg_format(g, "seq_blocks_0", "data_in_0") ==
        format(block_fp_fmt{
            .width = 7, .exp_bits = 8, .bias = 127, .block = {.rows = 1, .cols = 16, .skip_first_dim = true}}));
  CHECK(arg_format(g, "seq_blocks_0", "weight") ==
        format(block_fp_fmt{
            .width = 7, .exp_bits = 8, .bias = 127, .block = {.rows = 1, .cols = 16, .skip_first_dim = false}}));
  CHECK(arg_format(g, "seq_blocks_0", "bias") ==
        format(block_fp_fmt{.width = 7, .exp_bits = 8, .bias = 127,
                            .block = {.rows = block_shape::full, .cols = 16, .skip_first_dim = false}}));
}

TEST_CASE("toy_integer_by_name.toml: one node by name, the rest by default") {
  const quantize_config c = load_quantize_config(fixture("toy_integer_by_name.toml"));
  CHECK(c == quantize_config{.by = quantize_by::name,
                             .default_config = integer_keys(8, 4),
                             .entries = {{"seq_blocks_0", integer_keys(16, 4)}},
                             .report = true});
  quantize_config quiet = c;
  quiet.report = false;
  const graph g = toy_model() | quantize(quiet);
  CHECK(arg_format(g, "seq_blocks_0", "weight") == format(fixed_fmt{.width = 16, .frac = 4}));
  CHECK(arg_format(g, "seq_blocks_2", "weight") == format(fixed_fmt{.width = 8, .frac = 4}));
  CHECK(arg_format(g, "seq_blocks_1", "data_in_0") == format(fixed_fmt{.width = 8, .frac = 4, .is_signed = false}));
}

TEST_CASE("regex_name.toml: the quantize table alone, entries keep the file's order") {
  const quantize_config c = load_quantize_config(fixture("regex_name.toml"));
  CHECK(c == quantize_config{
                 .by = quantize_by::regex_name,
                 .default_config = integer_keys(8, 4),
                 .entries = {{"relu_\\d+", bypass{}}, {"fc_[0-9]", integer_keys(6, 2)}, {"fc_0", integer_keys(12, 6)}},
                 .report = false});
  CHECK(c.source.table.empty());

  builder b;
  auto x = b.input("x", {2, 4});
  auto h = b.add("fc_0", op::linear{.in_features = 4, .out_features = 4}, x);
  h = b.add("relu_0", op::relu{}, h);
  h = b.add("head", op::linear{.in_features = 4, .out_features = 2}, h);
  const graph g = b.output(h) | init_metadata | add_common_metadata | quantize(c);
  CHECK(arg_format(g, "fc_0", "weight") == format(fixed_fmt{.width = 6, .frac = 2}));  // "fc_[0-9]" comes first
  CHECK(arg_format(g, "head", "weight") == format(fixed_fmt{.width = 8, .frac = 4}));
  CHECK(arg_format(g, "relu_0", "data_in_0") == result_format(g, "fc_0"));            // bypassed
}

TEST_CASE("TOML values map to MASE's key types, bypass spellings become mase::bypass") {
  const quantize_config c = parse_quantize_config(R"(
by = "type"
[default.config]
name = "ternary"
data_in_threshold = 0.25
data_in_width = 2
data_in_mean = "NA"
[relu.config]
bypass = true
[gelu.config]
name = "NA"
[tanh.config]
)");
  quant_config expected{{"name", std::string("ternary")},
                        {"data_in_threshold", 0.25},
                        {"data_in_width", std::int64_t{2}},
                        {"data_in_mean", std::string("NA")}};
  CHECK(c == quantize_config{.by = quantize_by::type,
                             .default_config = expected,
                             .entries = {{"relu", bypass{}}, {"gelu", bypass{}}, {"tanh", bypass{}}}});
  CHECK(c.source.file == "<string>");
}

TEST_CASE("quantize config errors name the file, the table and the fix") {
  SECTION("a file that does not exist") {
    const std::string m = message_of([] { (void)load_quantize_config(fixture("no_such_file.toml")); });
    CHECK_THAT(m, Catch::Contains("no_such_file.toml"));
    CHECK_THAT(m, Catch::Contains("does not exist"));
  }
  SECTION("TOML syntax") {
    const std::string m = parse_error("by = \"type\"\n[default.config]\nname = = 3\n");
    CHECK_THAT(m, Catch::StartsWith("bad.toml:3:"));
    CHECK_THAT(m, Catch::Contains("TOML syntax error"));
  }
  SECTION("no by") {
    const std::string m = parse_error("[passes.quantize.default.config]\nname = \"integer\"\n");
    CHECK_THAT(m, Catch::Contains("bad.toml: [passes.quantize] has no key \"by\"; add by = \"type\""));
  }
  SECTION("a bad by") {
    CHECK_THAT(parse_error("by = \"types\"\n"),
               Catch::Contains("by must be \"type\", \"name\" or \"regex_name\", not \"types\""));
    CHECK_THAT(parse_error("by = 3\n"), Catch::Contains("not a TOML integer"));
  }
  SECTION("[passes] without quantize") {
    const std::string m = parse_error("[passes.prune]\nsparsity = 0.5\n");
    CHECK_THAT(m, Catch::Contains("bad.toml: there is no [passes.quantize] table (the [passes] table holds prune)"));
  }
  SECTION("an unknown key of the quantize table") {
    const std::string m = parse_error("[passes.quantize]\nby = \"type\"\nreprot = true\n");
    CHECK_THAT(m, Catch::Contains("bad.toml:3: [passes.quantize]: unknown key \"reprot\""));
    CHECK_THAT(m, Catch::Contains("[passes.quantize.linear.config]"));
  }
  SECTION("report must be a boolean") {
    CHECK_THAT(parse_error("by = \"type\"\nreport = 1\n"),
               Catch::Contains("the top level: report must be true or false"));
  }
  SECTION("an entry without its config table") {
    const std::string m = parse_error("by = \"type\"\n[linear]\nname = \"integer\"\n");
    CHECK_THAT(
        m, Catch::Contains("[linear]: unknown key \"name\"; an entry holds only its config table, [linear.config]"));
    CHECK_THAT(parse_error("by = \"type\"\n[linear]\n"), Catch::Contains("[linear] has no config table"));
  }
  SECTION("an unknown key of a config, with its table path") {
    const std::string m = parse_error(
        "[passes.quantize]\nby = \"type\"\n[passes.quantize.linear.config]\nname = \"integer\"\ndata_in_widht = 8\n");
    CHECK_THAT(m, Catch::StartsWith("bad.toml:3, [passes.quantize.linear.config]: unknown key \"data_in_widht\""));
    CHECK_THAT(m, Catch::Contains("did you mean data_in_width?"));
  }
  SECTION("an unknown arithmetic") {
    const std::string m = parse_error("by = \"type\"\n[default.config]\nname = \"minifloat\"\n");
    CHECK_THAT(m, Catch::Contains("[default.config]: unknown arithmetic name = \"minifloat\""));
    CHECK_THAT(m, Catch::Contains("minifloat_ieee"));
  }
  SECTION("a missing key") {
    const std::string m = parse_error("by = \"type\"\n[default.config]\nname = \"integer\"\ndata_in_width = 8\n");
    CHECK_THAT(m, Catch::Contains("bad.toml:2, [default.config]"));
    CHECK_THAT(m, Catch::Contains("missing key \"data_in_frac_width\""));
  }
  SECTION("a value of the wrong kind") {
    CHECK_THAT(parse_error("by = \"type\"\n[default.config]\nname = \"block_fp\"\ndata_in_block_size = [1.5]\n"),
               Catch::Contains("key \"data_in_block_size\" must be a list of integers"));
    CHECK_THAT(parse_error("by = \"type\"\n[default.config]\nname = \"integer\"\ndata_in_width = { a = 1 }\n"),
               Catch::Contains(
                   "key \"data_in_width\" must be a boolean, a number, a string or a list of integers, not a table"));
  }
  SECTION("an unknown op in a by-type file") {
    const std::string m = parse_error("by = \"type\"\n[conv_2d.config]\nbypass = true\n");
    CHECK_THAT(m, Catch::Contains("bad.toml, [conv_2d.config]: unknown op \"conv_2d\""));
    CHECK_THAT(m, Catch::Contains("did you mean conv2d?"));
  }
  SECTION("MASE's LUTNet baseline keys") {
    CHECK_THAT(parse_error("by = \"type\"\nbaseline_weight_path = \"w.pt\"\n"),
               Catch::Contains("mase does not support"));
  }
  SECTION("a missing key is found again when the pass meets the node, naming the file") {
    const quantize_config c = parse_quantize_config(
        "by = \"type\"\n[linear.config]\nname = \"integer\"\ndata_in_width = 8\ndata_in_frac_width = 3\n", "cfg.toml");
    const std::string m = message_of([&] { (void)(toy_model() | quantize(c)); });
    CHECK_THAT(m, Catch::Contains("node seq_blocks_0 (linear): cfg.toml, [linear.config] gives no weight format"));
    CHECK_THAT(m, Catch::Contains("add weight_width, weight_frac_width"));
  }
}
