// The quantize pass: which node gets which config, the formats it writes into common metadata
// (operands, results, the accumulator widths computed by hand), how formats flow through nodes
// nobody quantized, and every error naming what is wrong.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <type_traits>

using namespace mase;

namespace {

// x [2,3,8,8] → conv1 (3→4, 3×3, pad 1) → relu1 → pool (2×2) → flat → fc (64→10) → output
graph conv_model() {
  builder b;
  auto x = b.input("x", {2, 3, 8, 8});
  auto c = b.add("conv1",
                 op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .stride = {1}, .padding = {1}},
                 x);
  auto r = b.add("relu1", op::relu{}, c);
  auto p = b.add("pool", op::max_pool2d{.kernel_size = {2}, .stride = {2}}, r);
  auto f = b.add("flat", op::flatten{.start_dim = 1}, p);
  auto y = b.add("fc", op::linear{.in_features = 64, .out_features = 10}, f);
  return b.output(y);
}

auto with_metadata(graph g) { return std::move(g) | init_metadata | add_common_metadata; }

const format& arg_format(const graph& g, std::string_view node_name, std::string_view entry) {
  return std::get<tensor_meta>(g.at(node_name).meta.common.args.at(entry)).precision;
}
const format& result_format(const graph& g, std::string_view node_name, std::size_t i = 0) {
  return g.at(node_name).meta.common.results.at(data_out_name(i)).precision;
}

quant_config integer_keys(std::int64_t width, std::int64_t frac) {
  return {{"name", std::string("integer")},  {"data_in_width", width}, {"data_in_frac_width", frac},
          {"weight_width", width},           {"weight_frac_width", frac}, {"bias_width", width},
          {"bias_frac_width", frac}};
}

constexpr fixed_fmt fx(int width, int frac) { return {.width = width, .frac = frac}; }
constexpr fixed_fmt ufx(int width, int frac) { return {.width = width, .frac = frac, .is_signed = false}; }
const format f32 = formats::float32;

std::string message_of(const auto& run) {
  try {
    run();
  } catch (const error& e) {
    return e.what();
  }
  FAIL("no mase::error was thrown");
  return {};
}

}  // namespace

TEST_CASE("quantize by type: operands from the config, results lossless, formats flow through data movement") {
  const auto g = with_metadata(conv_model()) |
                  quantize({.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}});
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(g)>,
                               graph_with<fact::metadata_initialised, fact::common_metadata, fact::quantized>>);

  // conv1: K = in_channels · 3 · 3 = 27, ceil(log2 27) = 5; 8 + 8 + 5 + 1 (bias) = 22 bits, 3 + 3 = 6 fraction bits.
  CHECK(arg_format(g, "conv1", "data_in_0") == format(fx(8, 3)));
  CHECK(arg_format(g, "conv1", "weight") == format(fx(8, 3)));
  CHECK(arg_format(g, "conv1", "bias") == format(fx(8, 3)));
  CHECK(result_format(g, "conv1") == format(fx(22, 6)));
  // relu is quantized too: its input takes the config's format, unsigned as MASE's relu_integer
  // quantizes it, and its result keeps it.
  CHECK(arg_format(g, "relu1", "data_in_0") == format(ufx(8, 3)));
  CHECK(result_format(g, "relu1") == format(ufx(8, 3)));
  // max pool and flatten are not quantizable: they read relu1's format and pass it on.
  CHECK(arg_format(g, "pool", "data_in_0") == format(ufx(8, 3)));
  CHECK(result_format(g, "pool") == format(ufx(8, 3)));
  CHECK(arg_format(g, "flat", "data_in_0") == format(ufx(8, 3)));
  CHECK(result_format(g, "flat") == format(ufx(8, 3)));
  // fc: K = 64, ceil(log2 64) = 6; 8 + 8 + 6 + 1 = 23 bits.
  CHECK(arg_format(g, "fc", "data_in_0") == format(fx(8, 3)));
  CHECK(result_format(g, "fc") == format(fx(23, 6)));
  // the graph's input stays float; the output node carries fc's format
  CHECK(result_format(g, "x") == f32);
  CHECK(arg_format(g, "output", "data_in_0") == format(fx(23, 6)));
  CHECK(result_format(g, "output") == format(fx(23, 6)));
  CHECK(g.at("conv1").meta.common.results.at("data_out_0").type() == "fixed");
}

