// The float kernels of eval/kernels/normalization.hpp (layer_norm, group_norm, rms_norm,
// instance_norm, batch_norm1d/2d, softmax, log_softmax, mean, sum, amax, amin) against
// PyTorch's formulas written out below as plain loops in double, on deterministic pseudo-random
// data.
//
// Tolerances. The kernels compute in float; the references in double are exact to far below
// float's precision. Each check allows the first-order rounding-error bound of the float
// computation, in units of u = 2⁻²⁴ (float's unit roundoff), evaluated on the data itself:
// - a sum of n terms (any order, vectorised or not) is off by at most (n-1)·u·Σ|terms|;
// - every other operation (+, -, ×, ÷, sqrt) adds u relative to its result;
// - Eigen 3.4's vectorised float exp came within 1.2 ulp of exp over [-30, 0] (a dense scan);
//   we allow 2 ulp (4u), plus the u·|x - max| that rounding the argument x - max costs.
// Each bound is derived next to its check. They are far below any mistake in a formula (a
// wrong divisor, a missing eps, one element too many or too few), which the tests would catch,
// and they show why the kernels' two-pass statistics hold up where a one-pass E[x²] - E[x]²
// would not (the offset-data cases).

#include <mase/eval/kernels/normalization.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

using namespace mase;

// Counts heap allocations, for the steady-state test at the end. AddressSanitizer brings its own
// operator new, which a replacement here would mismatch; under it the count stays 0 and that
// test is skipped.
#if defined(__SANITIZE_ADDRESS__)
#define MASE_TEST_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MASE_TEST_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef MASE_TEST_COUNTS_ALLOCATIONS
#define MASE_TEST_COUNTS_ALLOCATIONS 1
#endif

namespace {
std::size_t allocation_count = 0;
}
#if MASE_TEST_COUNTS_ALLOCATIONS
void* operator new(std::size_t size) {
  ++allocation_count;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

constexpr double u = 0x1p-24;
constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

// splitmix64: the same numbers on every platform and standard library.
struct random_source {
  std::uint64_t state;
  double next(double lo, double hi) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    z ^= z >> 31U;
    return lo + (hi - lo) * static_cast<double>(z >> 11U) * 0x1p-53;
  }
};

tensor random_tensor(const shape& s, std::uint64_t seed, double lo = -2.0, double hi = 2.0) {
  random_source rng{seed};
  std::vector<float> values(static_cast<std::size_t>(s.numel()));
  for (float& v : values) v = static_cast<float>(rng.next(lo, hi));
  return tensor(s, std::move(values));
}

double at(const tensor& t, std::int64_t i) { return static_cast<double>(t.data()[i]); }

// Runs the kernel as the evaluator would: the result buffer sized by the op's shape rule and
// filled with NaN beforehand, so an element the kernel does not write fails the comparison.
template <class Op>
tensor run(const Op& op, const tensor& x, const ordered_map<tensor>& parameters = {},
           std::vector<float>* scratch = nullptr) {
  const shape in = x.shape();
  const shape_result r = op.infer_shapes(std::span<const shape>(&in, 1));
  REQUIRE(r.ok());
  std::vector<tensor> outputs{tensor(r.shapes[0])};
  outputs[0].array().setConstant(std::numeric_limits<float>::quiet_NaN());
  const tensor* inputs[] = {&x};
  std::vector<float> local_scratch;
  const eval::kernel_args args{.inputs = inputs,
                               .parameters = &parameters,
                               .outputs = outputs,
                               .scratch = scratch ? scratch : &local_scratch,
                               .node_name = "norm"};
  eval::float_kernel(op, args);
  return outputs[0];
}

// |actual - reference| <= bound for every element; NaN and infinities must match exactly.
void check_close(const tensor& actual, const std::vector<double>& reference, const std::vector<double>& bound) {
  REQUIRE(actual.size() == reference.size());
  REQUIRE(bound.size() == reference.size());
  std::size_t failures = 0;
  std::string first;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double a = static_cast<double>(actual.values()[i]);
    const double r = reference[i];
    const bool ok = std::isnan(r) ? std::isnan(a) : std::isinf(r) ? a == r : std::abs(a - r) <= bound[i];
    if (!ok && failures++ == 0)
      first = fmt::format("element {}: kernel {:.9g}, reference {:.9g}, difference {:.3g}, bound {:.3g}", i, a, r,
                          std::abs(a - r), bound[i]);
  }
  INFO(first);
  CHECK(failures == 0);
}

// Mean, standard deviation and mean |x| of a group of values, the statistics of a normalisation.
struct group_stats {
  double mean = 0;
  double sigma = 0;  // sqrt(biased variance + eps)
  double mean_abs = 0;
  double count = 0;
};

group_stats stats_of(const std::vector<double>& values, double eps) {
  group_stats s;
  s.count = static_cast<double>(values.size());
  for (double v : values) {
    s.mean += v;
    s.mean_abs += std::abs(v);
  }
  s.mean /= s.count;
  s.mean_abs /= s.count;
  double variance = 0;
  for (double v : values) variance += (v - s.mean) * (v - s.mean);
  s.sigma = std::sqrt(variance / s.count + eps);
  return s;
}

// The bound for y = (x - mean) / sigma * w + b computed in float from two-pass statistics of n
// values (layer, group and batch norm). The float mean is off by e_mean <= (n+1)·u·mean|x| (the
// sum, then the division). The variance of the deviations from that mean is var + e_mean² (the
// first-order term cancels because the deviations sum to 0), rounded with relative error
// (n+4)·u (deviation, square, sum, division, eps's conversion to float); rsqrt adds 2u and
// halves the relative error of its argument: rho = ((n+4)u + (e_mean/sigma)²)/2 + 2u. The
// normalised value x·rstd - mean·rstd then carries |z|·(rho + 2u) + (e_mean + 3u(|x| + |mean|))/sigma,
// scaled by |w|; the affine step adds 2u·(|b| + |y|).
double normalisation_bound(const group_stats& s, double x, double z, double w, double b, double y) {
  const double e_mean = (s.count + 1) * u * s.mean_abs;
  const double rho = ((s.count + 4) * u + (e_mean / s.sigma) * (e_mean / s.sigma)) / 2 + 2 * u;
  return std::abs(w) * (std::abs(z) * (rho + 2 * u) + (e_mean + 3 * u * (std::abs(x) + std::abs(s.mean))) / s.sigma) +
         2 * u * (std::abs(b) + std::abs(y));
}

ordered_map<tensor> affine_parameters(const shape& s, std::uint64_t seed, bool with_bias = true) {
  ordered_map<tensor> p;
  p.insert_or_assign("weight", random_tensor(s, seed, 0.5, 1.5));
  if (with_bias) p.insert_or_assign("bias", random_tensor(s, seed + 1, -1.0, 1.0));
  return p;
}

