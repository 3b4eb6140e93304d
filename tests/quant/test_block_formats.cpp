// Block formats (block_fp, block_minifloat, block_log, mxint, OCP MX with every element type)
// against the scalar references of tests/format/block_reference.hpp, written from the formulas
// in the headers' comments and OCP MX v1.0: random 1-D/2-D/3-D tensors including padded shapes,
// weight tiles and activation rows, every rounding mode where the format has one. Laws checked
// without the reference: idempotence, |y| <= the block's largest magnitude, power-of-two block
// maxima represented exactly (MASE's block_fp loses them), the partition (a weight tile or an
// activation row quantizes as the same values on their own).
#include <mase/quant/quantize.hpp>

#include "../format/block_reference.hpp"

#include <catch2/catch.hpp>

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mase;
using mase_test::ld;

namespace {

using shape_t = std::vector<std::int64_t>;

std::int64_t volume(const shape_t& s) {
  std::int64_t v = 1;
  for (auto d : s) v *= d;
  return v;
}

std::string shape_string(const shape_t& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0) r += ',';
    r += std::to_string(s[i]);
  }
  return r + "]";
}

// Random tensors with several value distributions.
std::vector<float> random_tensor(std::int64_t n, int kind, std::mt19937_64& rng) {
  std::vector<float> x(static_cast<std::size_t>(n));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (float& v : x) {
    switch (kind) {
      case 0: v = static_cast<float>(normal(rng)); break;
      case 1: v = static_cast<float>(normal(rng) * 1e-3); break;
      case 2: v = static_cast<float>(std::ldexp(unit(rng), exponent(rng))); break;  // wide dynamic range
      case 3: v = (rng() % 3 == 0) ? 0.0f : static_cast<float>(unit(rng) * 100.0); break;  // sparse
      case 4: v = static_cast<float>(std::round(unit(rng) * 16.0) / 4.0); break;  // on a coarse grid: ties
      default: v = static_cast<float>(std::ldexp(unit(rng), exponent(rng) / 3 - 130)); break;  // float32 subnormals
    }
  }
  return x;
}

struct tally {
  mase_test::mismatch_log log;
  std::size_t tensors = 0;
};

// Compares the library with the reference on one tensor, and checks idempotence and the bound.
template <class F>
void check_tensor(const F& f, const shape_t& shape, const std::vector<float>& in, mase_test::minifloat_grids& grids,
                  tally& t) {
  ++t.tensors;
  const std::string name = to_string(f) + " on " + shape_string(shape);
  std::vector<float> out(in.size());
  quantize(f, in, shape, out);
  const mase_test::tensor_result ref = mase_test::reference(f, in, shape, grids);
  for (std::size_t i = 0; i < in.size(); ++i) {
    t.log.check_lazy(mase_test::same_value(out[i], ref.y[i], false), [&] {
      return name + ": element " + std::to_string(i) + " = " + mase_test::show(in[i]) + " -> " + mase_test::show(out[i]) +
             ", expected " + mase_test::show(ref.y[i]);
    });
    t.log.check_lazy(!(std::fabs(static_cast<ld>(out[i])) > ref.bound[i]), [&] {
      return name + ": |y| = " + mase_test::show(out[i]) + " exceeds the block's largest magnitude " +
             mase_test::show(ref.bound[i]);
    });
  }
  std::vector<float> again(in.size());
  quantize(f, out, shape, again);
  for (std::size_t i = 0; i < in.size(); ++i)
    t.log.check_lazy(mase_test::same_value(again[i], out[i], false), [&] {
      return name + ": not idempotent at element " + std::to_string(i) + ": " + mase_test::show(out[i]) + " -> " +
             mase_test::show(again[i]);
    });
}

const std::vector<shape_t> shapes_2d = {{5, 7}, {6, 20}, {16, 16}, {3, 33}, {1, 64}, {9, 4}};
const std::vector<shape_t> shapes_3d = {{2, 5, 9}, {3, 4, 16}, {2, 8, 8}};
const std::vector<shape_t> shapes_1d = {{37}, {64}, {5}};

const std::vector<block_shape> mase_blocks = {
    {.rows = block_shape::full, .cols = 16, .skip_first_dim = true},
    {.rows = block_shape::full, .cols = 8, .skip_first_dim = false},
    {.rows = 4, .cols = 4, .skip_first_dim = false},
    {.rows = 4, .cols = 4, .skip_first_dim = true},
    {.rows = 2, .cols = 3, .skip_first_dim = false},
    {.rows = block_shape::full, .cols = block_shape::full, .skip_first_dim = true},
    {.rows = 3, .cols = 5, .skip_first_dim = true},
};