TEST_CASE("quantize reports what it did per node") {
  const auto result = run(with_metadata(conv_model()),
                          quantize({.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}}));
  const quantize_info& info = std::get<0>(result.info);
  CHECK(info.nodes.size() == 7);
  CHECK(info.at("conv1").outcome == quantize_outcome::quantized);
  CHECK(info.at("conv1").config_entry == "default");
  CHECK(info.at("relu1").outcome == quantize_outcome::quantized);
  CHECK(info.at("pool").outcome == quantize_outcome::not_quantizable);
  CHECK(info.at("x").outcome == quantize_outcome::not_quantizable);
  CHECK(info.count(quantize_outcome::quantized) == 3);
  const auto& changes = info.at("conv1").changes;
  REQUIRE(changes.size() == 4);
  CHECK(changes[0] == precision_change{"data_in_0", f32, fx(8, 3)});
  CHECK(changes[3] == precision_change{"data_out_0", f32, fx(22, 6)});
  // formats that flowed in count as changes too
  REQUIRE(info.at("flat").changes.size() == 2);
  CHECK(info.at("flat").changes[1] == precision_change{"data_out_0", f32, ufx(8, 3)});
  CHECK(info.at("x").changes.empty());
}

TEST_CASE("quantize: a node with no config is left alone and reads its producer's format") {
  // Only linear is configured, and there is no default.
  const graph g =
      with_metadata(conv_model()) |
      quantize({.by = quantize_by::type, .default_config = {}, .entries = {{"linear", integer_keys(4, 2)}}});
  CHECK(result_format(g, "conv1") == f32);
  CHECK(arg_format(g, "conv1", "weight") == f32);
  CHECK(arg_format(g, "fc", "data_in_0") == format(fx(4, 2)));
  CHECK(arg_format(g, "fc", "weight") == format(fx(4, 2)));
  // K = 64: 4 + 4 + 6 + 1 = 15 bits, 4 fraction bits
  CHECK(result_format(g, "fc") == format(fx(15, 4)));
}

TEST_CASE("quantize: bypass leaves a node alone, and relu still passes its input's format on") {
  const auto result = run(with_metadata(conv_model()), quantize({.by = quantize_by::type,
                                                                 .default_config = integer_keys(8, 3),
                                                                 .entries = {{"relu", bypass{}}}}));
  const graph& g = result.graph;
  CHECK(result.get<quantize_info>().at("relu1").outcome == quantize_outcome::bypassed);
  CHECK(result.get<quantize_info>().at("relu1").config_entry == "relu");
  CHECK(arg_format(g, "relu1", "data_in_0") == format(fx(22, 6)));  // conv1's result
  CHECK(result_format(g, "relu1") == format(fx(22, 6)));
  CHECK(result_format(g, "flat") == format(fx(22, 6)));
  CHECK(arg_format(g, "fc", "data_in_0") == format(fx(8, 3)));  // fc casts to its own format

  // MASE's other spellings of "leave it alone": bypass = true, name = "NA", no name.
  for (const quant_config& c :
       {quant_config{{"bypass", true}}, quant_config{{"name", std::string("NA")}}, quant_config{}}) {
    const graph h = with_metadata(conv_model()) |
                    quantize({.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {{"relu", c}}});
    CHECK(arg_format(h, "relu1", "data_in_0") == format(fx(22, 6)));
  }
}

TEST_CASE("quantize: data_out keys give the results' format, floor = true selects floor rounding") {
  quant_config c = integer_keys(8, 3);
  c["name"] = std::string("fixed");
  c["data_out_width"] = std::int64_t{10};
  c["data_out_frac_width"] = std::int64_t{4};
  c["floor"] = true;
  const graph g = with_metadata(conv_model()) | quantize({.by = quantize_by::type, .default_config = c, .entries = {}});
  const fixed_fmt floor8{.width = 8, .frac = 3, .round = rounding::floor};
  const fixed_fmt floor10{.width = 10, .frac = 4, .round = rounding::floor};
  CHECK(arg_format(g, "conv1", "data_in_0") == format(floor8));
  CHECK(arg_format(g, "conv1", "bias") == format(floor8));
  CHECK(result_format(g, "conv1") == format(floor10));
  CHECK(result_format(g, "relu1") == format(floor10));
  CHECK(result_format(g, "flat") == format(floor10));

  // Without data_out keys the derived result keeps the config's rounding.
  c.erase("data_out_width");
  c.erase("data_out_frac_width");
  const graph h = with_metadata(conv_model()) | quantize({.by = quantize_by::type, .default_config = c, .entries = {}});
  CHECK(result_format(h, "conv1") == format(fixed_fmt{.width = 22, .frac = 6, .round = rounding::floor}));
}

TEST_CASE("quant_config spells MASE's keys with plain literals") {
  const quant_config c{{"name", "integer"},    {"data_in_width", 8}, {"data_in_frac_width", 3}, {"weight_width", 8},
                       {"weight_frac_width", 3}, {"bias_width", 8},    {"bias_frac_width", 3}};
  CHECK(c == integer_keys(8, 3));
  static_assert(std::is_same_v<quantize_pass::invalidates, facts<fact::hardware_metadata>>);
}

