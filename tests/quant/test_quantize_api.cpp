// The user-facing entry points: spans and Eigen, in place and out of place, runtime and
// compile-time formats, encode/decode dispatch, errors on misuse.
#include <mase/quant/quantize.hpp>

#include <catch2/catch.hpp>

#include <Eigen/Core>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mase;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(std::isnan(a[i]) && std::isnan(b[i]))) return false;
  return true;
}

}  // namespace

TEST_CASE("in place equals out of place for every family") {
  const std::vector<float> x = random_values(4 * 64, 1);
  const std::int64_t shape[] = {4, 64};
  for (const char* text : {"fixed<8,3>", "ufixed<6,2,floor,wrap>", "e4m3", "bfloat16", "log<6,15>", "binary",
                           "ternary<0.25>", "residual_sign<2,1,0.5>", "block_fp<6,8,127,[16]>",
                           "block_fp<6,8,127,[2,8],weight>", "block_minifloat<8,4,8,[16]>", "block_log<5,8,[16]>",
                           "mxint<8,8,[2,16]>", "mxint8", "mxfp4_e2m1", "mxfp6_e3m2<16>"}) {
    INFO(text);
    const format f = parse_format(text);
    const std::vector<float> out = quantized(f, x, shape);
    std::vector<float> in_place = x;
    quantize_in_place(f, in_place, shape);
    CHECK(same_bits(out, in_place));
  }
}

TEST_CASE("compile-time descriptors run the same kernel as runtime formats") {
  const std::vector<float> x = random_values(1000, 2);
  std::vector<float> a(x.size()), b(x.size());
  constexpr fixed_fmt f8{.width = 8, .frac = 3};
  quantize<f8>(x, a);
  quantize(format(f8), x, b);
  CHECK(same_bits(a, b));
  constexpr fixed_fmt negative_frac{.width = 6, .frac = -2, .round = rounding::half_away};
  quantize<negative_frac>(x, a);
  quantize(format(negative_frac), x, b);
  CHECK(same_bits(a, b));
  constexpr block_fp_fmt bfp{.width = 6, .exp_bits = 8, .bias = 127, .block = {.cols = 8}};
  const std::int64_t shape[] = {10, 100};
  quantize<bfp>(x, shape, a);
  quantize(format(bfp), x, shape, b);
  CHECK(same_bits(a, b));
  quantize<formats::mxfp4>(x, shape, a);
  quantize(format(formats::mxfp4), x, shape, b);
  CHECK(same_bits(a, b));
  quantize<formats::e5m2>(x, a);
  quantize(format(formats::e5m2), x, b);
  CHECK(same_bits(a, b));
}

TEST_CASE("Eigen arrays are row-major tensors whatever their storage order") {
  Eigen::MatrixXf col_major = Eigen::MatrixXf::Random(3, 40) * 4;
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = col_major;
  const format f = parse_format("block_fp<5,8,127,[16]>");  // rows are blocked along their columns
  const Eigen::MatrixXf q_col = quantized(f, col_major);
  const auto q_row = quantized(f, row_major);
  std::vector<float> flat(row_major.data(), row_major.data() + row_major.size());
  const std::int64_t shape[] = {3, 40};
  const std::vector<float> expected = quantized(f, flat, shape);
  for (Eigen::Index r = 0; r < 3; ++r) {
    for (Eigen::Index c = 0; c < 40; ++c) {
      CHECK(q_col(r, c) == expected[static_cast<std::size_t>(r * 40 + c)]);
      CHECK(q_row(r, c) == expected[static_cast<std::size_t>(r * 40 + c)]);
    }
  }
  Eigen::VectorXf v = Eigen::VectorXf::Random(10);
  quantize_in_place(parse_format("fixed<4,2>"), v);
  for (Eigen::Index i = 0; i < v.size(); ++i) CHECK(v(i) * 4 == std::round(v(i) * 4));
}

TEST_CASE("encode and decode dispatch on element-wise formats and refuse block formats") {
  const format f = parse_format("fixed<8,3>");
  CHECK(encode(f, -1.0f) == 0xf8u);  // -8 in two's complement
  CHECK(decode(f, 0xf8u) == -1.0f);
  std::vector<float> values{0.5f, -0.25f, 3.0f};
  std::vector<std::uint8_t> codes(values.size());
  encode<std::uint8_t>(f, values, codes);
  std::vector<float> back(values.size());
  decode<std::uint8_t>(f, codes, back);
  CHECK(back == values);
  CHECK_THROWS_AS(encode(parse_format("mxint8"), 1.0f), error);
}

TEST_CASE("misuse is a mase::error naming the problem") {
  std::vector<float> x(10), y(9);
  CHECK_THROWS_WITH(quantize(format(fixed_fmt{.width = 8, .frac = 3}), x, y), Catch::Contains("sizes differ"));
  const std::int64_t wrong_shape[] = {3, 4};
  std::vector<float> out(10);
  CHECK_THROWS_WITH(quantize(parse_format("block_fp<8,8,127,[16]>"), x, wrong_shape, out),
                    Catch::Contains("shape [3, 4]"));
  const std::int64_t four_d[] = {1, 1, 2, 5};
  CHECK_THROWS_WITH(quantize(parse_format("block_fp<8,8,127,[16]>"), x, four_d, out), Catch::Contains("rank 4"));
}

TEST_CASE("bits per value counts the shared exponent per block") {
  CHECK(bits_per_value(parse_format("fixed<8,3>")) == 8);
  CHECK(bits_per_value(parse_format("mxfp8_e4m3")) == 8.25);
  CHECK(bits_per_value(parse_format("mxfp4_e2m1")) == 4.25);
  CHECK(bits_per_value(parse_format("block_fp<8,8,127,[16]>")) == 8.5);
  CHECK(bits_per_value(parse_format("e2m1")) == 4);
}