// torch.nn.LayerNorm written out: every row of prod(normalized_shape) values normalised, then
// weight and bias elementwise.
void check_layer_norm(const op::layer_norm& op, const tensor& x, const ordered_map<tensor>& parameters) {
  std::int64_t width = 1;
  for (std::int64_t d : op.normalized_shape) width *= d;
  const std::int64_t rows = static_cast<std::int64_t>(x.size()) / width;
  const tensor* weight = op.elementwise_affine ? &parameters.at("weight") : nullptr;
  const tensor* bias = op.elementwise_affine && op.bias ? &parameters.at("bias") : nullptr;
  std::vector<double> reference(x.size());
  std::vector<double> bound(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(static_cast<std::size_t>(width));
    for (std::int64_t j = 0; j < width; ++j) row[static_cast<std::size_t>(j)] = at(x, r * width + j);
    const group_stats s = stats_of(row, op.eps);
    for (std::int64_t j = 0; j < width; ++j) {
      const double xv = row[static_cast<std::size_t>(j)];
      const double z = (xv - s.mean) / s.sigma;
      const double w = weight ? at(*weight, j) : 1.0;
      const double b = bias ? at(*bias, j) : 0.0;
      const auto i = static_cast<std::size_t>(r * width + j);
      reference[i] = z * w + b;
      bound[i] = normalisation_bound(s, xv, z, w, b, reference[i]);
    }
  }
  check_close(run(op, x, parameters), reference, bound);
}

}  // namespace

TEST_CASE("layer_norm: rows of the trailing dimensions, with and without the affine part") {
  SECTION("[2, 3, 8] over [8], weight and bias") {
    const op::layer_norm op{.normalized_shape = {8}};
    check_layer_norm(op, random_tensor({2, 3, 8}, 1), affine_parameters({8}, 2));
  }
  SECTION("[2, 3, 8] over [3, 8]: the row spans two dimensions") {
    const op::layer_norm op{.normalized_shape = {3, 8}};
    check_layer_norm(op, random_tensor({2, 3, 8}, 3), affine_parameters({3, 8}, 4));
  }
  SECTION("bert-tiny's shape: [2, 16, 128] over [128], eps 1e-12") {
    const op::layer_norm op{.normalized_shape = {128}, .eps = 1e-12};
    check_layer_norm(op, random_tensor({2, 16, 128}, 5), affine_parameters({128}, 6));
  }
  SECTION("elementwise_affine off: no parameters") {
    const op::layer_norm op{.normalized_shape = {5}, .elementwise_affine = false};
    check_layer_norm(op, random_tensor({4, 5}, 7), {});
  }
  SECTION("weight without bias (PyTorch's bias=False)") {
    const op::layer_norm op{.normalized_shape = {6}, .bias = false};
    check_layer_norm(op, random_tensor({3, 6}, 8), affine_parameters({6}, 9, false));
  }
  SECTION("an unbatched row and a single-value row (variance 0: the output is the bias)") {
    check_layer_norm(op::layer_norm{.normalized_shape = {7}}, random_tensor({7}, 10), affine_parameters({7}, 11));
    check_layer_norm(op::layer_norm{.normalized_shape = {1}}, random_tensor({4, 1}, 12), affine_parameters({1}, 13));
  }
  SECTION("a large offset and a large eps: the two-pass variance keeps its precision") {
    // Values 100 ± 1: E[x²] - E[x]² in float would lose about 4 of float's 7 digits.
    check_layer_norm(op::layer_norm{.normalized_shape = {32}}, random_tensor({3, 32}, 14, 99.0, 101.0),
                     affine_parameters({32}, 15));
    check_layer_norm(op::layer_norm{.normalized_shape = {16}, .eps = 0.5}, random_tensor({2, 16}, 16, -0.1, 0.1),
                     affine_parameters({16}, 17));
  }
}

TEST_CASE("group_norm: groups of channels normalised together, a per-channel affine part") {
  // torch.nn.GroupNorm written out: for sample n and group g, the C/G channels' spatial values
  // share one mean and variance; weight and bias are per channel.
  const auto check = [](const op::group_norm& op, const tensor& x, const ordered_map<tensor>& parameters) {
    const std::int64_t batch = x.shape()[0];
    const std::int64_t channels = op.num_channels;
    const std::int64_t spatial = static_cast<std::int64_t>(x.size()) / (batch * channels);
    const std::int64_t per_group = channels / op.num_groups;
    std::vector<double> reference(x.size());
    std::vector<double> bound(x.size());
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t g = 0; g < op.num_groups; ++g) {
        std::vector<double> values;
        for (std::int64_t c = g * per_group; c < (g + 1) * per_group; ++c)
          for (std::int64_t i = 0; i < spatial; ++i) values.push_back(at(x, (n * channels + c) * spatial + i));
        const group_stats s = stats_of(values, op.eps);
        for (std::int64_t c = g * per_group; c < (g + 1) * per_group; ++c)
          for (std::int64_t i = 0; i < spatial; ++i) {
            const std::int64_t index = (n * channels + c) * spatial + i;
            const double xv = at(x, index);
            const double z = (xv - s.mean) / s.sigma;
            const double w = op.affine ? at(parameters.at("weight"), c) : 1.0;
            const double b = op.affine ? at(parameters.at("bias"), c) : 0.0;
            reference[static_cast<std::size_t>(index)] = z * w + b;
            bound[static_cast<std::size_t>(index)] = normalisation_bound(s, xv, z, w, b, z * w + b);
          }
      }
    check_close(run(op, x, parameters), reference, bound);
  };
  SECTION("[2, 6, 5], 3 groups") {
    check(op::group_norm{.num_groups = 3, .num_channels = 6}, random_tensor({2, 6, 5}, 20), affine_parameters({6}, 21));
  }
  SECTION("[2, 4, 3, 5], 2 groups; 1 group (layer norm over C, H, W); 4 groups (instance norm)") {
    const tensor x = random_tensor({2, 4, 3, 5}, 22);
    const ordered_map<tensor> p = affine_parameters({4}, 23);
    check(op::group_norm{.num_groups = 2, .num_channels = 4}, x, p);
    check(op::group_norm{.num_groups = 1, .num_channels = 4}, x, p);
    check(op::group_norm{.num_groups = 4, .num_channels = 4}, x, p);
  }
  SECTION("[3, 4] without spatial dimensions; affine off; an offset and a large eps") {
    check(op::group_norm{.num_groups = 2, .num_channels = 4}, random_tensor({3, 4}, 24), affine_parameters({4}, 25));
    check(op::group_norm{.num_groups = 2, .num_channels = 6, .affine = false}, random_tensor({2, 6, 4}, 26), {});
    check(op::group_norm{.num_groups = 3, .num_channels = 6, .eps = 0.25}, random_tensor({2, 6, 7}, 27, 49.0, 51.0),
          affine_parameters({6}, 28));
  }
}

