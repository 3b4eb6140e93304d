// Conformance of mase::compat against outputs produced by MASE's own Python code
// (tests/fixtures/mase_refs/, see its README), plus
// hand-checked facts the spec states in prose and checks of the blocking rules.

#include <mase/quant/blocking.hpp>
#include <mase/quant/mase_compat.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;
namespace compat = mase::compat;

namespace {

// ---------------------------------------------------------------------------------------------
// Reference file

std::string refs_path() {
  if (const char* from_env = std::getenv("MASE_QUANTIZER_REFS"); from_env != nullptr && *from_env != '\0')
    return from_env;
  return MASE_QUANTIZER_REFS_DEFAULT;
}

// float.hex() strings ("0x1.8p+0", "inf", "-inf", "nan") read back exactly.
float parse_hex_float(const std::string& text) { return std::strtof(text.c_str(), nullptr); }

std::vector<float> parse_values(const json& values) {
  std::vector<float> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(parse_hex_float(v.get<std::string>()));
  return out;
}

std::vector<std::int64_t> parse_ints(const json& values) {
  std::vector<std::int64_t> out;
  for (const auto& v : values) out.push_back(v.get<std::int64_t>());
  return out;
}

std::optional<int> optional_int(const json& config, const char* key) {
  if (!config.contains(key) || config.at(key).is_null()) return std::nullopt;
  return config.at(key).get<int>();
}

// ---------------------------------------------------------------------------------------------
// Dispatch: one record's quantizer + config -> mase::compat output (as float32 values)

std::vector<float> codes_as_floats(const std::vector<std::int32_t>& codes) { return {codes.begin(), codes.end()}; }

std::vector<float> run_quantizer(const std::string& quantizer, const json& c, const std::vector<float>& x,
                                 const std::vector<std::int64_t>& shape) {
  if (quantizer == "integer")
    return compat::integer_quantizer(x, c.at("width"), c.at("frac_width"), c.at("is_signed").get<bool>());
  if (quantizer == "integer_floor")
    return compat::integer_floor_quantizer(x, c.at("width"), c.at("frac_width"), c.at("is_signed").get<bool>());
  if (quantizer == "integer_for_hw")
    return codes_as_floats(compat::integer_quantizer_for_hw(x, c.at("width"), c.at("frac_width")));
  if (quantizer == "integer_floor_for_hw")
    return codes_as_floats(compat::integer_floor_quantizer_for_hw(x, c.at("width"), c.at("frac_width")));
  if (quantizer == "unsigned_integer_for_hw")
    return codes_as_floats(compat::unsigned_integer_quantizer_for_hw(x, c.at("width"), c.at("frac_width")));
  if (quantizer == "minifloat_denorm")
    return compat::minifloat_denorm_quantizer(x, c.at("width"), c.at("exponent_width"),
                                              optional_int(c, "exponent_bias"));
  if (quantizer == "minifloat_ieee")
    return compat::minifloat_ieee_quantizer(x, c.at("width"), c.at("exponent_width"), optional_int(c, "exponent_bias"));
  if (quantizer == "log") return compat::log_quantizer(x, c.at("width"), optional_int(c, "exponent_bias"));
  if (quantizer == "block_fp")
    return compat::block_fp_quantizer(x, shape, c.at("width"), c.at("exponent_width"), optional_int(c, "exponent_bias"),
                                      parse_ints(c.at("block_size")), c.at("skip_first_dim").get<bool>());
  if (quantizer == "block_minifloat")
    return compat::block_minifloat_quantizer(x, shape, c.at("width"), c.at("exponent_width"),
                                             c.at("exponent_bias_width"), parse_ints(c.at("block_size")),
                                             c.at("skip_first_dim").get<bool>());
  if (quantizer == "block_log")
    return compat::block_log_quantizer(x, shape, c.at("width"), c.at("exponent_bias_width"),
                                       parse_ints(c.at("block_size")), c.at("skip_first_dim").get<bool>());
  if (quantizer == "binary")
    return compat::binary_quantizer(x, shape, c.at("stochastic").get<bool>(), c.at("bipolar").get<bool>());
  if (quantizer == "residual_sign") {
    std::vector<float> means;  // MASE passes the means as a float32 tensor
    for (const auto& m : c.at("means")) means.push_back(static_cast<float>(m.get<double>()));
    return compat::residual_sign_quantizer(c.at("levels"), means, x, shape);
  }
  if (quantizer == "ternary") {
    std::optional<float> threshold;
    if (c.contains("threshold") && !c.at("threshold").is_null())
      threshold = static_cast<float>(c.at("threshold").get<double>());
    return compat::ternary_quantizer(x, shape, threshold, c.at("scaling_factor").get<bool>());
  }
  if (quantizer == "mxint_hardware")
    return compat::mxint_hardware(x, shape, c.at("width"), c.at("exponent_width"), parse_ints(c.at("parallelism")));
  if (quantizer == "mx")
    return compat::mx_quantize(x, shape, c.at("elem_format").get<std::string>(), c.at("scale_bits"),
                               c.at("block_size").get<std::int64_t>(), parse_ints(c.at("axes")),
                               c.at("round").get<std::string>(), c.at("flush_fp32_subnorms").get<bool>(),
                               c.value("shared_exp_method", std::string("max")));
  if (quantizer == "mx_elemwise")
    return compat::mx_quantize_elemwise(x, c.at("elem_format").get<std::string>(), c.at("round").get<std::string>(),
                                        c.at("saturate_normals").get<bool>(), c.at("allow_denorm").get<bool>());
  throw mase::error("conformance test: no dispatch for quantizer \"" + quantizer + "\"");
}

// ---------------------------------------------------------------------------------------------
// Comparison

// Bit-for-bit, except that every NaN equals every NaN (float.hex drops a NaN's sign and payload).
bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

// Distance in units in the last place on the monotone integer line of floats.
std::int64_t ulp_distance(float a, float b) {
  const auto ordered = [](float v) {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(v));
    return bits < 0 ? std::int64_t{INT32_MIN} - bits : bits;
  };
  return std::llabs(ordered(a) - ordered(b));
}