// The tensors a MASE block shape applies to (1-D needs weights, 3-D needs activations).
std::vector<shape_t> shapes_for(const block_shape& b) {
  std::vector<shape_t> s = shapes_2d;
  if (!b.skip_first_dim) s.insert(s.end(), shapes_1d.begin(), shapes_1d.end());
  if (b.skip_first_dim) s.insert(s.end(), shapes_3d.begin(), shapes_3d.end());
  return s;
}

// value distributions per tensor: all of them, or a sample that keeps the subnormal one
const std::vector<int> kinds = MASE_EXHAUSTIVE_LEVEL >= 1 ? std::vector<int>{0, 1, 2, 3, 4, 5} : std::vector<int>{0, 2, 5};

template <class F>
void check_on_shapes(const F& f, const std::vector<shape_t>& shapes, std::mt19937_64& rng,
                     mase_test::minifloat_grids& grids, tally& t) {
  for (const shape_t& shape : shapes)
    for (int kind : kinds) check_tensor(f, shape, random_tensor(volume(shape), kind, rng), grids, t);
}

}  // namespace

TEST_CASE("block_fp matches the scalar reference on every partition and rounding mode") {
  std::mt19937_64 rng(1);
  mase_test::minifloat_grids grids;
  tally t;
  for (const block_shape& b : mase_blocks)
    for (rounding r : all_roundings) {
      check_on_shapes(block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 127, .block = b, .round = r}, shapes_for(b), rng, grids, t);
      check_on_shapes(block_fp_fmt{.width = 4, .exp_bits = 3, .bias = 3, .block = b, .round = r}, shapes_for(b), rng, grids, t);
    }
  // narrow exponents that clamp, and a bias below float32's normal range (elements down to 2^-147)
  for (const block_fp_fmt& f : {block_fp_fmt{.width = 2, .exp_bits = 2, .bias = 1},
                                block_fp_fmt{.width = 16, .exp_bits = 4, .bias = 8},
                                block_fp_fmt{.width = 24, .exp_bits = 7, .bias = 100},
                                block_fp_fmt{.width = 3, .exp_bits = 8, .bias = 140}})
    check_on_shapes(f, shapes_for(f.block), rng, grids, t);
  INFO(t.tensors << " tensors, " << t.log.checked << " checks; first mismatches:\n" << t.log.first);
  CHECK(t.log.failed == 0);
}

TEST_CASE("block_minifloat matches the scalar reference") {
  std::mt19937_64 rng(2);
  mase_test::minifloat_grids grids;
  tally t;
  for (const block_shape& b : mase_blocks) {
    check_on_shapes(block_minifloat_fmt{.width = 8, .exp_bits = 4, .bias_bits = 8, .block = b}, shapes_for(b), rng, grids, t);
    check_on_shapes(block_minifloat_fmt{.width = 6, .exp_bits = 2, .bias_bits = 4, .block = b}, shapes_for(b), rng, grids, t);
  }
  for (const block_minifloat_fmt& f : {block_minifloat_fmt{.width = 4, .exp_bits = 3, .bias_bits = 2},
                                       block_minifloat_fmt{.width = 12, .exp_bits = 5, .bias_bits = 8},
                                       block_minifloat_fmt{.width = 3, .exp_bits = 1, .bias_bits = 3}})
    check_on_shapes(f, shapes_for(f.block), rng, grids, t);
  INFO(t.tensors << " tensors, " << t.log.checked << " checks; first mismatches:\n" << t.log.first);
  CHECK(t.log.failed == 0);
}

TEST_CASE("block_log matches the scalar reference") {
  std::mt19937_64 rng(3);
  mase_test::minifloat_grids grids;
  tally t;
  for (const block_shape& b : mase_blocks)
    for (int width : {2, 4, 8}) check_on_shapes(block_log_fmt{.width = width, .bias_bits = 8, .block = b}, shapes_for(b), rng, grids, t);
  check_on_shapes(block_log_fmt{.width = 5, .bias_bits = 3}, shapes_2d, rng, grids, t);
  INFO(t.tensors << " tensors, " << t.log.checked << " checks; first mismatches:\n" << t.log.first);
  CHECK(t.log.failed == 0);
}