TEST_CASE("rms_norm: x / sqrt(mean(x²) + eps) * weight, eps defaulting to float32's epsilon") {
  // torch.nn.RMSNorm (PyTorch 2.4) written out. Bound: mean(x²) sums n positive terms, so its
  // relative error is (n+1)u (squares, sum, division); + eps and rsqrt give the factor's relative
  // error ((n+2)u)/2 + 2u; the two products add 2u: |y|·((n+2)/2 + 4)·u.
  const auto check = [](const op::rms_norm& op, const tensor& x, const ordered_map<tensor>& parameters) {
    std::int64_t width = 1;
    for (std::int64_t d : op.normalized_shape) width *= d;
    std::vector<double> reference(x.size());
    std::vector<double> bound(x.size());
    for (std::int64_t r = 0; r < static_cast<std::int64_t>(x.size()) / width; ++r) {
      double squares = 0;
      for (std::int64_t j = 0; j < width; ++j) squares += at(x, r * width + j) * at(x, r * width + j);
      const double inverse_rms = 1.0 / std::sqrt(squares / static_cast<double>(width) + op.eps);
      for (std::int64_t j = 0; j < width; ++j) {
        const auto i = static_cast<std::size_t>(r * width + j);
        const double w = op.elementwise_affine ? at(parameters.at("weight"), j) : 1.0;
        reference[i] = at(x, r * width + j) * inverse_rms * w;
        bound[i] = std::abs(reference[i]) * ((static_cast<double>(width) + 2) / 2 + 4) * u;
      }
    }
    check_close(run(op, x, parameters), reference, bound);
  };
  static_assert(op::rms_norm{}.eps == static_cast<double>(std::numeric_limits<float>::epsilon()));
  SECTION("[2, 3, 8] over [8] with weight; over [3, 8]") {
    check(op::rms_norm{.normalized_shape = {8}}, random_tensor({2, 3, 8}, 30), affine_parameters({8}, 31, false));
    check(op::rms_norm{.normalized_shape = {3, 8}}, random_tensor({2, 3, 8}, 32), affine_parameters({3, 8}, 33, false));
  }
  SECTION("no weight; values small enough that the default eps (2⁻²³) matters") {
    // mean(x²) ≈ 3e-9 against eps ≈ 1.2e-7: without eps the result would be ~6× larger.
    check(op::rms_norm{.normalized_shape = {16}, .elementwise_affine = false}, random_tensor({4, 16}, 34, -1e-4, 1e-4),
          {});
    check(op::rms_norm{.normalized_shape = {5}, .eps = 1e-6}, random_tensor({5}, 35),
          affine_parameters({5}, 36, false));
  }
  SECTION("an all-zero row gives zeros") {
    check(op::rms_norm{.normalized_shape = {4}}, tensor({2, 4}), affine_parameters({4}, 37, false));
  }
}

namespace {

// torch.nn.BatchNorm1d/2d in eval() written out: per channel c,
// y = (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c, with the running statistics when the
// module tracks them and otherwise the batch's own (biased variance over N and the spatial values).
template <class Op>
void check_batch_norm(const Op& op, const tensor& x, const ordered_map<tensor>& parameters) {
  const std::int64_t batch = x.shape()[0];
  const std::int64_t channels = op.num_features;
  const std::int64_t spatial = static_cast<std::int64_t>(x.size()) / (batch * channels);
  std::vector<double> reference(x.size());
  std::vector<double> bound(x.size());
  for (std::int64_t c = 0; c < channels; ++c) {
    const double w = op.affine ? at(parameters.at("weight"), c) : 1.0;
    const double b = op.affine ? at(parameters.at("bias"), c) : 0.0;
    group_stats s;
    if (op.track_running_stats) {
      s.mean = at(parameters.at("running_mean"), c);
      s.sigma = std::sqrt(at(parameters.at("running_var"), c) + op.eps);
    } else {
      std::vector<double> values;
      for (std::int64_t n = 0; n < batch; ++n)
        for (std::int64_t i = 0; i < spatial; ++i) values.push_back(at(x, (n * channels + c) * spatial + i));
      s = stats_of(values, op.eps);
    }
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t i = 0; i < spatial; ++i) {
        const std::int64_t index = (n * channels + c) * spatial + i;
        const double xv = at(x, index);
        const double z = (xv - s.mean) / s.sigma;
        const double y = z * w + b;
        reference[static_cast<std::size_t>(index)] = y;
        if (op.track_running_stats) {
          // alpha = w / sqrt(var + eps) carries 4u (eps's conversion, +, sqrt, ÷, ×);
          // beta = b - mean·alpha and y = x·alpha + beta add u per operation: 6u over the terms.
          const double alpha = w / s.sigma;
          bound[static_cast<std::size_t>(index)] =
              6 * u * (std::abs(xv * alpha) + std::abs(s.mean * alpha) + std::abs(b) + std::abs(y));
        } else {
          bound[static_cast<std::size_t>(index)] = normalisation_bound(s, xv, z, w, b, y);
        }
      }
  }
  check_close(run(op, x, parameters), reference, bound);
}

ordered_map<tensor> batch_norm_parameters(std::int64_t channels, std::uint64_t seed, bool affine, bool running) {
  ordered_map<tensor> p;
  if (affine) p = affine_parameters({channels}, seed);
  if (running) {
    p.insert_or_assign("running_mean", random_tensor({channels}, seed + 2, -1.0, 1.0));
    p.insert_or_assign("running_var", random_tensor({channels}, seed + 3, 0.1, 2.0));
  }
  return p;
}

}  // namespace