bool within_ulps(float a, float b, std::int64_t ulps) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return ulp_distance(a, b) <= ulps;
}

// What a record must satisfy (tests/fixtures/mase_refs/README.md describes the records).
enum class requirement { every_element, outside_sens_f64, within_4_ulp };

requirement requirement_for(const std::string& quantizer, const json& config) {
  static const std::set<std::string> exact = {"integer", "integer_floor", "integer_for_hw", "integer_floor_for_hw",
                                              "unsigned_integer_for_hw"};
  if (exact.count(quantizer)) return requirement::every_element;
  if (quantizer == "binary")
    return config.at("bipolar").get<bool>() ? requirement::every_element : requirement::within_4_ulp;
  if (quantizer == "ternary" || quantizer == "residual_sign") return requirement::within_4_ulp;
  return requirement::outside_sens_f64;
}

struct tally {
  std::int64_t records = 0, records_matched = 0;
  std::int64_t elements = 0, elements_matched = 0;
  std::int64_t sens = 0, sens_matched = 0;
  std::int64_t within_4_ulp = 0;
  std::int64_t required_failures = 0;  // elements that break the record's requirement
  bool has_tolerance = false;
  std::vector<std::string> first_failures;
};

std::string hex(float v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", static_cast<double>(v));
  return buffer;
}

}  // namespace

// =============================================================================================
// The reference records

