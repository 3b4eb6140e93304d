// The exact integer products (eval/kernels/integer_gemm.hpp) on every target this processor
// runs, against dot products summed plainly in int64 here, at random and at the extreme codes.

#include <mase/eval/integer_products.hpp>
#include <mase/eval/kernels/integer_gemm.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace mase;
using namespace mase::eval::integer_gemm;

namespace {

// C = A · Bᵀ through the kernel of `target`, A [m][k] and B [n][k] given as codes.
std::vector<std::int32_t> product(isa target, int a_bits, int b_bits, Index m, Index n, Index k,
                                  const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
  packed_rhs packed;
  pack_rhs(target, a_bits, b_bits, n, k, [&](Index column, Index i) { return b[static_cast<std::size_t>(column * k + i)]; },
           packed);
  lhs_rows rows;
  rows.reshape(packed.kind, m, k);
  for (Index r = 0; r < m; ++r)
    for (Index i = 0; i < k; ++i) rows.set(r, i, a[static_cast<std::size_t>(r * k + i)]);
  std::vector<std::int32_t> c(static_cast<std::size_t>(m * n), -7);
  multiply(rows, packed, c.data(), n);
  return c;
}

std::vector<std::int64_t> reference(Index m, Index n, Index k, const std::vector<std::int32_t>& a,
                                    const std::vector<std::int32_t>& b) {
  std::vector<std::int64_t> c(static_cast<std::size_t>(m * n));
  for (Index r = 0; r < m; ++r)
    for (Index j = 0; j < n; ++j) {
      std::int64_t sum = 0;
      for (Index i = 0; i < k; ++i)
        sum += std::int64_t{a[static_cast<std::size_t>(r * k + i)]} * b[static_cast<std::size_t>(j * k + i)];
      c[static_cast<std::size_t>(r * n + j)] = sum;
    }
  return c;
}

std::vector<std::int32_t> random_codes(std::size_t count, int bits, std::mt19937& random) {
  const std::int32_t lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
  std::uniform_int_distribution<std::int32_t> codes(lo, hi);
  std::vector<std::int32_t> v(count);
  // A third of the codes at the extremes, where saturating instructions would go wrong.
  for (auto& c : v) c = random() % 3 == 0 ? (random() % 2 == 0 ? lo : hi) : codes(random);
  return v;
}

}  // namespace

TEST_CASE("integer products equal int64 dot products on every target this processor runs", "[integer_gemm]") {
  std::mt19937 random(5);
  const std::vector<isa> targets = supported_isas();
  REQUIRE(targets.front() == isa::portable);
  // Shapes with partial register blocks (rows not a multiple of 6), partial panels (columns not a
  // multiple of 16) and k not a multiple of the pairs or quads.
  const Index shapes[][3] = {{1, 1, 1}, {5, 15, 3}, {6, 16, 4}, {7, 17, 5}, {13, 40, 63}, {12, 33, 130}, {2, 3, 1000}};
  for (isa target : targets)
    for (const auto& [a_bits, b_bits] : {std::pair{8, 8}, std::pair{4, 8}, std::pair{8, 16}, std::pair{12, 12}})
      for (const auto& s : shapes) {
        const Index m = s[0], n = s[1], k = s[2];
        // Only products whose sums fit int32 are run (integer_product_applies); skip the others.
        if (!eval::integer_product_applies({.width = a_bits}, {.width = b_bits}, k)) continue;
        DYNAMIC_SECTION(to_string(target) << " " << a_bits << "x" << b_bits << " bits, " << m << "x" << n << "x" << k) {
          const auto a = random_codes(static_cast<std::size_t>(m * k), a_bits, random);
          const auto b = random_codes(static_cast<std::size_t>(n * k), b_bits, random);
          const auto c = product(target, a_bits, b_bits, m, n, k, a, b);
          const auto expected = reference(m, n, k, a, b);
          REQUIRE(c.size() == expected.size());
          for (std::size_t i = 0; i < c.size(); ++i) REQUIRE(std::int64_t{c[i]} == expected[i]);
        }
      }
}

TEST_CASE("integer products are exact at the largest sums int32 holds", "[integer_gemm]") {
  // 8-bit codes: |Σ| ≤ k · 128 · 128, so k = 131071 is the longest product allowed: every term
  // (-128)·(-128) gives 2147467264, just under 2^31; one more term would not fit.
  const Index k = 131071;
  CHECK(eval::integer_product_applies({.width = 8}, {.width = 8}, k));
  CHECK_FALSE(eval::integer_product_applies({.width = 8}, {.width = 8}, k + 1));
  // 16-bit by 16-bit: (-32768)² = 2^30, so two terms already reach 2^31 (the one pair vpmaddwd
  // wraps): only single-term products run on int32.
  CHECK(eval::integer_product_applies({.width = 16}, {.width = 16}, 1));
  CHECK_FALSE(eval::integer_product_applies({.width = 16}, {.width = 16}, 2));
  // Wider than 16 bits, or unsigned 16-bit codes (17 signed bits), never.
  CHECK_FALSE(eval::integer_product_applies({.width = 17}, {.width = 8}, 1));
  CHECK_FALSE(eval::integer_product_applies({.width = 16, .is_signed = false}, {.width = 8}, 1));
  CHECK(eval::integer_product_applies({.width = 15, .is_signed = false}, {.width = 8}, 1));

  for (isa target : supported_isas())
    for (const auto& [a_code, b_code] : {std::pair{-128, -128}, std::pair{-128, 127}, std::pair{127, -128}}) {
      DYNAMIC_SECTION(to_string(target) << ": " << a_code << " x " << b_code << ", k = " << k) {
        const Index m = 7, n = 17;  // a partial block and a partial panel
        const std::vector<std::int32_t> a(static_cast<std::size_t>(m * k), a_code), b(static_cast<std::size_t>(n * k), b_code);
        const auto c = product(target, 8, 8, m, n, k, a, b);
        for (std::int32_t v : c) REQUIRE(std::int64_t{v} == std::int64_t{a_code} * b_code * k);
      }
    }
  for (isa target : supported_isas()) {
    DYNAMIC_SECTION(to_string(target) << ": 16-bit extremes") {
      const std::vector<std::int32_t> a{-32768, 32767, -32768}, b{-32768, -32768, 32767};
      // Three rows of one term each, by three columns.
      const auto c = product(target, 16, 16, 3, 3, 1, a, b);
      const auto expected = reference(3, 3, 1, a, b);
      for (std::size_t i = 0; i < c.size(); ++i) CHECK(std::int64_t{c[i]} == expected[i]);
    }
  }
}

TEST_CASE("the product's target follows the processor and the cap", "[integer_gemm]") {
  CHECK(supports(isa::portable));
  const isa best = best_isa();
  CHECK(supports(best));
  const isa previous = limit_isa(isa::portable);
  CHECK(best_isa() == isa::portable);
  limit_isa(previous);
  CHECK(best_isa() == best);
  // Operands laid out for different element kinds are refused, not misread.
  if (supports(isa::avx_vnni)) {
    packed_rhs quads;
    pack_rhs(isa::avx_vnni, 8, 8, 4, 8, [](Index, Index) { return 1; }, quads);
    CHECK(quads.kind == element::uint8_quads);
    lhs_rows pairs;
    pairs.reshape(element::int16_pairs, 2, 8);
    std::vector<std::int32_t> c(8);
    CHECK_THROWS_AS(multiply(pairs, quads, c.data(), 4), mase::error);
  }
}