TEST_CASE("batch_norm1d and batch_norm2d at inference: running statistics, or the batch's own") {
  for (const bool affine : {true, false}) {
    for (const bool running : {true, false}) {
      CAPTURE(affine, running);
      const op::batch_norm1d bn1{.num_features = 5, .affine = affine, .track_running_stats = running};
      check_batch_norm(bn1, random_tensor({4, 5}, 40), batch_norm_parameters(5, 41, affine, running));
      check_batch_norm(bn1, random_tensor({3, 5, 7}, 42), batch_norm_parameters(5, 43, affine, running));
      const op::batch_norm2d bn2{.num_features = 3, .eps = 1e-3, .affine = affine, .track_running_stats = running};
      check_batch_norm(bn2, random_tensor({2, 3, 4, 5}, 44), batch_norm_parameters(3, 45, affine, running));
    }
  }
  SECTION("batch statistics of offset data; one sample with running statistics") {
    const op::batch_norm2d bn{.num_features = 2, .track_running_stats = false};
    check_batch_norm(bn, random_tensor({3, 2, 4, 4}, 46, 19.0, 21.0), batch_norm_parameters(2, 47, true, false));
    const op::batch_norm1d one{.num_features = 3};
    check_batch_norm(one, random_tensor({1, 3}, 48), batch_norm_parameters(3, 49, true, true));
  }
  SECTION("batch statistics of a single value per channel are refused, as PyTorch does") {
    const op::batch_norm1d bn{.num_features = 3, .track_running_stats = false};
    CHECK_THROWS_WITH(run(bn, random_tensor({1, 3}, 50), batch_norm_parameters(3, 51, true, false)),
                      Catch::Contains("node norm") && Catch::Contains("more than 1 value per channel"));
  }
}

namespace {

// torch.softmax written out: along dim, exp(x - max) / Σ exp(x - max); a NaN in a slice makes
// the slice NaN. Bound: each exp(x_j - max) is off by eta_j = (|x_j - max| + 4)·u relative (the
// rounded argument, then 2 ulp of exp); the sum of n of them by (n-1)u plus the largest eta;
// the reciprocal and the product add 2u: y_i·(eta_i + max eta + (n+1)u). The kernel flushes
// exponentials below the smallest normal float (2⁻¹²⁶) to 0, which that bound adds absolutely.
void check_softmax(const op::softmax& op, const tensor& x) {
  const shape& s = x.shape();
  const int rank = s.size();
  const int dim = rank == 0 ? 0 : static_cast<int>(op.dim < 0 ? op.dim + rank : op.dim);
  const std::int64_t length = rank == 0 ? 1 : s[dim];
  std::int64_t inner = 1;
  for (int d = dim + 1; d < rank; ++d) inner *= s[d];
  const std::int64_t outer = static_cast<std::int64_t>(x.size()) / (length * inner);
  std::vector<double> reference(x.size());
  std::vector<double> bound(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t k = 0; k < inner; ++k) {
      const auto index = [&](std::int64_t j) { return static_cast<std::size_t>((o * length + j) * inner + k); };
      bool has_nan = false;
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < length; ++j) {
        has_nan = has_nan || std::isnan(at(x, static_cast<std::int64_t>(index(j))));
        max = std::max(max, at(x, static_cast<std::int64_t>(index(j))));
      }
      double sum = 0;
      double max_eta = 0;
      for (std::int64_t j = 0; j < length; ++j) {
        const double shifted = at(x, static_cast<std::int64_t>(index(j))) - max;
        sum += std::exp(shifted);
        if (std::isfinite(shifted)) max_eta = std::max(max_eta, (std::abs(shifted) + 4) * u);
      }
      for (std::int64_t j = 0; j < length; ++j) {
        const double shifted = at(x, static_cast<std::int64_t>(index(j))) - max;
        const double y = has_nan ? nan_value : std::exp(shifted) / sum;
        reference[index(j)] = y;
        const double eta = std::isfinite(shifted) ? (std::abs(shifted) + 4) * u : 0.0;
        bound[index(j)] = y * (eta + max_eta + (static_cast<double>(length) + 1) * u) +
                          static_cast<double>(std::numeric_limits<float>::min());
      }
    }
  check_close(run(op, x), reference, bound);
}

}  // namespace

TEST_CASE("softmax: along any dimension, stable for large values, -inf and NaN as PyTorch") {
  SECTION("the last dimension (contiguous rows), dim -1 and its positive spelling") {
    check_softmax(op::softmax{}, random_tensor({3, 7}, 60, -4.0, 4.0));
    check_softmax(op::softmax{.dim = 2}, random_tensor({2, 4, 33}, 61, -4.0, 4.0));
  }
  SECTION("an inner dimension: dim 0, 1 and -2 of [2, 5, 4]") {
    const tensor x = random_tensor({2, 5, 4}, 62, -4.0, 4.0);
    check_softmax(op::softmax{.dim = 0}, x);
    check_softmax(op::softmax{.dim = 1}, x);
    check_softmax(op::softmax{.dim = -2}, x);
    check_softmax(op::softmax{.dim = -3}, x);
  }
  SECTION("a rank-0 tensor is 1; a dimension of size 1 gives ones") {
    check_softmax(op::softmax{}, tensor({}, {3.5f}));
    check_softmax(op::softmax{.dim = 1}, random_tensor({3, 1, 2}, 63));
  }
  SECTION("values near 1000 (exp would overflow without subtracting the max)") {
    check_softmax(op::softmax{}, random_tensor({4, 9}, 64, 995.0, 1000.0));
    check_softmax(op::softmax{.dim = 0}, random_tensor({9, 4}, 65, 995.0, 1000.0));
  }
  SECTION("masked entries (-inf, or float's lowest as Hugging Face masks) get exactly 0; a NaN poisons its slice") {
    tensor x = random_tensor({3, 6}, 66);
    x.data()[1] = -std::numeric_limits<float>::infinity();
    x.data()[4] = std::numeric_limits<float>::lowest();
    x.data()[5] = -95.0f;  // exp(-95 - max) is below float's normal range
    x.data()[8] = std::numeric_limits<float>::quiet_NaN();
    check_softmax(op::softmax{}, x);
    check_softmax(op::softmax{.dim = 0}, x);
    for (const op::softmax& op : {op::softmax{}, op::softmax{.dim = 0}}) {
      const tensor y = run(op, x);
      CHECK(y.data()[1] == 0.0f);
      CHECK(y.data()[4] == 0.0f);
      CHECK(y.data()[5] == 0.0f);
      CHECK(std::isnan(y.data()[8]));
      CHECK(!std::isnan(y.data()[12]));
    }
    CHECK(std::isnan(run(op::softmax{}, x).data()[6]));           // row 1 holds the NaN
    CHECK(!std::isnan(run(op::softmax{.dim = 0}, x).data()[6]));  // column 0 does not
  }
}