TEST_CASE("quantize: formats given per operand") {
  const graph a = with_metadata(conv_model()) |
                  quantize({.by = quantize_by::type, .default_config = operand_formats::all(fx(8, 3)), .entries = {}});
  // "fixed" keys: MASE's hardware arithmetic, whose relu is signed like the formats above
  // ("integer" quantizes relu's input unsigned, as MASE's software does).
  quant_config fixed_keys = integer_keys(8, 3);
  fixed_keys["name"] = std::string("fixed");
  const graph b = with_metadata(conv_model()) |
                  quantize({.by = quantize_by::type, .default_config = fixed_keys, .entries = {}});
  CHECK(a == b);

  const graph g = with_metadata(conv_model()) |
                  quantize({.by = quantize_by::type,
                            .default_config = {},
                            .entries = {{"linear", operand_formats{.data_in = fx(6, 2),
                                                                   .weight = formats::e4m3,
                                                                   .bias = fx(16, 8),
                                                                   .data_out = std::nullopt}}}});
  CHECK(arg_format(g, "fc", "data_in_0") == format(fx(6, 2)));
  CHECK(arg_format(g, "fc", "weight") == format(formats::e4m3));
  CHECK(arg_format(g, "fc", "bias") == format(fx(16, 8)));
  CHECK(result_format(g, "fc") == f32);  // a minifloat weight: no fixed-point accumulator to derive
}

TEST_CASE("quantize: lossless results of matmul, bmm, add, sub and mul") {
  builder b;
  auto x = b.input("x", {2, 3, 5});
  auto y = b.input("y", {2, 5, 4});
  auto mm = b.add("mm", op::matmul{}, x, y);
  auto bm = b.add("bm", op::bmm{}, x, y);
  auto s = b.add("s", op::add{}, mm, bm);
  auto d = b.add("d", op::sub{}, mm, bm);
  auto m = b.add("m", op::mul{}, mm, bm);
  auto u = b.add("u", op::gelu{}, m);
  const auto g0 = with_metadata(b.output(s, d, u));

  quant_config c = integer_keys(8, 3);
  c["weight_width"] = std::int64_t{6};
  c["weight_frac_width"] = std::int64_t{2};
  const graph g = g0 | quantize({.by = quantize_by::type, .default_config = c, .entries = {}});
  // matmul / bmm: data_in_1 takes the weight format; K = 5 → 3 more bits: 8 + 6 + 3 = 17, frac 5.
  CHECK(arg_format(g, "mm", "data_in_0") == format(fx(8, 3)));
  CHECK(arg_format(g, "mm", "data_in_1") == format(fx(6, 2)));
  CHECK(result_format(g, "mm") == format(fx(17, 5)));
  CHECK(arg_format(g, "bm", "data_in_1") == format(fx(6, 2)));
  CHECK(result_format(g, "bm") == format(fx(17, 5)));
  // add / sub: both inputs fixed<8,3>: 5 integer bits + 1 carry + 3 fraction bits.
  CHECK(arg_format(g, "s", "data_in_0") == format(fx(8, 3)));
  CHECK(arg_format(g, "s", "data_in_1") == format(fx(8, 3)));
  CHECK(result_format(g, "s") == format(fx(9, 3)));
  CHECK(result_format(g, "d") == format(fx(9, 3)));
  // mul: widths and fractions add.
  CHECK(result_format(g, "m") == format(fx(16, 6)));
  // gelu: quantized input, float result.
  CHECK(arg_format(g, "u", "data_in_0") == format(fx(8, 3)));
  CHECK(result_format(g, "u") == f32);
}

TEST_CASE("quantize: the reduction length of grouped convolutions and bias-free layers") {
  builder b;
  auto x = b.input("x", {1, 4, 10});
  auto c =
      b.add("c", op::conv1d{.in_channels = 4, .out_channels = 4, .kernel_size = {3}, .groups = 2, .bias = false}, x);
  auto l = b.add("l", op::linear{.in_features = 8, .out_features = 3, .bias = false}, c);
  const graph g = with_metadata(b.output(l)) |
                  quantize({.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}});
  // K = (4 / 2) · 3 = 6 → 3 more bits, no bias bit: 8 + 8 + 3 = 19.
  CHECK(result_format(g, "c") == format(fx(19, 6)));
  // K = 8 → 3 more bits: 19.
  CHECK(result_format(g, "l") == format(fx(19, 6)));
  CHECK_FALSE(g.at("l").meta.common.args.contains("bias"));
}

