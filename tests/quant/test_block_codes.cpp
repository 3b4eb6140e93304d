// Block codes: decoding what encode_blocks produced gives back exactly what quantize gives, the
// codes fit their stated widths, and the shared codes follow the table in block_codes.hpp.
#include <mase/quant/block_codes.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace mase;

namespace {

std::vector<float> sample(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> scale(-30, 30);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::ldexp(normal(gen), i % 16 == 0 ? scale(gen) : 0);
  for (std::size_t i = 0; i < n; i += 37) v[i] = 0.0f;
  return v;
}

}  // namespace

TEST_CASE("decode_blocks(encode_blocks(x)) equals quantize(x) for every block format") {
  const std::vector<std::int64_t> shape{6, 45};  // padded blocks in both dims
  const std::vector<float> x = sample(6 * 45, 3);
  for (const char* text :
       {"block_fp<8,8,127,[16]>", "block_fp<5,4,7,[4,4],weight>", "block_fp<8,8,127,[16],floor>",
        "block_minifloat<8,4,8,[16]>", "block_minifloat<6,3,4,[2,8],weight>", "block_log<5,8,[16]>",
        "block_log<4,3,[16]>", "mxint<8,8,[1,32]>", "mxint<6,4,[2,4]>", "mxint8", "mxint4", "mxint2", "mxfp8_e4m3",
        "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1", "mxfp4_e2m1<16,floor>"}) {
    INFO(text);
    const format f = parse_format(text);
    const std::vector<float> expected = quantized(f, x, shape);
    const block_codes codes = encode_blocks(f, x, shape);
    std::vector<float> decoded(x.size());
    decode_blocks(f, codes, shape, decoded);
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("element " << i << " x = " << x[i]);
      CHECK(decoded[i] == expected[i]);  // value equality: two's complement has no -0
    }
    const double element_limit = std::ldexp(1.0, static_cast<int>(std::lround(std::floor(bits_per_value(f)))));
    for (const std::uint32_t c : codes.elements) CHECK(c < element_limit);
  }
}

TEST_CASE("shared codes are the biased exponents the table states") {
  const std::vector<std::int64_t> shape{32};
  std::vector<float> x(32, 0.25f);
  x[5] = 3.0f;  // floor(log2 3) = 1
  {
    const block_codes c = encode_blocks(parse_format("mxfp8_e4m3"), x, shape);  // s = 1 - 8
    REQUIRE(c.shared.size() == 1);
    CHECK(c.shared[0] == static_cast<std::uint32_t>(1 - 8 + 127));
  }
  {
    const block_codes c = encode_blocks(parse_format("mxint8"), x, shape);  // s = 1
    CHECK(c.shared[0] == 1u + 127u);
    CHECK(c.elements[5] == 96u);  // 3.0 = 96 · 2^(1-6)
  }
  {
    // block_fp<8,8,127>: 3.0 < 2^2, so e = 2; 3.0 = 96 · 2^(2-7), sign bit clear.
    const block_codes c = encode_blocks(parse_format("block_fp<8,8,127,[32],weight>"), x, shape);
    CHECK(c.shared[0] == 2u + 127u);
    CHECK(c.elements[5] == 96u);
  }
}

TEST_CASE("block codes refuse element-wise formats, NaN where there is no NaN code, and mismatched sizes") {
  const std::vector<std::int64_t> shape{4};
  const std::vector<float> x{1.0f, 2.0f, NAN, 0.5f};
  CHECK_THROWS_WITH(encode_blocks(parse_format("fixed<8,3>"), x, shape), Catch::Contains("element-wise"));
  CHECK_THROWS_WITH(encode_blocks(parse_format("block_fp<8,8,127,[4],weight>"), x, shape), Catch::Contains("NaN"));
  block_codes codes{.shared = {0}, .elements = {0, 0}};
  std::vector<float> out(4);
  CHECK_THROWS_WITH(decode_blocks(parse_format("mxint8"), codes, shape, out), Catch::Contains("do not fit"));
}