namespace {

// torch.mean written out: an odometer over the input, each value added to the output position
// of its kept coordinates, then divided by the reduced count; an empty reduction is NaN.
// Bound: the kernel sums the R = count values of each output in some order, off by at most
// ·u·Σ|x|, then divides, adding u·|mean|: u·(Σ|x|·(R-1)/R + |mean|).
void check_mean(const op::mean& op, const tensor& x) {
  const shape& s = x.shape();
  std::vector<bool> reduced(static_cast<std::size_t>(s.size()), op.dim.empty());
  if (s.size() > 0)  // a rank-0 tensor's dim 0 or -1 names the tensor itself
    for (std::int64_t d : op.dim) reduced[static_cast<std::size_t>(d < 0 ? d + s.size() : d)] = true;
  const shape in = s;
  const shape_result r = op.infer_shapes(std::span<const shape>(&in, 1));
  REQUIRE(r.ok());
  const auto out_count = static_cast<std::size_t>(r.shapes[0].numel());
  std::vector<double> sum(out_count, 0.0);
  std::vector<double> sum_abs(out_count, 0.0);
  double count = 1;
  for (int d = 0; d < s.size(); ++d)
    if (reduced[static_cast<std::size_t>(d)]) count *= static_cast<double>(s[d]);
  std::vector<std::int64_t> coordinate(static_cast<std::size_t>(s.size()), 0);
  for (std::int64_t flat = 0; flat < static_cast<std::int64_t>(x.size()); ++flat) {
    std::int64_t rest = flat;
    for (int d = s.size() - 1; d >= 0; --d) {
      coordinate[static_cast<std::size_t>(d)] = rest % s[d];
      rest /= s[d];
    }
    std::size_t out = 0;
    for (int d = 0; d < s.size(); ++d)
      if (!reduced[static_cast<std::size_t>(d)])
        out = out * static_cast<std::size_t>(s[d]) + static_cast<std::size_t>(coordinate[static_cast<std::size_t>(d)]);
    sum[out] += at(x, flat);
    sum_abs[out] += std::abs(at(x, flat));
  }
  std::vector<double> reference(out_count);
  std::vector<double> bound(out_count);
  for (std::size_t i = 0; i < out_count; ++i) {
    reference[i] = count == 0 ? nan_value : sum[i] / count;
    bound[i] = count == 0 ? 0.0 : u * (sum_abs[i] * (count - 1) / count + std::abs(reference[i]));
  }
  const tensor y = run(op, x);
  CHECK(y.shape() == r.shapes[0]);
  check_close(y, reference, bound);
}

}  // namespace

TEST_CASE("mean: any set of dimensions, keepdim, negative dims, empty reductions") {
  const tensor x = random_tensor({2, 3, 4}, 70);
  for (const bool keepdim : {false, true}) {
    CAPTURE(keepdim);
    for (const dims& d : {dims{}, dims{0}, dims{1}, dims{2}, dims{-1}, dims{-3}, dims{0, 2}, dims{1, 2}, dims{2, 0},
                          dims{0, 1}, dims{-3, -1}, dims{0, 1, 2}}) {
      CAPTURE(to_string(d));
      check_mean(op::mean{.dim = d, .keepdim = keepdim}, x);
    }
  }
  SECTION("size-1 dimensions reduced or kept, and five dimensions with alternating reductions") {
    const tensor ones = random_tensor({1, 5, 1, 3}, 71);
    check_mean(op::mean{.dim = {0, 2}}, ones);
    check_mean(op::mean{.dim = {1}, .keepdim = true}, ones);
    check_mean(op::mean{.dim = {2, 3}}, ones);
    const tensor five = random_tensor({2, 3, 2, 2, 3}, 72);
    check_mean(op::mean{.dim = {0, 2, 4}}, five);
    check_mean(op::mean{.dim = {1, 3}, .keepdim = true}, five);
    check_mean(op::mean{.dim = {-4, -3}}, five);
  }
  SECTION("bert's pooling over the sequence [2, 16, 128] dim 1; a global mean of offset data") {
    check_mean(op::mean{.dim = {1}}, random_tensor({2, 16, 128}, 73));
    check_mean(op::mean{}, random_tensor({40, 50}, 74, 999.0, 1001.0));
    check_mean(op::mean{.dim = {-1, -2}, .keepdim = true}, random_tensor({2, 3, 7, 9}, 75));
  }
  SECTION("a rank-0 tensor is its own mean") {
    check_mean(op::mean{}, tensor({}, {2.5f}));
    check_mean(op::mean{.dim = {-1}}, tensor({}, {-1.25f}));
  }
  SECTION("empty tensors: NaN for an empty reduction (0 / 0), nothing for an empty result") {
    check_mean(op::mean{.dim = {1}}, tensor({2, 0, 3}));
    check_mean(op::mean{.dim = {0}}, tensor({2, 0, 3}));
    check_mean(op::mean{}, tensor({0}));
  }
}

TEST_CASE("normalisation kernels: bad parameters and result buffers are errors naming the node") {
  const op::layer_norm ln{.normalized_shape = {4}};
  const tensor x = random_tensor({2, 4}, 80);
  CHECK_THROWS_WITH(run(ln, x, {}), Catch::Contains("node norm") && Catch::Contains("\"weight\" is not set"));
  ordered_map<tensor> short_weight = affine_parameters({3}, 81);
  CHECK_THROWS_WITH(run(ln, x, short_weight),
                    Catch::Contains("node norm") && Catch::Contains("\"weight\" holds 3 values"));

  // A result buffer of the wrong shape (what a direct call could pass) is refused, not overrun.
  std::vector<tensor> outputs{tensor({2, 3})};
  const tensor* inputs[] = {&x};
  std::vector<float> scratch;
  const eval::kernel_args args{.inputs = inputs, .outputs = outputs, .scratch = &scratch, .node_name = "sm"};
  CHECK_THROWS_WITH(eval::float_kernel(op::softmax{}, args),
                    Catch::Contains("node sm") && Catch::Contains("result buffer has shape [2, 3]"));
}

namespace {

// How many heap allocations a second run of the kernel makes, the first having sized its
// scratch memory (the evaluator's steady state: same shapes, same buffers).
template <class Op>
std::size_t allocations_in_second_run(const Op& op, const tensor& x, const ordered_map<tensor>& parameters = {}) {
  const shape in = x.shape();
  std::vector<tensor> outputs{tensor(op.infer_shapes(std::span<const shape>(&in, 1)).shapes[0])};
  const tensor* inputs[] = {&x};
  std::vector<float> scratch;
  const eval::kernel_args args{
      .inputs = inputs, .parameters = &parameters, .outputs = outputs, .scratch = &scratch, .node_name = "n"};
  eval::float_kernel(op, args);
  const std::size_t before = allocation_count;
  eval::float_kernel(op, args);
  return allocation_count - before;
}

}  // namespace