TEST_CASE("mxint matches the scalar reference on tiles and runs, every rounding mode") {
  std::mt19937_64 rng(4);
  mase_test::minifloat_grids grids;
  tally t;
  const std::vector<block_shape> tiles = {{.rows = 1, .cols = 32, .skip_first_dim = false},
                                          {.rows = 4, .cols = 4, .skip_first_dim = false},
                                          {.rows = 2, .cols = 8, .skip_first_dim = false},
                                          {.rows = block_shape::full, .cols = 8, .skip_first_dim = false},
                                          {.rows = 3, .cols = block_shape::full, .skip_first_dim = false}};
  std::vector<shape_t> shapes = shapes_2d;
  shapes.insert(shapes.end(), shapes_1d.begin(), shapes_1d.end());
  shapes.insert(shapes.end(), shapes_3d.begin(), shapes_3d.end());
  for (const block_shape& b : tiles)
    for (rounding r : all_roundings) {
      check_on_shapes(mxint_fmt{.width = 8, .exp_bits = 8, .block = b, .round = r}, shapes, rng, grids, t);
      check_on_shapes(mxint_fmt{.width = 4, .exp_bits = 3, .block = b, .round = r}, shapes_2d, rng, grids, t);
    }
  check_on_shapes(mxint_fmt{.width = 2, .exp_bits = 2}, shapes, rng, grids, t);
  check_on_shapes(mxint_fmt{.width = 24, .exp_bits = 8}, shapes, rng, grids, t);
  INFO(t.tensors << " tensors, " << t.log.checked << " checks; first mismatches:\n" << t.log.first);
  CHECK(t.log.failed == 0);
}

TEST_CASE("mx matches OCP MX v1.0 for every element type, block size and rounding mode") {
  std::mt19937_64 rng(5);
  mase_test::minifloat_grids grids;
  tally t;
  std::vector<shape_t> shapes = shapes_2d;
  shapes.insert(shapes.end(), shapes_1d.begin(), shapes_1d.end());
  shapes.insert(shapes.end(), shapes_3d.begin(), shapes_3d.end());
  for (mx_element e : all_mx_elements)
    for (int size : {32, 16, 7, 1})
      for (rounding r : all_roundings) {
        if (MASE_EXHAUSTIVE_LEVEL < 1 && r != rounding::half_even && size != 32) continue;
        check_on_shapes(mx_fmt{.element = e, .block_size = size, .round = r}, shapes, rng, grids, t);
      }
  INFO(t.tensors << " tensors, " << t.log.checked << " checks; first mismatches:\n" << t.log.first);
  CHECK(t.log.failed == 0);
}

TEST_CASE("power-of-two block maxima are represented exactly") {
  // MASE's block_fp picks the exponent from ceil(log2 amax) and then clips 2^k to (2^m - 1) 2^(k-m):
  // here every block's maximum 2^k must come back as 2^k, whatever the other elements are.
  std::mt19937_64 rng(6);
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  mase_test::mismatch_log log;
  auto run = [&](const auto& f, const shape_t& shape, const mase_test::blocks_t& blocks) {
    std::vector<float> x(static_cast<std::size_t>(volume(shape)));
    std::vector<std::size_t> at_max;
    for (const auto& block : blocks) {
      const int k = exponent(rng);
      for (std::size_t i : block) x[i] = static_cast<float>(std::ldexp(unit(rng) * 0.99, k));
      const std::size_t pick = block[static_cast<std::size_t>(rng() % block.size())];
      x[pick] = static_cast<float>(std::ldexp(rng() % 2 ? 1.0 : -1.0, k));
      at_max.push_back(pick);
    }
    std::vector<float> y(x.size());
    quantize(f, x, shape, y);
    for (std::size_t i : at_max)
      log.check_lazy(y[i] == x[i], [&] {
        return to_string(f) + " on " + shape_string(shape) + ": block max " + mase_test::show(x[i]) + " -> " +
               mase_test::show(y[i]);
      });
  };
  for (int trial = 0; trial < 20; ++trial) {
    for (const block_shape& b : mase_blocks) {
      for (const shape_t& shape : shapes_for(b)) {
        const auto blocks = mase_test::mase_blocks(shape, b);
        for (int width : {2, 3, 8, 16}) run(block_fp_fmt{.width = width, .exp_bits = 8, .bias = 127, .block = b}, shape, blocks);
        run(block_minifloat_fmt{.width = 8, .exp_bits = 5, .bias_bits = 8, .block = b}, shape, blocks);
        run(block_log_fmt{.width = 6, .bias_bits = 8, .block = b}, shape, blocks);
      }
    }
    for (const shape_t& shape : shapes_2d) {
      const block_shape tile{.rows = 2, .cols = 8, .skip_first_dim = false};
      for (int width : {2, 4, 8}) run(mxint_fmt{.width = width, .exp_bits = 8, .block = tile}, shape, mase_test::mxint_blocks(shape, tile));
      for (mx_element e : all_mx_elements) run(mx_fmt{.element = e, .block_size = 8}, shape, mase_test::mx_blocks(shape, 8));
    }
  }
  INFO(log.checked << " block maxima; first mismatches:\n" << log.first);
  CHECK(log.checked > 1000);
  CHECK(log.failed == 0);
}