TEST_CASE("quantize: normalisation layers take the operands MASE quantizes, and layer_norm its affine parameters") {
  builder b;
  auto x = b.input("x", {2, 4, 3, 3});
  auto bn = b.add("bn", op::batch_norm2d{.num_features = 4}, x);
  auto ln = b.add("ln", op::layer_norm{.normalized_shape = {3}}, bn);
  const graph g = with_metadata(b.output(ln)) |
                  quantize({.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}});
  CHECK(arg_format(g, "bn", "data_in_0") == format(fx(8, 3)));
  CHECK(arg_format(g, "bn", "weight") == format(fx(8, 3)));  // batch_norm2d: optional weight and bias
  CHECK(arg_format(g, "bn", "bias") == format(fx(8, 3)));
  CHECK(arg_format(g, "bn", "running_mean") == f32);
  CHECK(result_format(g, "bn") == f32);
  CHECK(arg_format(g, "ln", "data_in_0") == format(fx(8, 3)));
  // layer_norm: MASE quantizes data_in only; mase also gives the affine weight and bias the
  // config's formats (optional operands), which its integer rule needs.
  CHECK(arg_format(g, "ln", "weight") == format(fx(8, 3)));
  CHECK(arg_format(g, "ln", "bias") == format(fx(8, 3)));
  CHECK(result_format(g, "ln") == f32);

  // batch_norm2d's weight and bias are optional: a data_in-only config quantizes just the input.
  const graph k = g | init_metadata | add_common_metadata |
                  quantize({.by = quantize_by::type,
                            .default_config = {},
                            .entries = {{"batch_norm2d", operand_formats{.data_in = fx(8, 3)}}}});
  CHECK(arg_format(k, "bn", "data_in_0") == format(fx(8, 3)));
  CHECK(arg_format(k, "bn", "weight") == f32);
}

TEST_CASE("quantize: split, getitem and cat pass formats on") {
  builder b;
  auto x = b.input("x", {4, 6});
  auto fc = b.add("fc", op::linear{.in_features = 6, .out_features = 6, .bias = false}, x);
  auto parts = b.add("parts", op::split{.split_size = 3, .dim = 1}, fc);
  auto p0 = b.add("p0", op::getitem{.index = 0}, parts);
  auto p1 = b.add("p1", op::getitem{.index = -1}, parts);
  auto r = b.add("r", op::relu{}, p1);
  auto same = b.add("same", op::cat{.dim = 1}, p0, p1);
  auto mixed = b.add("mixed", op::cat{.dim = 1}, p0, r);
  const graph g =
      with_metadata(b.output(same, mixed)) |
      quantize({.by = quantize_by::type,
                .default_config = {},
                .entries = {{"linear", integer_keys(8, 3)}, {"relu", operand_formats{.data_in = fx(4, 1)}}}});
  const format acc = fx(19, 6);  // K = 6 → 3 more bits, no bias
  CHECK(result_format(g, "fc") == acc);
  CHECK(result_format(g, "parts", 0) == acc);
  CHECK(result_format(g, "parts", 1) == acc);
  CHECK(arg_format(g, "p1", "data_in_0") == acc);
  CHECK(result_format(g, "p0") == acc);
  CHECK(result_format(g, "p1") == acc);
  CHECK(result_format(g, "r") == format(fx(4, 1)));
  CHECK(result_format(g, "same") == acc);     // inputs agree
  CHECK(arg_format(g, "mixed", "data_in_1") == format(fx(4, 1)));
  CHECK(result_format(g, "mixed") == f32);    // inputs differ: no single format holds both
  CHECK(result_format(g, "output", 0) == acc);
  CHECK(result_format(g, "output", 1) == f32);
}