TEST_CASE("normalisation kernels allocate nothing once their scratch memory is sized") {
  if (!MASE_TEST_COUNTS_ALLOCATIONS) {
    WARN("allocations are not counted under AddressSanitizer; skipped");
    return;
  }
  CHECK(allocations_in_second_run(op::layer_norm{.normalized_shape = {8}}, random_tensor({3, 8}, 93),
                                  affine_parameters({8}, 94)) == 0);
  CHECK(allocations_in_second_run(op::group_norm{.num_groups = 2, .num_channels = 4}, random_tensor({2, 4, 3}, 95),
                                  affine_parameters({4}, 96)) == 0);
  CHECK(allocations_in_second_run(op::rms_norm{.normalized_shape = {8}}, random_tensor({3, 8}, 97),
                                  affine_parameters({8}, 98, false)) == 0);
  for (const bool running : {true, false}) {
    CHECK(allocations_in_second_run(op::batch_norm1d{.num_features = 4, .track_running_stats = running},
                                    random_tensor({3, 4}, 99), batch_norm_parameters(4, 100, true, running)) == 0);
    CHECK(allocations_in_second_run(op::batch_norm2d{.num_features = 4, .track_running_stats = running},
                                    random_tensor({2, 4, 3, 3}, 101),
                                    batch_norm_parameters(4, 102, true, running)) == 0);
  }
  CHECK(allocations_in_second_run(op::softmax{}, random_tensor({3, 8}, 103)) == 0);
  CHECK(allocations_in_second_run(op::softmax{.dim = 0}, random_tensor({3, 8}, 104)) == 0);
  CHECK(allocations_in_second_run(op::mean{.dim = {0, 2}}, random_tensor({3, 4, 5}, 105)) == 0);
}

TEST_CASE("normalisation kernels reuse their scratch memory from one run to the next") {
  std::vector<float> scratch;
  const tensor x = random_tensor({3, 40, 5}, 90);
  run(op::softmax{.dim = 1}, x, {}, &scratch);
  const float* first = scratch.data();
  const std::size_t size = scratch.size();
  run(op::softmax{.dim = 1}, x, {}, &scratch);
  CHECK(scratch.data() == first);
  CHECK(scratch.size() == size);

  std::vector<float> bn_scratch;
  const op::batch_norm2d bn{.num_features = 40};
  const ordered_map<tensor> p = batch_norm_parameters(40, 91, true, true);
  const tensor images = random_tensor({2, 40, 3, 3}, 92);
  run(bn, images, p, &bn_scratch);
  const float* bn_first = bn_scratch.data();
  run(bn, images, p, &bn_scratch);
  CHECK(bn_scratch.data() == bn_first);
}

namespace {

// torch.nn.InstanceNorm*d written out: sample n, channel c's spatial values normalised by their
// own mean and biased variance, then weight[c] and bias[c]. The kernel's arithmetic is group
// norm's with one channel per group, so normalisation_bound holds with n = the spatial count.
void check_instance_norm(const op::instance_norm& op, const tensor& x, const ordered_map<tensor>& parameters) {
  const std::int64_t batch = x.shape()[0];
  const std::int64_t channels = op.num_features;
  const std::int64_t spatial = static_cast<std::int64_t>(x.size()) / (batch * channels);
  std::vector<double> reference(x.size());
  std::vector<double> bound(x.size());
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      std::vector<double> values;
      for (std::int64_t i = 0; i < spatial; ++i) values.push_back(at(x, (n * channels + c) * spatial + i));
      const group_stats s = stats_of(values, op.eps);
      for (std::int64_t i = 0; i < spatial; ++i) {
        const auto index = static_cast<std::size_t>((n * channels + c) * spatial + i);
        const double xv = values[static_cast<std::size_t>(i)];
        const double z = (xv - s.mean) / s.sigma;
        const double w = op.affine ? at(parameters.at("weight"), c) : 1.0;
        const double b = op.affine ? at(parameters.at("bias"), c) : 0.0;
        reference[index] = z * w + b;
        bound[index] = normalisation_bound(s, xv, z, w, b, z * w + b);
      }
    }
  check_close(run(op, x, parameters), reference, bound);
}

}  // namespace

TEST_CASE("instance_norm: each channel of each sample normalised alone, any spatial rank") {
  SECTION("3-D [N, C, L], with and without the affine part") {
    check_instance_norm(op::instance_norm{.num_features = 3}, random_tensor({2, 3, 7}, 110), {});
    check_instance_norm(op::instance_norm{.num_features = 3, .affine = true}, random_tensor({2, 3, 7}, 111),
                        affine_parameters({3}, 112));
  }
  SECTION("4-D [N, C, H, W] and 5-D; a long spatial extent (vectorised statistics)") {
    check_instance_norm(op::instance_norm{.num_features = 4, .affine = true}, random_tensor({2, 4, 3, 5}, 113),
                        affine_parameters({4}, 114));
    check_instance_norm(op::instance_norm{.num_features = 2}, random_tensor({1, 2, 3, 2, 4}, 115), {});
    check_instance_norm(op::instance_norm{.num_features = 2, .affine = true}, random_tensor({2, 2, 16, 16}, 116),
                        affine_parameters({2}, 117));
  }
  SECTION("offset data (two-pass statistics) and a large eps") {
    check_instance_norm(op::instance_norm{.num_features = 3, .eps = 0.25, .affine = true},
                        random_tensor({2, 3, 9}, 118, 499.0, 501.0), affine_parameters({3}, 119));
  }
  SECTION("a single spatial value normalises to the bias (PyTorch refuses it; ONNX defines it)") {
    check_instance_norm(op::instance_norm{.num_features = 2, .affine = true}, tensor({1, 2, 1}, {3.0f, -7.0f}),
                        affine_parameters({2}, 120));
  }
  SECTION("the shape rule: [N, C, *] with C = num_features; weight and bias only when affine") {
    const shape flat{4, 3};
    CHECK(!op::instance_norm{.num_features = 3}.infer_shapes(std::span<const shape>(&flat, 1)).ok());
    const shape other{2, 4, 5};
    CHECK(!op::instance_norm{.num_features = 3}.infer_shapes(std::span<const shape>(&other, 1)).ok());
    CHECK(parameters_of(op::instance_norm{.num_features = 3}).empty());
    CHECK(parameters_of(op::instance_norm{.num_features = 3, .affine = true}).size() == 2);
    CHECK_THROWS_WITH(run(op::instance_norm{.num_features = 3, .affine = true}, random_tensor({2, 3, 4}, 121),
                          affine_parameters({2}, 122)),
                      Catch::Contains("node norm") && Catch::Contains("\"weight\" holds 2 values"));
  }
}