TEST_CASE("the partition: a weight tile or an activation row quantizes as it would on its own") {
  std::mt19937_64 rng(7);
  const shape_t shape{6, 10};
  const std::vector<float> x = random_tensor(60, 2, rng);
  for (rounding r : {rounding::half_even, rounding::floor}) {
    const block_fp_fmt weight{.width = 5, .exp_bits = 8, .bias = 127,
                              .block = {.rows = 4, .cols = 4, .skip_first_dim = false}, .round = r};
    block_fp_fmt activation = weight;
    activation.block.skip_first_dim = true;
    std::vector<float> yw(x.size()), ya(x.size());
    quantize(weight, x, shape, yw);
    quantize(activation, x, shape, ya);
    // weights: 4x4 tiles (the last ones padded): each tile alone, as one 1-D block
    for (std::int64_t r0 = 0; r0 < 6; r0 += 4)
      for (std::int64_t c0 = 0; c0 < 10; c0 += 4) {
        std::vector<float> tile;
        std::vector<std::size_t> where;
        for (std::int64_t i = r0; i < std::min<std::int64_t>(r0 + 4, 6); ++i)
          for (std::int64_t j = c0; j < std::min<std::int64_t>(c0 + 4, 10); ++j) {
            tile.push_back(x[static_cast<std::size_t>(i * 10 + j)]);
            where.push_back(static_cast<std::size_t>(i * 10 + j));
          }
        block_fp_fmt alone = weight;
        alone.block = {.rows = block_shape::full, .cols = 16, .skip_first_dim = false};
        std::vector<float> q(tile.size());
        const shape_t tile_shape{static_cast<std::int64_t>(tile.size())};
        quantize(alone, tile, tile_shape, q);
        for (std::size_t k = 0; k < tile.size(); ++k) CHECK(yw[where[k]] == q[k]);
      }
    // activations: runs of 4 along each row (the block height is ignored)
    for (std::int64_t i = 0; i < 6; ++i)
      for (std::int64_t c0 = 0; c0 < 10; c0 += 4) {
        const auto begin = x.begin() + i * 10 + c0;
        const std::vector<float> run(begin, begin + std::min<std::int64_t>(4, 10 - c0));
        block_fp_fmt alone = weight;
        alone.block = {.rows = block_shape::full, .cols = 4, .skip_first_dim = false};
        std::vector<float> q(run.size());
        const shape_t run_shape{static_cast<std::int64_t>(run.size())};
        quantize(alone, run, run_shape, q);
        for (std::size_t k = 0; k < run.size(); ++k) CHECK(ya[static_cast<std::size_t>(i * 10 + c0) + k] == q[k]);
      }
  }
}

TEST_CASE("MASE's partition rules reject the tensors MASE rejects") {
  const std::vector<float> x(24, 1.0f);
  std::vector<float> y(24);
  const block_fp_fmt activation{.block = {.rows = block_shape::full, .cols = 4, .skip_first_dim = true}};
  const block_fp_fmt weight{.block = {.rows = 2, .cols = 4, .skip_first_dim = false}};
  const shape_t one_d{24}, three_d{2, 3, 4}, four_d{2, 3, 2, 2};
  CHECK_THROWS_AS(quantize(activation, x, one_d, y), error);
  CHECK_THROWS_AS(quantize(weight, x, three_d, y), error);
  CHECK_THROWS_AS(quantize(activation, x, four_d, y), error);
  const shape_t wrong{5, 5};
  CHECK_THROWS_AS(quantize(weight, x, wrong, y), error);
}

TEST_CASE("the runtime format and the Eigen entry points agree with the descriptor calls") {
  std::mt19937_64 rng(8);
  const shape_t shape{6, 10};
  const std::vector<float> x = random_tensor(60, 0, rng);
  const std::vector<format> formats = {block_fp_fmt{.block = {.rows = 4, .cols = 4, .skip_first_dim = false}},
                                       block_minifloat_fmt{}, block_log_fmt{}, mxint_fmt{}, formats::mxfp4,
                                       mx_fmt{.element = mx_element::int8, .block_size = 4}};
  Eigen::MatrixXf m(6, 10);  // column-major storage; mase reads it as [rows, cols] row-major
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 10; ++j) m(i, j) = x[static_cast<std::size_t>(i * 10 + j)];
  for (const format& f : formats) {
    INFO(to_string(f));
    std::vector<float> direct(x.size());
    f.visit([&](const auto& d) {
      if constexpr (block_descriptor<std::remove_cvref_t<decltype(d)>>) quantize(d, x, shape, direct);
    });
    CHECK(quantized(f, x, shape) == direct);
    const Eigen::MatrixXf q = quantized(f, m);
    std::size_t mismatches = 0;
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 10; ++j)
        if (q(i, j) != direct[static_cast<std::size_t>(i * 10 + j)]) ++mismatches;
    CHECK(mismatches == 0);
  }
}