TEST_CASE("quantize by name and by regex_name: which entry wins") {
  builder b;
  auto x = b.input("x", {2, 4});
  auto h = b.add("fc_0", op::linear{.in_features = 4, .out_features = 4}, x);
  h = b.add("relu_0", op::relu{}, h);
  h = b.add("fc_1", op::linear{.in_features = 4, .out_features = 4}, h);
  h = b.add("head", op::linear{.in_features = 4, .out_features = 2}, h);
  const auto g0 = with_metadata(b.output(h));

  const graph by_name = g0 | quantize({.by = quantize_by::name,
                                       .default_config = integer_keys(8, 4),
                                       .entries = {{"fc_1", integer_keys(16, 4)}, {"relu_0", bypass{}}}});
  CHECK(arg_format(by_name, "fc_0", "weight") == format(fx(8, 4)));
  CHECK(arg_format(by_name, "fc_1", "weight") == format(fx(16, 4)));
  CHECK(arg_format(by_name, "head", "weight") == format(fx(8, 4)));
  CHECK(result_format(by_name, "relu_0") == result_format(by_name, "fc_0"));

  // regex_name: the first full match in config order; "fc_.*" comes before "fc_1".
  const quantize_config broad_first{.by = quantize_by::regex_name,
                                    .default_config = integer_keys(8, 4),
                                    .entries = {{"fc_.*", integer_keys(6, 2)}, {"fc_1", integer_keys(12, 6)}}};
  const graph r1 = g0 | quantize(broad_first);
  CHECK(arg_format(r1, "fc_0", "weight") == format(fx(6, 2)));
  CHECK(arg_format(r1, "fc_1", "weight") == format(fx(6, 2)));
  CHECK(arg_format(r1, "head", "weight") == format(fx(8, 4)));  // no pattern matches "head" fully
  CHECK(arg_format(r1, "relu_0", "data_in_0") == format(ufx(8, 4)));  // integer relu: unsigned input
  const quantize_config narrow_first{.by = quantize_by::regex_name,
                                     .default_config = integer_keys(8, 4),
                                     .entries = {{"fc_1", integer_keys(12, 6)}, {"fc_.*", integer_keys(6, 2)}}};
  const auto r2 = run(g0, quantize(narrow_first));
  CHECK(arg_format(r2.graph, "fc_1", "weight") == format(fx(12, 6)));
  CHECK(arg_format(r2.graph, "fc_0", "weight") == format(fx(6, 2)));
  CHECK(r2.get<quantize_info>().at("fc_1").config_entry == "fc_1");
  CHECK(r2.get<quantize_info>().at("fc_0").config_entry == "fc_.*");
  // "fc" alone is not a full match of "fc_0"
  const graph r3 =
      g0 | quantize({.by = quantize_by::regex_name, .default_config = {}, .entries = {{"fc", integer_keys(6, 2)}}});
  CHECK(arg_format(r3, "fc_0", "weight") == f32);
  // without entries or a default, every quantizable node is left alone
  CHECK(std::get<0>(run(g0, quantize({.by = quantize_by::regex_name, .default_config = {}, .entries = {}})).info)
            .count(quantize_outcome::no_config) == 4);
}