TEST_CASE("mase::compat reproduces MASE's reference outputs", "[quant][mase_compat][conformance]") {
  const std::string path = refs_path();
  std::ifstream in(path);
  if (!in) {
    FAIL("cannot open the MASE reference file '" << path
                                                 << "'; set the environment variable MASE_QUANTIZER_REFS to the "
                                                    "path of mase_quantizers.jsonl");
  }

  std::map<std::string, tally> tallies;
  std::vector<std::string> order;
  std::string line;
  std::int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    const json record = json::parse(line);
    const std::string quantizer = record.at("quantizer");
    const json& config = record.at("config");
    if (!tallies.count(quantizer)) order.push_back(quantizer);
    tally& t = tallies[quantizer];

    const std::vector<float> x = parse_values(record.at("input"));
    const std::vector<float> expected = parse_values(record.at("output"));
    const std::vector<std::int64_t> shape = parse_ints(record.at("input_shape"));
    std::set<std::int64_t> sens;
    for (const auto& i : record.at("sens_f64")) sens.insert(i.get<std::int64_t>());

    std::vector<float> actual;
    try {
      actual = run_quantizer(quantizer, config, x, shape);
    } catch (const std::exception& e) {
      FAIL("line " << line_number << " (" << quantizer << " " << config.dump() << "): threw " << e.what());
    }
    REQUIRE(actual.size() == expected.size());

    const requirement rule = requirement_for(quantizer, config);
    t.has_tolerance = t.has_tolerance || rule == requirement::within_4_ulp;
    bool record_matched = true;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const bool in_sens = sens.count(static_cast<std::int64_t>(i)) != 0;
      const bool match = same_float(actual[i], expected[i]);
      const bool close = within_ulps(actual[i], expected[i], 4);
      ++t.elements;
      t.elements_matched += match;
      t.within_4_ulp += close;
      if (in_sens) {
        ++t.sens;
        t.sens_matched += match;
      }
      record_matched = record_matched && match;
      const bool ok = rule == requirement::every_element      ? match
                      : rule == requirement::outside_sens_f64 ? (match || in_sens)
                                                              : close;
      if (!ok) {
        ++t.required_failures;
        if (t.first_failures.size() < 8) {
          std::ostringstream why;
          why << "line " << line_number << " " << config.dump() << " case " << record.at("case").get<std::string>()
              << " index " << i << ": x=" << (i < x.size() ? hex(x[i]) : std::string("-")) << " expected "
              << hex(expected[i]) << " got " << hex(actual[i]);
          t.first_failures.push_back(why.str());
        }
      }
    }
    ++t.records;
    t.records_matched += record_matched;
  }

  REQUIRE(!order.empty());
  for (const std::string& quantizer : order) {
    const tally& t = tallies[quantizer];
    std::printf("%s: records %lld/%lld, elements %lld/%lld (sens_f64 elements: %lld/%lld)", quantizer.c_str(),
                static_cast<long long>(t.records_matched), static_cast<long long>(t.records),
                static_cast<long long>(t.elements_matched), static_cast<long long>(t.elements),
                static_cast<long long>(t.sens_matched), static_cast<long long>(t.sens));
    if (t.has_tolerance)
      std::printf(", within 4 ulp: %lld/%lld", static_cast<long long>(t.within_4_ulp),
                  static_cast<long long>(t.elements));
    std::printf("\n");
    for (const std::string& failure : t.first_failures) std::printf("    FAIL %s\n", failure.c_str());
  }
  std::fflush(stdout);
  for (const std::string& quantizer : order) {
    INFO(quantizer << ": " << tallies[quantizer].required_failures << " required elements do not match");
    CHECK(tallies[quantizer].required_failures == 0);
  }
}

// =============================================================================================
// Facts of MASE's quantizers (DeepWok/mase at ae4660b1: src/chop/nn/quantizers/), checked independently of the reference file

namespace {
float one(float v, auto&& quantize) {
  const std::vector<float> x{v};
  return quantize(x)[0];
}
}  // namespace

TEST_CASE("minifloat_denorm: powers of two are not fixed points", "[quant][mase_compat]") {
  const auto q = [](const std::vector<float>& x) { return compat::minifloat_denorm_quantizer(x, 8, 4, 7); };
  CHECK(one(1.0f, q) == 0.875f);
  CHECK(one(2.0f, q) == 1.75f);
  CHECK(one(-2.0f, q) == -1.75f);
  // The whole interval ((1 - 2^-(M+1)) * 2^k, 2^k] maps to (1 - 2^-M) * 2^k, M = 3.
  CHECK(one(0.9375f + 0x1p-10f, q) == 0.875f);
  // Pass-through: |x| <= fl32(1e-8) is returned unchanged.
  CHECK(one(1e-9f, q) == 1e-9f);
  CHECK(one(-5e-9f, q) == -5e-9f);
}

