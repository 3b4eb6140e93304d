// The two copies of every dispatched quantizer (core/dispatch.hpp): the baseline one and the
// x86-64-v3 one give the same bits on random and special inputs, in every rounding mode, for the
// element-wise and the block formats.

#include <mase/core/dispatch.hpp>
#include <mase/format/format_string.hpp>
#include <mase/quant/quantize.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

// Normal values over many binades, with the special and awkward ones mixed in: NaN, ±inf, ±0,
// subnormals, the largest floats, and values on and near the ties of fixed-point grids.
std::vector<float> awkward_inputs(std::size_t count) {
  std::mt19937 random(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> binade(-30, 30);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 0.0f, -0.0f,
                            std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 0.5f, -0.5f,
                            1.5f, -2.5f, 0.0625f, 1e-40f, -3e38f};
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (i % 7 == 0) v[i] = specials[(i / 7) % std::size(specials)];
    else if (i % 5 == 0) v[i] = std::ldexp(std::round(normal(random) * 64.0f) + 0.5f, -6);  // ties
    else v[i] = std::ldexp(normal(random), binade(random));
  }
  return v;
}

struct cap_guard {
  mase::dispatch::target previous;
  explicit cap_guard(mase::dispatch::target t) : previous(mase::dispatch::limit(t)) {}
  ~cap_guard() { mase::dispatch::limit(previous); }
};

}  // namespace

TEST_CASE("both copies of each dispatched quantizer give the same bits", "[dispatch]") {
  using mase::dispatch::target;
  if (!mase::dispatch::supports(target::x86_64_v3)) {
    WARN("this build or processor has one copy of the quantizers: nothing to compare");
    CHECK(mase::dispatch::chosen() == target::baseline);
    return;
  }
  CHECK(mase::dispatch::chosen() >= target::x86_64_v3);
  const std::vector<float> in = awkward_inputs(100003);  // not a multiple of any vector width
  const std::vector<std::int64_t> shape{1, static_cast<std::int64_t>(in.size())};  // one row: block formats skip dim 0
  const char* formats[] = {"fixed<8,3>", "fixed<8,3,floor>", "fixed<8,3,ceil>", "fixed<8,3,toward_zero>",
                           "fixed<8,3,half_away>", "fixed<8,3,half_up>", "fixed<8,3,half_down>",
                           "fixed<16,8>", "ufixed<8,4>", "fixed<8,3,half_even,wrap>", "fixed<8,3,half_even,saturate_symmetric>",
                           "fixed<32,16>", "fixed<8,-2>",
                           "minifloat<8,4,7>", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "float16", "bfloat16",
                           "minifloat<8,4,7,floor>", "log<8,63>", "log<4,3>", "binary", "ternary<0.5>",
                           // Block formats: runs of 16 and 32 and of a length known at run time.
                           "block_fp<8,8,127,[16]>", "block_fp<6,5,15,[7],floor>", "block_minifloat<8,4,8,[16]>",
                           "block_log<4,8,[16]>", "mxint<8,8,[1,32]>", "mxint8", "mxfp8_e4m3", "mxfp8_e5m2",
                           "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1"};
  for (const char* text : formats) {
    DYNAMIC_SECTION(text) {
      const mase::format f = mase::parse_format(text);
      std::vector<float> baseline(in.size()), tuned(in.size());
      {
        const cap_guard cap(target::baseline);
        mase::quantize(f, in, shape, baseline);
      }
      mase::quantize(f, in, shape, tuned);
      CHECK(std::memcmp(baseline.data(), tuned.data(), in.size() * sizeof(float)) == 0);
    }
  }
}