TEST_CASE("quantize errors name the entry, the key and the fix") {
  const auto g = with_metadata(conv_model());
  const auto by_type = [&](quant_config c) {
    return message_of([&] {
      (void)(g | quantize({.by = quantize_by::type, .default_config = {}, .entries = {{"linear", c}}}));
    });
  };

  SECTION("unknown key") {
    quant_config c = integer_keys(8, 3);
    c["data_in_widht"] = std::int64_t{8};
    const std::string m = by_type(c);
    CHECK_THAT(m, Catch::Contains("quantize config entry \"linear\""));
    CHECK_THAT(m, Catch::Contains("unknown key \"data_in_widht\""));
    CHECK_THAT(m, Catch::Contains("did you mean data_in_width?"));
  }
  SECTION("floor belongs to integer and fixed only") {
    quant_config c{{"name", std::string("minifloat_ieee")}, {"data_in_width", std::int64_t{8}},
                   {"data_in_exponent_width", std::int64_t{4}}, {"weight_width", std::int64_t{8}},
                   {"weight_exponent_width", std::int64_t{4}}, {"bias_width", std::int64_t{8}},
                   {"bias_exponent_width", std::int64_t{4}}, {"floor", true}};
    CHECK_THAT(by_type(c), Catch::Contains("unknown key \"floor\" for name = \"minifloat_ieee\""));
  }
  SECTION("unknown arithmetic") {
    quant_config c = integer_keys(8, 3);
    c["name"] = std::string("integr");
    const std::string m = by_type(c);
    CHECK_THAT(m, Catch::Contains("unknown arithmetic name = \"integr\""));
    CHECK_THAT(m, Catch::Contains("did you mean integer?"));
  }
  SECTION("missing key of an operand") {
    quant_config c = integer_keys(8, 3);
    c.erase("weight_frac_width");
    const std::string m = by_type(c);
    CHECK_THAT(m, Catch::Contains("quantize config entry \"linear\""));
    CHECK_THAT(m, Catch::Contains("missing key \"weight_frac_width\""));
  }
  SECTION("missing operand the op needs") {
    quant_config c{
        {"name", std::string("integer")}, {"data_in_width", std::int64_t{8}}, {"data_in_frac_width", std::int64_t{3}}};
    const std::string m =
        message_of([&] { (void)(g | quantize({.by = quantize_by::type, .default_config = c, .entries = {}})); });
    CHECK_THAT(m, Catch::Contains("node conv1 (conv2d)"));
    CHECK_THAT(m, Catch::Contains("quantize config entry \"default\" gives no weight format"));
    CHECK_THAT(m, Catch::Contains("add weight_width, weight_frac_width"));
  }
  SECTION("missing bias format for a layer with a bias") {
    const std::string m = message_of([&] {
      (void)(g | quantize({.by = quantize_by::type,
                           .default_config = {},
                           .entries = {{"linear", operand_formats{.data_in = fx(8, 3), .weight = fx(8, 3)}}}}));
    });
    CHECK_THAT(m, Catch::Contains("node fc (linear)"));
    CHECK_THAT(m, Catch::Contains("gives no bias format"));
    CHECK_THAT(m, Catch::Contains("set .bias"));
  }
  SECTION("an operand the op does not take") {
    const std::string m = message_of([&] {
      (void)(g | quantize({.by = quantize_by::type, .default_config = {}, .entries = {{"relu", integer_keys(8, 3)}}}));
    });
    CHECK_THAT(m, Catch::Contains("quantize config entry \"relu\""));
    CHECK_THAT(m, Catch::Contains("op relu has no weight operand"));
  }
  SECTION("unknown op") {
    const std::string m = message_of([&] {
      (void)(g |
             quantize({.by = quantize_by::type, .default_config = {}, .entries = {{"lienar", integer_keys(8, 3)}}}));
    });
    CHECK_THAT(m, Catch::Contains("unknown op \"lienar\""));
    CHECK_THAT(m, Catch::Contains("did you mean linear?"));
  }
  SECTION("an op that cannot be quantized") {
    const std::string m = message_of([&] {
      (void)(g |
             quantize({.by = quantize_by::type, .default_config = {}, .entries = {{"log_softmax", integer_keys(8, 3)}}}));
    });
    CHECK_THAT(m, Catch::Contains("op log_softmax cannot be quantized"));
    CHECK_THAT(m, Catch::Contains("linear"));
  }
  SECTION("a MASE op mase does not have") {
    const std::string m = message_of([&] {
      (void)(g | quantize({.by = quantize_by::type,
                           .default_config = {},
                           .entries = {{"convtranspose2d", integer_keys(8, 3)}}}));
    });
    CHECK_THAT(m, Catch::Contains("mase has no convtranspose2d op"));
  }
  SECTION("unknown node name") {
    const std::string m = message_of([&] {
      (void)(g | quantize({.by = quantize_by::name, .default_config = {}, .entries = {{"conv2", integer_keys(8, 3)}}}));
    });
    CHECK_THAT(m, Catch::Contains("no node named \"conv2\""));
    CHECK_THAT(m, Catch::Contains("did you mean conv1?"));
  }
  SECTION("a named node that cannot be quantized") {
    const std::string m = message_of([&] {
      (void)(g | quantize({.by = quantize_by::name, .default_config = {}, .entries = {{"pool", integer_keys(8, 3)}}}));
    });
    CHECK_THAT(m, Catch::Contains("node pool is a max_pool2d, which cannot be quantized"));
  }
  SECTION("keys without an arithmetic") {
    quant_config c = integer_keys(8, 3);
    c.erase("name");
    CHECK_THAT(by_type(c),
               Catch::Contains("key \"bias_frac_width\" has no effect because the entry names no arithmetic"));
  }
  SECTION("a result format too wide to hold") {
    const std::string m = by_type(integer_keys(32, 0));
    CHECK_THAT(m, Catch::Contains("node fc (linear)"));
    CHECK_THAT(m, Catch::Contains("data_out_width"));
  }
  SECTION("invalid pattern") {
    const std::string m = message_of([&] {
      (void)(g |
             quantize({.by = quantize_by::regex_name, .default_config = {}, .entries = {{"fc(", integer_keys(8, 3)}}}));
    });
    CHECK_THAT(m, Catch::Contains("\"fc(\" is not a valid regular expression"));
  }
  SECTION("patterns that would backtrack for ages or exhaust the stack") {
    // Found by fuzzing the TOML loader: nested quantifiers made std::regex_match take time
    // exponential in the name's length (tests/fuzz/corpus/quant_config/regex_nested.toml, replayed
    // by fuzz/quant_config_corpus, is the hang itself). Such patterns still work, and absurdly
    // long ones, which would exhaust the stack while compiling, are refused.
    const std::string nested = std::string(40, '(') + "f*" + std::string(40, ')') + std::string(40, '*') + "x";
    CHECK_NOTHROW((void)(g | quantize({.by = quantize_by::regex_name, .default_config = integer_keys(8, 3),
                                       .entries = {{"((((f|c|fc)*)*)*)*x", integer_keys(6, 2)},
                                                   {nested, integer_keys(6, 2)}}})));
    const std::string m = message_of([&] {
      (void)(g | quantize({.by = quantize_by::regex_name, .default_config = {},
                           .entries = {{std::string(2000, '('), integer_keys(8, 3)}}}));
    });
    CHECK_THAT(m, Catch::Contains("the regular expression is 2000 characters long; mase takes at most 1000"));
    // Found by fuzzing (UBSan): libstdc++ reads a repetition count without an overflow check.
    const std::string count = message_of([&] {
      (void)(g | quantize({.by = quantize_by::regex_name, .default_config = {},
                           .entries = {{"fc{8888888888888888888}", integer_keys(8, 3)}}}));
    });
    CHECK_THAT(count, Catch::Contains("a repetition count of more than 4 digits"));
    CHECK_NOTHROW((void)(g | quantize({.by = quantize_by::regex_name, .default_config = integer_keys(8, 3),
                                       .entries = {{"f{1,9999}c?", integer_keys(6, 2)}}})));
  }
  SECTION("duplicate entries") {
    const std::string m = message_of([&] {
      (void)(g | quantize({.by = quantize_by::type,
                           .default_config = {},
                           .entries = {{"linear", integer_keys(8, 3)}, {"linear", integer_keys(4, 2)}}}));
    });
    CHECK_THAT(m, Catch::Contains("quantize config entry \"linear\" appears twice"));
  }
  SECTION("an unused entry is checked too") {
    quant_config c = integer_keys(8, 3);
    c["weight_block_size"] = std::vector<std::int64_t>{16};
    CHECK_THAT(message_of([&] {
                 (void)(g | quantize({.by = quantize_by::type, .default_config = {}, .entries = {{"matmul", c}}}));
               }),
               Catch::Contains("unknown key \"weight_block_size\""));
  }
}