TEST_CASE("minifloat_ieee: no carry into the next binade", "[quant][mase_compat]") {
  const auto q = [](const std::vector<float>& x) { return compat::minifloat_ieee_quantizer(x, 8, 4, 7); };
  CHECK(one(1.97f, q) == 1.875f);
  CHECK(one(1.9375f, q) == 1.875f);  // the exact midpoint, too
  CHECK(one(1.0f, q) == 1.0f);
  // The largest value is 2^emax * (2 - 2^-M) = 2^8 * 1.875; larger values saturate.
  CHECK(one(1e6f, q) == 480.0f);
  // Subnormal step 2^(emin + 1 - M) = 2^(-7 + 1 - 3).
  CHECK(one(0x1p-9f, q) == 0x1p-9f);
}

TEST_CASE("log: never outputs 0, small negatives turn positive", "[quant][mase_compat]") {
  // w=4: Eb=3, bias=3, emin=-3, so 0 -> +2^-3 and -0.01 (|x| < 0.1*2^-3) -> +0.125.
  const auto q = [](const std::vector<float>& x) { return compat::log_quantizer(x, 4, std::nullopt); };
  CHECK(one(-0.01f, q) == 0.125f);
  CHECK(one(0.0f, q) == 0.125f);
  CHECK(one(-0.0f, q) == 0.125f);
  CHECK(one(1.0f, q) == 1.0f);
  CHECK(one(-3.0f, q) == -4.0f);  // log2(3.0125) = 1.59 rounds to 2
  CHECK(one(1e9f, q) == 16.0f);   // emax = 2^3 - 1 - 3 = 4
}

TEST_CASE("integer and for_hw quantizers", "[quant][mase_compat]") {
  const std::vector<float> x{0.3f, -0.3f, 2.5f, 3.5f, 100.0f, -100.0f, -0.26f};
  CHECK(compat::integer_quantizer(x, 4, 1) == std::vector<float>{0.5f, -0.5f, 2.5f, 3.5f, 3.5f, -4.0f, -0.5f});
  CHECK(compat::integer_floor_quantizer(x, 4, 1) == std::vector<float>{0.0f, -0.5f, 2.5f, 3.5f, 3.5f, -4.0f, -0.5f});
  // Codes are the two's-complement pattern mod 2^w: -1 -> 15 for w=4.
  CHECK(compat::integer_quantizer_for_hw(x, 4, 1) == std::vector<std::int32_t>{1, 15, 5, 7, 7, 8, 15});
  CHECK(compat::unsigned_integer_quantizer_for_hw(x, 4, 1) == std::vector<std::int32_t>{0, 0, 5, 7, 15, 0, 0});
  const std::vector<float> nan_input{std::nanf("")};
  CHECK_THROWS_AS(compat::integer_quantizer_for_hw(nan_input, 8, 2), mase::error);
}

TEST_CASE("block_fp: a block max of exactly 2^k becomes (1 - 2^-M) * 2^k", "[quant][mase_compat]") {
  std::vector<float> x(16, 0.25f);
  x[3] = 4.0f;
  const std::vector<std::int64_t> shape{1, 16};
  const std::vector<float> y = compat::block_fp_quantizer(x, shape, 8, 8, std::nullopt, {16}, true);
  CHECK(y[3] == 4.0f * (1.0f - 0x1p-7f));
  CHECK(y[0] == 0.25f);
}