namespace {

// torch.log_softmax written out in double: y = (x - max) - log(sum(exp(x - max))) per slice.
// Bound: the kernel rounds d = x - max (u·|d|); its sum S carries check_softmax's relative error
// max_eta + (n-1)·u; the log turns that into an absolute error and adds 3u·|log S| (Eigen's
// vectorised log is within 1.1 ulp); the last subtraction adds u·|y|.
void check_log_softmax(const op::log_softmax& op, const tensor& x) {
  const shape& s = x.shape();
  const int rank = s.size();
  const int dim = rank == 0 ? 0 : static_cast<int>(op.dim < 0 ? op.dim + rank : op.dim);
  const std::int64_t length = rank == 0 ? 1 : s[dim];
  std::int64_t inner = 1;
  for (int d = dim + 1; d < rank; ++d) inner *= s[d];
  const std::int64_t outer = static_cast<std::int64_t>(x.size()) / (length * inner);
  std::vector<double> reference(x.size());
  std::vector<double> bound(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t k = 0; k < inner; ++k) {
      const auto index = [&](std::int64_t j) { return static_cast<std::size_t>((o * length + j) * inner + k); };
      const auto value = [&](std::int64_t j) { return at(x, static_cast<std::int64_t>(index(j))); };
      bool has_nan = false;
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < length; ++j) {
        has_nan = has_nan || std::isnan(value(j));
        max = std::max(max, value(j));
      }
      double sum = 0;
      double max_eta = 0;
      for (std::int64_t j = 0; j < length; ++j) {
        const double shifted = value(j) - max;
        sum += std::exp(shifted);
        if (std::isfinite(shifted)) max_eta = std::max(max_eta, (std::abs(shifted) + 4) * u);
      }
      const double log_sum = std::log(sum);
      for (std::int64_t j = 0; j < length; ++j) {
        const double shifted = value(j) - max;
        const double y = has_nan ? nan_value : shifted - log_sum;
        reference[index(j)] = y;
        bound[index(j)] = u * (std::abs(shifted) + std::abs(y) + 3 * std::abs(log_sum) +
                               static_cast<double>(length) + 1) +
                          max_eta;
      }
    }
  check_close(run(op, x), reference, bound);
}

}  // namespace

TEST_CASE("log_softmax: along any dimension, stable for large values, -inf and NaN as PyTorch") {
  SECTION("the last dimension and inner dimensions") {
    check_log_softmax(op::log_softmax{}, random_tensor({3, 7}, 130, -4.0, 4.0));
    check_log_softmax(op::log_softmax{.dim = 2}, random_tensor({2, 4, 33}, 131, -4.0, 4.0));
    const tensor x = random_tensor({2, 5, 4}, 132, -4.0, 4.0);
    for (std::int64_t d : {0, 1, -2, -3}) check_log_softmax(op::log_softmax{.dim = d}, x);
  }
  SECTION("a rank-0 tensor and a dimension of size 1 give 0") {
    CHECK(run(op::log_softmax{}, tensor({}, {3.5f})).values()[0] == 0.0f);
    const tensor y = run(op::log_softmax{.dim = 1}, random_tensor({3, 1, 2}, 133));
    CHECK(std::all_of(y.values().begin(), y.values().end(), [](float v) { return v == 0.0f; }));
  }
  SECTION("values near 1000, where exp(x) overflows") {
    check_log_softmax(op::log_softmax{}, random_tensor({4, 9}, 134, 995.0, 1000.0));
    check_log_softmax(op::log_softmax{.dim = 0}, random_tensor({9, 4}, 135, 995.0, 1000.0));
  }
  SECTION("-inf entries stay -inf beside finite ones; a NaN or a row of -inf gives NaN") {
    constexpr float minus_inf = -std::numeric_limits<float>::infinity();
    tensor x = random_tensor({3, 6}, 136);
    x.data()[1] = minus_inf;
    x.data()[8] = std::numeric_limits<float>::quiet_NaN();
    for (int i = 12; i < 18; ++i) x.data()[i] = minus_inf;
    check_log_softmax(op::log_softmax{}, x);
    const tensor y = run(op::log_softmax{}, x);
    CHECK(y.data()[1] == minus_inf);
    CHECK(std::isfinite(y.data()[0]));
    CHECK(std::isnan(y.data()[6]));   // row 1 holds the NaN
    CHECK(std::isnan(y.data()[12]));  // row 2 is all -inf, as torch.log_softmax gives
  }
  SECTION("exp of log_softmax is softmax") {
    const tensor x = random_tensor({4, 11}, 137, -6.0, 6.0);
    const tensor ls = run(op::log_softmax{}, x);
    const tensor sm = run(op::softmax{}, x);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::exp(ls.values()[i]) == Approx(sm.values()[i]).epsilon(1e-5));
  }
}

namespace {

// A reduction written out: an odometer over the input, each value folded into the output
// position of its kept coordinates (as check_mean). amax and amin select a value, so they must
// match exactly; NaN anywhere in a slice makes it NaN. sum: the kernel's float sum of R values
// in any order is off by at most ·u·Σ|x|.
template <class Op>
void check_reduction(const Op& op, const tensor& x) {
  const shape& s = x.shape();
  std::vector<bool> reduced(static_cast<std::size_t>(s.size()), op.dim.empty());
  if (s.size() > 0)
    for (std::int64_t d : op.dim) reduced[static_cast<std::size_t>(d < 0 ? d + s.size() : d)] = true;
  const shape in = s;
  const shape_result r = op.infer_shapes(std::span<const shape>(&in, 1));
  REQUIRE(r.ok());
  const auto out_count = static_cast<std::size_t>(r.shapes[0].numel());
  constexpr bool is_sum = std::is_same_v<Op, op::sum>;
  constexpr bool is_max = std::is_same_v<Op, op::amax>;
  const double start = is_sum ? 0.0 : is_max ? -std::numeric_limits<double>::infinity()
                                              : std::numeric_limits<double>::infinity();
  std::vector<double> result(out_count, start);
  std::vector<double> sum_abs(out_count, 0.0);
  std::vector<double> count(out_count, 0.0);
  std::vector<std::int64_t> coordinate(static_cast<std::size_t>(s.size()), 0);
  for (std::int64_t flat = 0; flat < static_cast<std::int64_t>(x.size()); ++flat) {
    std::int64_t rest = flat;
    for (int d = s.size() - 1; d >= 0; --d) {
      coordinate[static_cast<std::size_t>(d)] = rest % s[d];
      rest /= s[d];
    }
    std::size_t out = 0;
    for (int d = 0; d < s.size(); ++d)
      if (!reduced[static_cast<std::size_t>(d)])
        out = out * static_cast<std::size_t>(s[d]) + static_cast<std::size_t>(coordinate[static_cast<std::size_t>(d)]);
    const double v = at(x, flat);
    if (is_sum) result[out] += v;
    else if (std::isnan(v) || std::isnan(result[out])) result[out] = nan_value;
    else result[out] = is_max ? std::max(result[out], v) : std::min(result[out], v);
    sum_abs[out] += std::abs(v);
    count[out] += 1;
  }
  std::vector<double> bound(out_count, 0.0);
  if (is_sum)
    for (std::size_t i = 0; i < out_count; ++i) bound[i] = count[i] <= 1 ? 0.0 : (count[i] - 1) * u * sum_abs[i];
  const tensor y = run(op, x);
  CHECK(y.shape() == r.shapes[0]);
  check_close(y, result, bound);
}

template <class Op>
void check_reductions_of(const tensor& x) {
  for (const bool keepdim : {false, true}) {
    CAPTURE(keepdim);
    for (const dims& d : {dims{}, dims{0}, dims{1}, dims{2}, dims{-1}, dims{-3}, dims{0, 2}, dims{1, 2}, dims{2, 0},
                          dims{0, 1}, dims{0, 1, 2}}) {
      CAPTURE(to_string(d));
      check_reduction(Op{.dim = d, .keepdim = keepdim}, x);
    }
  }
}

}  // namespace