TEST_CASE("quantize again: the second run recomputes every format") {
  const auto once = with_metadata(conv_model()) |
                     quantize({.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}});
  const graph twice = once | quantize({.by = quantize_by::type, .default_config = integer_keys(4, 2), .entries = {}});
  CHECK(result_format(twice, "conv1") == format(fx(4 + 4 + 5 + 1, 4)));
  CHECK(result_format(twice, "flat") == format(ufx(4, 2)));
}

TEST_CASE("hardware_formats: results the config leaves float get formats the hardware components take") {
  // x [2,16] → fc (16→8) → act (gelu) → relu → output, with MASE's integer.toml (no data_out keys).
  builder b;
  auto x = b.input("x", {2, 16});
  auto fc = b.add("fc", op::linear{.in_features = 16, .out_features = 8}, x);
  auto act = b.add("act", op::gelu{}, fc);
  auto r = b.add("relu", op::relu{}, act);
  const auto g0 = with_metadata(b.output(r));
  quantize_config config{.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}};

  // Without it, MASE's software semantics: gelu's result float, relu's input unsigned.
  const graph software = g0 | quantize(config);
  CHECK(result_format(software, "act") == formats::float32);
  CHECK(arg_format(software, "relu", "data_in_0") == format(ufx(8, 3)));

  config.hardware_formats = true;
  const auto [hardware, info] = run(g0, quantize(config));
  CHECK(result_format(hardware, "act") == format(fx(8, 3)));             // its input's format
  CHECK(arg_format(hardware, "relu", "data_in_0") == format(fx(9, 3)));  // signed, one bit wider
  CHECK(result_format(hardware, "relu") == format(fx(9, 3)));
  // 8+8 bits, 6 fraction bits, 16 products (+4), plus the 8-bit bias (+1).
  CHECK(result_format(hardware, "fc") == format(fx(21, 6)));
  const quantize_info& record = std::get<0>(info);
  REQUIRE(record.at("act").derived.size() == 1);
  CHECK(record.at("act").derived[0].entry == "data_out_0");
  CHECK(record.at("act").derived[0].reason.starts_with("default: its input's format"));
  REQUIRE(record.at("relu").derived.size() == 2);
  CHECK(record.at("relu").derived[0].entry == "data_in_0");
  CHECK(record.at("fc").derived.at(0).reason == "exact: the accumulator plus the bias");
}