TEST_CASE("mx: nearest rounds ties away from zero, even rounds them to even", "[quant][mase_compat]") {
  // int8 has 6 fractional bits after the shared scale; block max 1.0 gives scale 2^0.
  std::vector<float> x(32, 0.0f);
  x[0] = 1.0f;
  x[1] = 2.5f / 64.0f;   // t = 2.5
  x[2] = -1.5f / 64.0f;  // t = -1.5
  const std::vector<std::int64_t> shape{32};
  const std::vector<float> nearest = compat::mx_quantize(x, shape, "int8", 8, 32, {-1}, "nearest");
  const std::vector<float> even = compat::mx_quantize(x, shape, "int8", 8, 32, {-1}, "even");
  CHECK(nearest[1] == 3.0f / 64.0f);
  CHECK(nearest[2] == -2.0f / 64.0f);
  CHECK(even[1] == 2.0f / 64.0f);
  CHECK(even[2] == -2.0f / 64.0f);
  CHECK(nearest[0] == 1.0f);
}

TEST_CASE("mx_elemwise: FLT_MAX becomes NaN because log2(FLT_MAX) rounds to 128", "[quant][mase_compat]") {
  const std::vector<float> x{3.4028234663852886e38f, 1.0f, 1000.0f};
  const std::vector<float> y = compat::mx_quantize_elemwise(x, "fp8_e4m3", "nearest", true, true);
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 1.0f);
  CHECK(y[2] == 448.0f);
  const std::vector<float> e5 = compat::mx_quantize_elemwise(x, "fp8_e5m2", "nearest", false, true);
  CHECK(e5[2] == 1024.0f);
}

TEST_CASE("ternary ignores its threshold, residual_sign stacks levels", "[quant][mase_compat]") {
  const std::vector<std::int64_t> shape{1, 1, 2, 2};
  const std::vector<float> x{1.0f, -1.0f, 0.1f, 0.0f};  // delta = 0.75 * 2.1 / 4 = 0.39375
  CHECK(compat::ternary_quantizer(x, shape, 0.0f, false) == std::vector<float>{1.0f, -1.0f, 0.0f, 0.0f});
  CHECK(compat::ternary_quantizer(x, shape, 0.5f, false) == std::vector<float>{1.0f, -1.0f, 0.0f, 0.0f});
  CHECK(compat::ternary_quantizer(x, shape, std::nullopt, true) == std::vector<float>{1.0f, -1.0f, 0.0f, 0.0f});
  const std::vector<float> means{0.9f, 0.35f};
  const std::vector<float> r = compat::residual_sign_quantizer(2, means, x, shape);
  REQUIRE(r.size() == 8);
  CHECK(r[0] == 0.9f);
  CHECK(r[4] == 0.35f);  // residual 1 - 0.9 > 0
}

// =============================================================================================
// Blocking rules shared by MASE's block_fp, block_minifloat and block_log (DeepWok/mase at ae4660b1:
// src/chop/nn/quantizers/utils.py)

namespace {
std::vector<std::vector<std::int64_t>> blocks_of(const mase::block_layout& layout,
                                                 std::vector<std::int64_t>* padding = nullptr) {
  std::vector<std::vector<std::int64_t>> out;
  mase::for_each_block(layout, [&](std::int64_t, std::span<const std::int64_t> e, std::int64_t pad) {
    out.emplace_back(e.begin(), e.end());
    if (padding) padding->push_back(pad);
  });
  return out;
}
}  // namespace