TEST_CASE("sum, amax, amin: any set of dimensions, keepdim, NaN, empty reductions") {
  SECTION("every set of dimensions of [2, 3, 4] and of a five-dimensional tensor with size-1 dimensions") {
    const tensor x = random_tensor({2, 3, 4}, 140);
    check_reductions_of<op::sum>(x);
    check_reductions_of<op::amax>(x);
    check_reductions_of<op::amin>(x);
    const tensor five = random_tensor({2, 1, 3, 1, 5}, 141);
    check_reduction(op::sum{.dim = {0, 2, 4}}, five);
    check_reduction(op::amax{.dim = {1, 2}, .keepdim = true}, five);
    check_reduction(op::amin{.dim = {-1, -5}}, five);
  }
  SECTION("long contiguous and strided reductions (vectorised paths)") {
    const tensor x = random_tensor({3, 67, 9}, 142, -100.0, 100.0);
    for (const dims& d : {dims{1}, dims{2}, dims{1, 2}, dims{0, 2}}) {
      check_reduction(op::sum{.dim = d}, x);
      check_reduction(op::amax{.dim = d}, x);
      check_reduction(op::amin{.dim = d}, x);
    }
  }
  SECTION("NaN makes its slice NaN in amax and amin, wherever it lies") {
    tensor x = random_tensor({4, 37}, 143);
    x.data()[0] = std::numeric_limits<float>::quiet_NaN();       // first of row 0
    x.data()[37 + 20] = std::numeric_limits<float>::quiet_NaN();  // inside row 1's vector part
    x.data()[3 * 37 - 1] = std::numeric_limits<float>::quiet_NaN();  // last of row 2 (the scalar tail)
    for (const dims& d : {dims{0}, dims{1}, dims{}}) {
      check_reduction(op::amax{.dim = d}, x);
      check_reduction(op::amin{.dim = d}, x);
    }
    const tensor y = run(op::amax{.dim = {1}}, x);
    CHECK(std::isnan(y.values()[0]));
    CHECK(std::isnan(y.values()[1]));
    CHECK(std::isnan(y.values()[2]));
    CHECK(!std::isnan(y.values()[3]));
  }
  SECTION("infinities are values like any other") {
    const tensor x({2, 3}, {-std::numeric_limits<float>::infinity(), 1.0f, 2.0f, 5.0f,
                            std::numeric_limits<float>::infinity(), -1.0f});
    const tensor largest = run(op::amax{.dim = {1}}, x);
    const tensor smallest = run(op::amin{.dim = {1}}, x);
    CHECK(largest.values()[0] == 2.0f);
    CHECK(largest.values()[1] == std::numeric_limits<float>::infinity());
    CHECK(smallest.values()[0] == -std::numeric_limits<float>::infinity());
    CHECK(smallest.values()[1] == -1.0f);
  }
  SECTION("a rank-0 tensor reduces to itself") {
    check_reduction(op::sum{}, tensor({}, {2.5f}));
    check_reduction(op::amax{.dim = {-1}}, tensor({}, {-1.25f}));
    check_reduction(op::amin{.dim = {0}, .keepdim = true}, tensor({}, {4.0f}));
  }
  SECTION("empty tensors: sum gives 0; amax and amin refuse a reduction over no values") {
    check_reduction(op::sum{.dim = {1}}, tensor({2, 0, 3}));
    check_reduction(op::sum{}, tensor({0}));
    check_reduction(op::amax{.dim = {0}}, tensor({2, 0, 3}));  // an empty result is fine
    const shape empty{2, 0, 3};
    const shape_result r = op::amax{.dim = {1}}.infer_shapes(std::span<const shape>(&empty, 1));
    REQUIRE(!r.ok());
    CHECK(std::string(r.error).find("size 0") != std::string::npos);
    CHECK(!op::amin{}.infer_shapes(std::span<const shape>(&empty, 1)).ok());
  }
  SECTION("the shape rule is mean's: bad and repeated dims are errors naming the op") {
    const shape x{2, 3};
    const shape_result out_of_range = op::sum{.dim = {2}}.infer_shapes(std::span<const shape>(&x, 1));
    CHECK(std::string(out_of_range.error) == "sum: a dim is out of range for the input");
    const shape_result repeated = op::amin{.dim = {1, -1}}.infer_shapes(std::span<const shape>(&x, 1));
    CHECK(std::string(repeated.error) == "amin: a dim appears more than once");
    CHECK(std::string(op::mean{.dim = {0, -2}}.infer_shapes(std::span<const shape>(&x, 1)).error) ==
          "mean: a dim appears more than once");
  }
}

TEST_CASE("log_softmax, instance_norm and the reductions allocate nothing once their scratch memory is sized") {
  if (!MASE_TEST_COUNTS_ALLOCATIONS) {
    WARN("allocations are not counted under AddressSanitizer; skipped");
    return;
  }
  CHECK(allocations_in_second_run(op::log_softmax{}, random_tensor({3, 8}, 150)) == 0);
  CHECK(allocations_in_second_run(op::log_softmax{.dim = 0}, random_tensor({3, 8}, 151)) == 0);
  CHECK(allocations_in_second_run(op::instance_norm{.num_features = 4, .affine = true}, random_tensor({2, 4, 3}, 152),
                                  affine_parameters({4}, 153)) == 0);
  CHECK(allocations_in_second_run(op::sum{.dim = {0, 2}}, random_tensor({3, 4, 5}, 154)) == 0);
  CHECK(allocations_in_second_run(op::amax{.dim = {1}}, random_tensor({3, 4, 5}, 155)) == 0);
  CHECK(allocations_in_second_run(op::amin{}, random_tensor({3, 4, 5}, 156)) == 0);
}