TEST_CASE("quantize: a division by a constant power of two keeps the codes and moves the point") {
  for (const auto& [divisor, frac] : {std::pair{8.0f, 7}, std::pair{0.5f, 3}, std::pair{3.0f, -1}, std::pair{-8.0f, -1}}) {
    INFO("divisor " << divisor);
    builder b(3);
    auto x = b.input("x", {2, 4});
    auto h = b.add("fc", op::linear{.in_features = 4, .out_features = 4}, x);
    auto d = b.add("d", op::constant{});
    b.set_parameter(d, "value", tensor(shape{}, {divisor}));
    const graph g = with_metadata(b.output(b.add("scaled", op::div{}, h, d))) |
                    quantize({.by = quantize_by::type,
                              .entries = {{"linear", operand_formats{.data_in = format(fx(8, 4)), .weight = format(fx(8, 4)),
                                                                     .bias = format(fx(8, 4)), .data_out = format(fx(8, 4))}}}});
    // x / 2^k is the same codes with k more fraction bits; any other divisor has no exact format.
    CHECK(result_format(g, "scaled") == (frac >= 0 ? format(fx(8, frac)) : f32));
  }
}

TEST_CASE("hardware_formats: softmax's probabilities get its input's width, every bit but the sign fractional") {
  builder b;
  auto x = b.input("x", {2, 16});
  auto fc = b.add("fc", op::linear{.in_features = 16, .out_features = 8}, x);
  const auto g0 = with_metadata(b.output(b.add("soft", op::softmax{.dim = -1}, fc)));
  quantize_config config{.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}};
  CHECK(result_format(g0 | quantize(config), "soft") == formats::float32);  // MASE's software semantics

  config.hardware_formats = true;
  const auto [hardware, info] = run(g0, quantize(config));
  CHECK(arg_format(hardware, "soft", "data_in_0") == format(fx(8, 3)));
  CHECK(result_format(hardware, "soft") == format(fx(8, 7)));
  const quantize_info& record = std::get<0>(info);
  REQUIRE(record.at("soft").derived.size() == 1);
  CHECK(record.at("soft").derived[0].reason.starts_with("default: probabilities"));
}

TEST_CASE("hardware_formats: a global average pool keeps its input's format, which MASE's software semantics leave float") {
  builder b;
  auto x = b.input("x", {2, 4, 3, 3});
  auto conv = b.add("conv", op::conv2d{.in_channels = 4, .out_channels = 4, .kernel_size = {1}}, x);
  auto gap = b.add("gap", op::mean{.dim = {2, 3}, .keepdim = true}, conv);
  const auto g0 = with_metadata(b.output(b.add("pool", op::adaptive_avg_pool2d{.output_size = {1}}, gap)));
  quantize_config config{.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}};
  const graph software = g0 | quantize(config);
  CHECK(arg_format(software, "gap", "data_in_0") == format(fx(8, 3)));  // quantizable: data_in
  CHECK(result_format(software, "gap") == formats::float32);

  config.hardware_formats = true;
  const auto [hardware, info] = run(g0, quantize(config));
  CHECK(result_format(hardware, "gap") == format(fx(8, 3)));
  CHECK(result_format(hardware, "pool") == format(fx(8, 3)));
  const quantize_info& record = std::get<0>(info);
  REQUIRE(record.at("gap").derived.size() == 1);
  CHECK(record.at("gap").derived[0].reason.starts_with("default: its input's format (a mean"));
}

TEST_CASE("hardware_formats: an average pool of 3 x 3 keeps its input's format, one of 2 x 2 takes the exact mean's") {
  builder b;
  auto x = b.input("x", {2, 4, 6, 6});
  auto relu = b.add("relu", op::relu{}, x);  // the pools read its result
  auto nine = b.add("nine", op::avg_pool2d{.kernel_size = {3}, .stride = {1}, .padding = {1}}, relu);
  const auto g0 = with_metadata(b.output(nine, b.add("four", op::avg_pool2d{.kernel_size = {2}}, relu)));
  // The mean of 2 x 2 values of format f, exact: 2 more integer and fraction bits.
  const auto exact_mean = [](const graph& g) {
    const format input = result_format(g, "relu");
    REQUIRE(input.holds<fixed_fmt>());
    fixed_fmt mean = input.get<fixed_fmt>();
    mean.width += 2;
    mean.frac += 2;
    return format(mean);
  };
  quantize_config config{.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}};
  const graph software = g0 | quantize(config);
  CHECK(result_format(software, "nine") == formats::float32);  // MASE's software semantics
  CHECK(result_format(software, "four") == exact_mean(software));

  config.hardware_formats = true;
  const auto [hardware, info] = run(g0, quantize(config));
  CHECK(result_format(hardware, "nine") == result_format(hardware, "relu"));
  CHECK(result_format(hardware, "four") == exact_mean(hardware));
  const quantize_info& record = std::get<0>(info);
  REQUIRE(record.at("nine").derived.size() == 1);
  CHECK(record.at("nine").derived[0].reason.starts_with("default: its input's format (a mean"));
  CHECK(record.at("four").derived.empty());
}