TEST_CASE("MASE blocking: right-aligned block shapes, padding and tiles", "[quant][blocking]") {
  using v = std::vector<std::int64_t>;
  SECTION("1-D: runs of B, the last one padded") {
    v padding;
    const auto blocks = blocks_of(mase::make_mase_block_layout(v{5}, v{2}, false), &padding);
    CHECK(blocks == std::vector<v>{{0, 1}, {2, 3}, {4}});
    CHECK(padding == v{0, 0, 1});
  }
  SECTION("a block larger than the dim, or -1, becomes the full dim") {
    CHECK(blocks_of(mase::make_mase_block_layout(v{3}, v{16}, false)) == std::vector<v>{{0, 1, 2}});
    CHECK(blocks_of(mase::make_mase_block_layout(v{2, 3}, v{-1}, true)) == std::vector<v>{{0, 1, 2}, {3, 4, 5}});
  }
  SECTION("2-D activation: runs along each row, whatever block_size[-2] says") {
    CHECK(blocks_of(mase::make_mase_block_layout(v{2, 4}, v{4, 2}, true)) ==
          std::vector<v>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  }
  SECTION("2-D weight: [16] means all rows x 16; [2, 2] tiles") {
    CHECK(blocks_of(mase::make_mase_block_layout(v{2, 3}, v{2}, false)) == std::vector<v>{{0, 1, 3, 4}, {2, 5}});
    CHECK(blocks_of(mase::make_mase_block_layout(v{3, 2}, v{2, 2}, false)) == std::vector<v>{{0, 1, 2, 3}, {4, 5}});
  }
  SECTION("3-D with skip_first_dim: tiles over the last two dims of each batch item") {
    const auto blocks = blocks_of(mase::make_mase_block_layout(v{2, 2, 2}, v{1, 2}, true));
    CHECK(blocks == std::vector<v>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
    CHECK(blocks_of(mase::make_mase_block_layout(v{2, 2, 2}, v{1}, true)) ==
          std::vector<v>{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
    CHECK(blocks_of(mase::make_mase_block_layout(v{2, 2, 2}, v{2}, true)) ==
          std::vector<v>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  }
  SECTION("unsupported cases throw mase::error") {
    CHECK_THROWS_AS(mase::make_mase_block_layout(v{4}, v{2}, true), mase::error);
    CHECK_THROWS_AS(mase::make_mase_block_layout(v{2, 2, 2}, v{2}, false), mase::error);
    CHECK_THROWS_AS(mase::make_mase_block_layout(v{2, 2, 2, 2}, v{2}, true), mase::error);
    CHECK_THROWS_AS(mase::make_mase_block_layout(v{4}, v{0}, false), mase::error);
    CHECK_THROWS_WITH(mase::make_mase_block_layout(v{2, 2, 2}, v{2}, false),
                      Catch::Contains("[2, 2, 2]") && Catch::Contains("skip_first_dim"));
  }
}

TEST_CASE("MASE blocking: the zero-block fix", "[quant][blocking]") {
  std::vector<float> all_zero{0.0f, 0.0f};
  mase::fix_zero_block_maxima(all_zero);
  CHECK(all_zero == std::vector<float>{1.0f, 1.0f});
  std::vector<float> some_zero{0.0f, 3.0f, 0.5f};
  mase::fix_zero_block_maxima(some_zero);
  CHECK(some_zero == std::vector<float>{0.5f, 3.0f, 0.5f});
  std::vector<float> with_nan{0.0f, std::nanf(""), 0.5f};
  mase::fix_zero_block_maxima(with_nan);
  CHECK(std::isnan(with_nan[0]));
  CHECK(with_nan[2] == 0.5f);
  const std::vector<float> x{1.0f, std::nanf(""), -3.0f, 0.5f};
  const auto maxima = mase::block_max_abs(
      mase::make_mase_block_layout(std::vector<std::int64_t>{4}, std::vector<std::int64_t>{2}, false), x);
  CHECK(std::isnan(maxima[0]));
  CHECK(maxima[1] == 3.0f);
}

TEST_CASE("bad arguments name the quantizer and the fix", "[quant][mase_compat]") {
  const std::vector<float> x(12, 1.0f);
  const std::vector<std::int64_t> shape{3, 4};
  CHECK_THROWS_WITH(compat::mxint_hardware(x, shape, 8, 4, {2, 2}), Catch::Contains("mxint_hardware"));
  CHECK_THROWS_WITH(compat::mx_quantize(x, shape, "int7"), Catch::Contains("elem_format"));
  CHECK_THROWS_WITH(compat::binary_quantizer(x, shape, false, false), Catch::Contains("4-D"));
  CHECK_THROWS_WITH(compat::binary_quantizer(x, shape, true, true), Catch::Contains("stochastic"));
  const std::vector<std::int64_t> wrong{5, 4};
  CHECK_THROWS_WITH(compat::block_fp_quantizer(x, wrong), Catch::Contains("block_fp_quantizer"));
  CHECK_THROWS_WITH(compat::mx_quantize(x, shape, "int8", 8, 32, {-1}, "dither"), Catch::Contains("round"));
}
