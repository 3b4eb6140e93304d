// Float kernels of the element-wise ops against PyTorch's formulas written out as plain loops,
// broadcasting against index arithmetic done by hand, and the double-precision scalar functions
// against the kernels.

#include <mase/eval/kernels/elementwise.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

using namespace mase;

namespace {

constexpr float unwritten = -12345.678f;  // what output buffers hold before the kernel runs
constexpr float inf = std::numeric_limits<float>::infinity();
const float nan_f = std::numeric_limits<float>::quiet_NaN();

// Runs the op's kernel on `inputs`, with output buffers sized from its shape rule and filled
// with a value no kernel produces, so an element the kernel forgets to write shows.
template <class Op>
tensor run(const Op& op, std::vector<const tensor*> inputs) {
  std::vector<shape> shapes;
  for (const tensor* t : inputs) shapes.push_back(t->shape());
  const shape_result r = op.infer_shapes(shapes);
  REQUIRE(r.ok());
  REQUIRE(r.shapes.size() == 1);
  std::vector<tensor> outputs{tensor(r.shapes[0], std::vector<float>(static_cast<std::size_t>(r.shapes[0].numel()), unwritten))};
  std::vector<float> scratch;
  const eval::kernel_args args{.inputs = inputs, .outputs = outputs, .scratch = &scratch, .node_name = "act1"};
  eval::float_kernel(op, args);
  return std::move(outputs[0]);
}

template <class Op>
tensor run(const Op& op, const tensor& x) {
  return run(op, std::vector<const tensor*>{&x});
}

// A grid over [-20, 20] in steps of 1/64 (an odd count, so vectorized kernels run their scalar
// tails too), plus values where the formulas change regime or overflow.
std::vector<float> test_inputs() {
  std::vector<float> v;
  for (int i = -1280; i <= 1280; ++i) v.push_back(static_cast<float>(i) / 64.0f);
  for (float s : {1e-40f /* subnormal */, 1e-30f, 1e-7f, 1e-3f, 0.1f, 3.0f, 6.0f, 25.0f, 30.0f, 50.0f, 88.0f, 89.0f, 100.0f, 1e6f, inf}) {
    v.push_back(s);
    v.push_back(-s);
  }
  v.push_back(-0.0f);
  return v;
}

// Whether `got` is within `ulps` float epsilons of `want`, relative to `scale` (|want| unless a
// formula's error grows with something else), or within `absolute`. ulps == 0 means equal up to
// the sign of zero. NaN matches NaN. The default `absolute` absorbs underflow (vectorized exp
// flushes subnormal results to zero).
bool close(float got, float want, double ulps, double scale, double absolute = FLT_MIN) {
  if (std::isnan(want)) return std::isnan(got);
  if (got == want) return true;
  if (ulps == 0.0 || std::isinf(want) || std::isnan(got)) return false;
  return std::fabs(static_cast<double>(got) - want) <= ulps * FLT_EPSILON * scale + absolute;
}

// One unary op: its kernel against `reference`, a plain loop over PyTorch's float formula.
// `error_scale(x, reference)` is the magnitude the formula's error is proportional to.
struct unary_case {
  std::string name;
  std::function<tensor(const tensor&)> kernel;
  std::function<float(float)> reference;
  double ulps;
  std::function<double(float, float)> error_scale = [](float, float want) { return std::fabs(want); };
  std::function<double(double)> exact;  // the op's scalar_function
};

template <class Op>
unary_case make_case(std::string name, Op op, std::function<float(float)> reference, double ulps) {
  return {.name = std::move(name),
          .kernel = [op](const tensor& x) { return run(op, x); },
          .reference = std::move(reference),
          .ulps = ulps,
          .exact = [op](double x) { return eval::scalar_function(op, x); }};
}

// Error scale of a formula x/2 * (1 + f(x)) where f saturates at -1: f's error is relative to
// |f| <= 1, so after the cancellation in 1 + f it is absolute, then multiplied by x/2.
double gelu_error_scale(float x, float want) { return std::fabs(want) + std::fabs(x); }

// Tolerances. The kernels use Eigen's vectorized functions, the references the C library's:
// - exact (0): the same float operations in the same order (clamps, products, division by a
//   constant, sqrt, pow by the C library in both).
// - exp: Eigen's is within 1.4 ulp and the C library's within 0.5 (both measured over the
//   grid, SSE2 and AVX2 builds): 2 ulp.
// - log: Eigen's is within 1.1 ulp over every 511th positive float, the C library's within 0.5:
//   2 ulp. (Eigen reads subnormal inputs as the smallest normal; the kernel corrects those.)
// - sigmoid, silu: 1/(1 + e) adds two roundings on each side to exp's error: 4 ulp.
// - elu, selu: Eigen's expm1 is within 2.5 ulp, the C library's within 1; one product: 4 ulp.
// - softplus: log1p(exp(bx))/b is as accurate as exp and log1p (Eigen: 1.4 and 1.7 ulp), plus
//   the division: 6 ulp.
// - tanh, erf: Eigen uses rational approximations within 6.1 and 5.9 ulp (the C library's
//   within 2 and 1): 8 ulp. gelu inherits erf's or tanh's error, scaled by x/2.
std::vector<unary_case> unary_cases() {
  using namespace eval;
  const float selu_alpha = 1.6732632423543772848f;
  const float selu_scale = 1.0507009873554804934f;
  std::vector<unary_case> cases{
      make_case("neg", op::neg{}, [](float x) { return -x; }, 0),
      make_case("sqrt", op::sqrt{}, [](float x) { return std::sqrt(x); }, 0),
      make_case("exp", op::exp{}, [](float x) { return std::exp(x); }, 2),
      make_case("abs", op::abs{}, [](float x) { return std::fabs(x); }, 0),
      make_case("log", op::log{}, [](float x) { return std::log(x); }, 2),
      make_case("reciprocal", op::reciprocal{}, [](float x) { return 1.0f / x; }, 0),
      make_case("floor", op::floor{}, [](float x) { return std::floor(x); }, 0),
      make_case("ceil", op::ceil{}, [](float x) { return std::ceil(x); }, 0),
      make_case("sign", op::sign{},
                [](float x) { return static_cast<float>(x > 0.0f) - static_cast<float>(x < 0.0f); }, 0),
      make_case("erf", op::erf{}, [](float x) { return std::erf(x); }, 8),
      make_case("relu", op::relu{}, [](float x) { return std::isnan(x) ? x : x > 0 ? x : 0.0f; }, 0),
      make_case("relu6", op::relu6{}, [](float x) { return std::isnan(x) ? x : std::min(std::max(x, 0.0f), 6.0f); }, 0),
      make_case("leaky_relu", op::leaky_relu{}, [](float x) { return x > 0 ? x : x * 0.01f; }, 0),
      make_case("leaky_relu(0.2)", op::leaky_relu{.negative_slope = 0.2}, [](float x) { return x > 0 ? x : x * 0.2f; }, 0),
      make_case("sigmoid", op::sigmoid{}, [](float x) { return 1.0f / (1.0f + std::exp(-x)); }, 4),
      make_case("silu", op::silu{}, [](float x) { return x / (1.0f + std::exp(-x)); }, 4),
      make_case("tanh", op::tanh{}, [](float x) { return std::tanh(x); }, 8),
      make_case("elu", op::elu{}, [](float x) { return x > 0 ? x : std::expm1(x) * 1.0f; }, 4),
      make_case("elu(0.5)", op::elu{.alpha = 0.5}, [](float x) { return x > 0 ? x : std::expm1(x) * 0.5f; }, 4),
      make_case("selu", op::selu{},
                [=](float x) { return x > 0 ? x * selu_scale : std::expm1(x) * (selu_alpha * selu_scale); }, 4),
      make_case("softplus", op::softplus{},
                [](float x) { return x * 1.0f > 20.0f ? x : std::log1p(std::exp(x * 1.0f)) / 1.0f; }, 6),
      make_case("softplus(2, 10)", op::softplus{.beta = 2.0, .threshold = 10.0},
                [](float x) { return x * 2.0f > 10.0f ? x : std::log1p(std::exp(x * 2.0f)) / 2.0f; }, 6),
      make_case("softplus(0.5, 3)", op::softplus{.beta = 0.5, .threshold = 3.0},
                [](float x) { return x * 0.5f > 3.0f ? x : std::log1p(std::exp(x * 0.5f)) / 0.5f; }, 6),
      make_case("softsign", op::softsign{}, [](float x) { return x / (1.0f + std::fabs(x)); }, 0),
      make_case("hardswish", op::hardswish{},
                [](float x) { return std::isnan(x) ? x : x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; }, 0),
      make_case("hardsigmoid", op::hardsigmoid{},
                [](float x) { return std::isnan(x) ? x : std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; }, 0),
      make_case("hardtanh", op::hardtanh{}, [](float x) { return std::isnan(x) ? x : std::min(std::max(x, -1.0f), 1.0f); }, 0),
      make_case("hardtanh(-2, 3.5)", op::hardtanh{.min_val = -2.0, .max_val = 3.5},
                [](float x) { return std::isnan(x) ? x : std::min(std::max(x, -2.0f), 3.5f); }, 0),
  };
  unary_case gelu = make_case("gelu", op::gelu{},
                              [](float x) { return x * 0.5f * (1.0f + std::erf(x * 0.70710678118654752f)); }, 8);
  gelu.error_scale = gelu_error_scale;
  cases.push_back(gelu);
  unary_case gelu_tanh = make_case(
      "gelu(tanh)", op::gelu{.approximate_tanh = true},
      [](float x) {
        const float inner = 0.79788456080286535f * (x + 0.044715f * (x * x * x));
        return 0.5f * x * (1.0f + std::tanh(inner));
      },
      8);
  gelu_tanh.error_scale = gelu_error_scale;
  cases.push_back(gelu_tanh);
  // pow: PyTorch computes these exponents with products, division and sqrt, others with pow.
  for (double e : {2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 0.0, 1.0, 1.5, 4.0, -3.0, 2.5, 0.3}) {
    const auto ef = static_cast<float>(e);
    cases.push_back(make_case(
        "pow(" + std::to_string(e) + ")", op::pow{.exponent = e},
        [=](float x) {
          if (e == 2.0) return x * x;
          if (e == 3.0) return x * x * x;
          if (e == 0.5) return std::sqrt(x);
          if (e == -0.5) return 1.0f / std::sqrt(x);
          if (e == -1.0) return 1.0f / x;
          if (e == -2.0) return 1.0f / (x * x);
          return std::pow(x, ef);
        },
        0));
  }
  return cases;
}

}  // namespace

TEST_CASE("unary kernels match PyTorch's formulas computed element by element") {
  const std::vector<float> values = test_inputs();
  const tensor x({static_cast<std::int64_t>(values.size())}, values);
  for (const unary_case& c : unary_cases()) {
    INFO(c.name);
    const tensor y = c.kernel(x);
    REQUIRE(y.shape() == x.shape());
    int failures = 0;
    for (std::size_t i = 0; i < values.size() && failures < 5; ++i) {
      const float want = c.reference(values[i]);
      if (!close(y.values()[i], want, c.ulps, c.error_scale(values[i], want))) {
        ++failures;
        FAIL_CHECK("x = " << values[i] << ": kernel " << y.values()[i] << ", formula " << want);
      }
    }
  }
}

TEST_CASE("unary kernels propagate NaN and keep the input's shape") {
  const tensor x({2, 1, 3}, {nan_f, -1.5f, 0.25f, 2.0f, nan_f, -7.0f});
  for (const unary_case& c : unary_cases()) {
    INFO(c.name);
    const tensor y = c.kernel(x);
    CHECK(y.shape() == x.shape());
    if (c.name == "pow(0.000000)") {
      CHECK(y.values()[0] == 1.0f);  // pow(NaN, 0) is 1, in PyTorch and the C library
    } else if (c.name == "sign") {
      CHECK(y.values()[0] == 0.0f);  // PyTorch's (0 < x) - (x < 0) is 0 for NaN
      CHECK(y.values()[4] == 0.0f);
    } else {
      CHECK(std::isnan(y.values()[0]));
      CHECK(std::isnan(y.values()[4]));
    }
    for (std::size_t i : {1u, 2u, 3u, 5u}) {
      const float xi = x.values()[i];
      const float want = c.reference(xi);
      CHECK(close(y.values()[i], want, c.ulps, c.error_scale(xi, want)));
    }
  }
}

TEST_CASE("scalar_function is the exact definition the float kernels approximate") {
  // Finite inputs only: the scalar functions are sampled on finite grids. The float formula
  // rounds a few more times than the exact value is rounded once, hence 3 ulp more. The float
  // formulas overflow where the exact value is below 1e-36 (silu(-89): x / (1 + exp(89)) is -0
  // in float), far below anything a lookup table resolves, hence the absolute 1e-30.
  std::vector<float> values;
  for (float v : test_inputs())
    if (std::isfinite(v) && std::fabs(v) <= 100.0f && !(v == 0.0f && std::signbit(v))) values.push_back(v);
  const tensor x({static_cast<std::int64_t>(values.size())}, values);
  for (const unary_case& c : unary_cases()) {
    // PyTorch rounds a scalar exponent to the tensor's type, so pow's float result follows
    // float(e); the exact definition uses e. They agree where float represents e.
    if (c.name == "pow(0.300000)") continue;
    INFO(c.name);
    const tensor y = c.kernel(x);
    int failures = 0;
    for (std::size_t i = 0; i < values.size() && failures < 5; ++i) {
      const auto exact = static_cast<float>(c.exact(values[i]));
      if (!close(y.values()[i], exact, c.ulps + 3, c.error_scale(values[i], exact), 1e-30)) {
        ++failures;
        FAIL_CHECK("x = " << values[i] << ": kernel " << y.values()[i] << ", exact " << c.exact(values[i]));
      }
    }
  }
}

TEST_CASE("scalar_function: the definitions at points known in closed form") {
  using eval::scalar_function;
  CHECK(scalar_function(op::relu{}, -2.0) == 0.0);
  CHECK(scalar_function(op::relu{}, 2.5) == 2.5);
  CHECK(scalar_function(op::relu6{}, 7.0) == 6.0);
  CHECK(scalar_function(op::leaky_relu{.negative_slope = 0.1}, -3.0) == Approx(-0.3).epsilon(1e-15));
  CHECK(scalar_function(op::hardtanh{.min_val = -2.0, .max_val = 3.0}, -5.0) == -2.0);
  CHECK(scalar_function(op::hardtanh{.min_val = -2.0, .max_val = 3.0}, 4.0) == 3.0);
  CHECK(scalar_function(op::hardsigmoid{}, 0.0) == 0.5);
  CHECK(scalar_function(op::hardswish{}, 3.0) == 3.0);
  CHECK(scalar_function(op::hardswish{}, -1.0) == Approx(-1.0 / 3.0).epsilon(1e-15));
  CHECK(scalar_function(op::sigmoid{}, 0.0) == 0.5);
  CHECK(scalar_function(op::silu{}, 0.0) == 0.0);
  CHECK(scalar_function(op::softsign{}, 1.0) == 0.5);
  CHECK(scalar_function(op::softplus{}, 0.0) == Approx(std::log(2.0)).epsilon(1e-15));
  CHECK(scalar_function(op::softplus{.beta = 1.0, .threshold = 20.0}, 21.0) == 21.0);  // linear above threshold
  CHECK(scalar_function(op::softplus{.beta = 2.0, .threshold = 20.0}, 1.0) == Approx(std::log1p(std::exp(2.0)) / 2.0));
  CHECK(scalar_function(op::elu{.alpha = 2.0}, -1.0) == Approx(2.0 * (std::exp(-1.0) - 1.0)).epsilon(1e-15));
  CHECK(scalar_function(op::selu{}, 1.0) == Approx(1.0507009873554804934));
  CHECK(scalar_function(op::selu{}, -1.0) == Approx(1.0507009873554804934 * 1.6732632423543772848 * (std::exp(-1.0) - 1.0)).epsilon(1e-15));
  // GELU(1) = Phi(1) = (1 + erf(1/sqrt 2)) / 2 = 0.8413447460685429
  CHECK(scalar_function(op::gelu{}, 1.0) == Approx(0.8413447460685429).epsilon(1e-15));
  CHECK(scalar_function(op::gelu{}, -1.0) == Approx(-0.15865525393145707).epsilon(1e-14));
  CHECK(scalar_function(op::gelu{.approximate_tanh = true}, 1.0) ==
        Approx(0.5 * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * 1.044715))).epsilon(1e-15));
  CHECK(scalar_function(op::pow{.exponent = 3.0}, -2.0) == -8.0);
  CHECK(scalar_function(op::pow{.exponent = 0.5}, 9.0) == 3.0);
  CHECK(scalar_function(op::sqrt{}, 16.0) == 4.0);
  CHECK(scalar_function(op::neg{}, 2.0) == -2.0);
  CHECK(scalar_function(op::exp{}, 0.0) == 1.0);
  CHECK(scalar_function(op::erf{}, 0.0) == 0.0);
  CHECK(scalar_function(op::tanh{}, 0.0) == 0.0);
  CHECK(scalar_function(op::abs{}, -2.5) == 2.5);
  CHECK(scalar_function(op::log{}, std::exp(2.0)) == Approx(2.0).epsilon(1e-15));
  CHECK(scalar_function(op::log{}, 0.0) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(scalar_function(op::log{}, -1.0)));
  CHECK(scalar_function(op::reciprocal{}, 4.0) == 0.25);
  CHECK(scalar_function(op::floor{}, -1.5) == -2.0);
  CHECK(scalar_function(op::ceil{}, -1.5) == -1.0);
  CHECK(scalar_function(op::floor{}, 3.0) == 3.0);
  CHECK(scalar_function(op::sign{}, -0.25) == -1.0);
  CHECK(scalar_function(op::sign{}, 7.0) == 1.0);
  CHECK(scalar_function(op::sign{}, -0.0) == 0.0);
  CHECK(scalar_function(op::sign{}, std::nan("")) == 0.0);
  CHECK(std::isnan(scalar_function(op::relu{}, std::nan(""))));
  CHECK(std::isnan(scalar_function(op::hardtanh{}, std::nan(""))));

  static_assert(eval::has_scalar_function<op::relu> && eval::has_scalar_function<op::pow> &&
                eval::has_scalar_function<op::gelu> && eval::has_scalar_function<op::hardtanh> &&
                eval::has_scalar_function<op::log> && eval::has_scalar_function<op::sign>);
  // prelu's slopes are parameters, not a function of the element alone.
  static_assert(!eval::has_scalar_function<op::prelu> && !eval::has_scalar_function<op::maximum>);
  // Not functions of one element, or nothing to tabulate.
  static_assert(!eval::has_scalar_function<op::add> && !eval::has_scalar_function<op::identity> &&
                !eval::has_scalar_function<op::dropout>);
}

TEST_CASE("dropout (inference) and identity copy their input") {
  const tensor x({3, 5}, {1, -2, 3, nan_f, 5, 6, -7, 8, 9, 10, 11, 12, 13, -0.0f, inf});
  CHECK(run(op::dropout{.p = 0.5}, x).identical(x));
  CHECK(run(op::dropout{.p = 1.0}, x).identical(x));
  CHECK(run(op::identity{}, x).identical(x));
  const tensor empty({0, 4});
  CHECK(run(op::identity{}, empty).identical(empty));
}

namespace {

// The flat offset in a tensor of shape `s` of the result position `index` (given for the
// result's shape, right-aligned), with broadcast dimensions (extent 1) pinned to 0.
std::int64_t broadcast_offset(const shape& s, const std::vector<std::int64_t>& index) {
  std::int64_t offset = 0;
  const int skip = static_cast<int>(index.size()) - s.size();
  for (int d = 0; d < s.size(); ++d) {
    const std::int64_t i = s[d] == 1 ? 0 : index[static_cast<std::size_t>(d + skip)];
    offset = offset * s[d] + i;
  }
  return offset;
}

// a op b for every result element, by explicit multi-index arithmetic.
tensor broadcast_reference(const tensor& a, const tensor& b, const shape& out, float (*f)(float, float)) {
  tensor y(out);
  std::vector<std::int64_t> index(static_cast<std::size_t>(out.size()), 0);
  for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
    std::int64_t rest = flat;
    for (int d = out.size() - 1; d >= 0; --d) {
      index[static_cast<std::size_t>(d)] = rest % out[d];
      rest /= out[d];
    }
    y.values()[static_cast<std::size_t>(flat)] =
        f(a.values()[static_cast<std::size_t>(broadcast_offset(a.shape(), index))],
          b.values()[static_cast<std::size_t>(broadcast_offset(b.shape(), index))]);
  }
  return y;
}

// Distinct values, never zero (they divide), so a misplaced element shows.
tensor filled(const shape& s, float seed) {
  tensor t(s);
  for (std::size_t i = 0; i < t.size(); ++i) t.values()[i] = seed + 0.37f * static_cast<float>(i) * (i % 2 ? -1.0f : 1.0f);
  return t;
}

template <class Op>
void check_binary(Op op, float (*f)(float, float), const shape& sa, const shape& sb) {
  INFO(Op::name << " of " << to_string(sa) << " and " << to_string(sb));
  const tensor a = filled(sa, 1.25f);
  const tensor b = filled(sb, -2.5f);
  const tensor y = run(op, {&a, &b});
  const tensor want = broadcast_reference(a, b, y.shape(), f);
  // One float operation per element on both sides: equal bit for bit.
  CHECK(y.identical(want));
}

}  // namespace

TEST_CASE("add, sub, mul, div broadcast as PyTorch does") {
  const std::vector<std::pair<shape, shape>> pairs{
      {{3, 5}, {3, 5}},           // same shape: one pass
      {{37}, {37}},               // odd length: the vector tail
      {{4, 7}, {}},               // a zero-dimensional scalar
      {{}, {4, 7}},               // … on the left (order matters for sub and div)
      {{4, 7}, {1}},              // a one-element tensor
      {{5, 9}, {9}},              // a row, rank-different
      {{5, 9}, {1, 9}},           // a row
      {{5, 9}, {5, 1}},           // a column
      {{5, 1}, {5, 9}},           // a column on the left
      {{5, 1}, {1, 9}},           // outer product: both broadcast
      {{2, 1, 4}, {3, 1}},        // rank-different, broadcast in both
      {{2, 3, 1, 5}, {3, 4, 1}},  // rank 4 against rank 3
      {{2, 3, 4, 5}, {3, 1, 5}},  // a middle dimension broadcast
      {{6, 1, 1}, {1, 7, 1}},     // innermost extent 1 everywhere
      {{1, 1}, {}},               // both hold one value
      {{}, {}},
      {{3, 0}, {1}},  // empty
  };
  for (const auto& [sa, sb] : pairs) {
    check_binary(op::add{}, [](float p, float q) { return p + q; }, sa, sb);
    check_binary(op::sub{}, [](float p, float q) { return p - q; }, sa, sb);
    check_binary(op::mul{}, [](float p, float q) { return p * q; }, sa, sb);
    check_binary(op::div{}, [](float p, float q) { return p / q; }, sa, sb);
  }
}

TEST_CASE("div is true division with IEEE results for zero divisors") {
  const tensor a({4}, {1, -1, 0, 3});
  const tensor b({}, {0.0f});
  const tensor y = run(op::div{}, {&a, &b});
  CHECK(y.values()[0] == inf);
  CHECK(y.values()[1] == -inf);
  CHECK(std::isnan(y.values()[2]));
  const tensor c({4}, {2, 4, 8, 3});
  const tensor z = run(op::div{}, {&a, &c});
  CHECK(z.values()[0] == 0.5f);
  CHECK(z.values()[3] == 1.0f);
}

TEST_CASE("maximum and minimum broadcast as PyTorch does and propagate NaN") {
  const std::vector<std::pair<shape, shape>> pairs{
      {{3, 5}, {3, 5}}, {{37}, {37}},         {{4, 7}, {}},          {{}, {4, 7}},       {{5, 9}, {9}},
      {{5, 9}, {5, 1}}, {{5, 1}, {1, 9}},     {{2, 3, 1, 5}, {3, 4, 1}}, {{6, 1, 1}, {1, 7, 1}}, {{}, {}},
      {{3, 0}, {1}},
  };
  // Selecting an operand is exact: bit for bit.
  for (const auto& [sa, sb] : pairs) {
    check_binary(op::maximum{}, [](float p, float q) { return std::max(p, q); }, sa, sb);
    check_binary(op::minimum{}, [](float p, float q) { return std::min(p, q); }, sa, sb);
  }
  // NaN on either side, in the vectorized body (index 20) and the scalar tail (index 36) of a
  // 37-element pass, and through every broadcast path (one value against a run, both ways).
  std::vector<float> a_values(37);
  std::vector<float> b_values(37);
  for (std::size_t i = 0; i < 37; ++i) {
    a_values[i] = static_cast<float>(i) - 18.0f;
    b_values[i] = 18.0f - static_cast<float>(i);
  }
  a_values[20] = nan_f;
  b_values[36] = nan_f;
  a_values[3] = inf;
  b_values[4] = -inf;
  const tensor a({37}, a_values);
  const tensor b({37}, b_values);
  const tensor one_nan({}, {nan_f});
  for (bool is_max : {true, false}) {
    INFO((is_max ? "maximum" : "minimum"));
    const auto kernel = [&](const tensor& p, const tensor& q) {
      return is_max ? run(op::maximum{}, {&p, &q}) : run(op::minimum{}, {&p, &q});
    };
    const tensor y = kernel(a, b);
    for (std::size_t i = 0; i < 37; ++i) {
      const float p = a_values[i];
      const float q = b_values[i];
      if (std::isnan(p) || std::isnan(q)) CHECK(std::isnan(y.values()[i]));
      else CHECK(y.values()[i] == (is_max ? std::max(p, q) : std::min(p, q)));
    }
    for (const tensor& t : {kernel(a, one_nan), kernel(one_nan, a)})
      CHECK(std::all_of(t.values().begin(), t.values().end(), [](float v) { return std::isnan(v); }));
    const tensor two({}, {2.0f});
    const tensor with_scalar = kernel(two, a);
    CHECK(std::isnan(with_scalar.values()[20]));
    CHECK(with_scalar.values()[0] == (is_max ? 2.0f : -18.0f));
    CHECK(std::isnan(kernel(one_nan, two).values()[0]));
  }
}

namespace {

// torch.where(c != 0, x, y) for every result element, by explicit multi-index arithmetic.
tensor where_reference(const tensor& c, const tensor& x, const tensor& y, const shape& out) {
  tensor result(out);
  std::vector<std::int64_t> index(static_cast<std::size_t>(out.size()), 0);
  for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
    std::int64_t rest = flat;
    for (int d = out.size() - 1; d >= 0; --d) {
      index[static_cast<std::size_t>(d)] = rest % out[d];
      rest /= out[d];
    }
    const float condition = c.values()[static_cast<std::size_t>(broadcast_offset(c.shape(), index))];
    result.values()[static_cast<std::size_t>(flat)] =
        condition != 0.0f ? x.values()[static_cast<std::size_t>(broadcast_offset(x.shape(), index))]
                          : y.values()[static_cast<std::size_t>(broadcast_offset(y.shape(), index))];
  }
  return result;
}

// A condition with false entries (0 and -0) and true ones (1, -2.5, NaN), in a pattern that
// does not repeat with any small period.
tensor condition_tensor(const shape& s) {
  const std::array<float, 7> pattern{0.0f, 1.0f, -0.0f, -2.5f, 0.0f, nan_f, 1.0f};
  tensor t(s);
  for (std::size_t i = 0; i < t.size(); ++i) t.values()[i] = pattern[(i * 5 + i / 3) % pattern.size()];
  return t;
}

}  // namespace

TEST_CASE("where broadcasts its three operands and treats any nonzero condition (NaN too) as true") {
  const std::vector<std::array<shape, 3>> cases{
      {shape{3, 5}, shape{3, 5}, shape{3, 5}},           // one pass
      {shape{37}, shape{37}, shape{37}},                 // odd length
      {shape{}, shape{4, 7}, shape{4, 7}},               // a scalar condition
      {shape{4, 7}, shape{}, shape{}},                   // scalar values
      {shape{2, 1, 4}, shape{3, 1}, shape{4}},           // all three broadcast
      {shape{4, 1}, shape{4, 6}, shape{1, 6}},           // rows and columns
      {shape{2, 3, 4, 5}, shape{3, 1, 5}, shape{2, 1, 1, 1}},
      {shape{6, 1, 1}, shape{1, 7, 1}, shape{1, 1, 2}},  // each operand runs along its own dimension
      {shape{}, shape{}, shape{}},
      {shape{3, 0}, shape{1}, shape{0}},  // empty
  };
  for (const auto& [sc, sx, sy] : cases) {
    INFO("where of " << to_string(sc) << ", " << to_string(sx) << ", " << to_string(sy));
    const tensor c = condition_tensor(sc);
    const tensor x = filled(sx, 1.25f);
    const tensor y = filled(sy, -2.5f);
    const tensor result = run(op::where{}, {&c, &x, &y});
    CHECK(result.identical(where_reference(c, x, y, result.shape())));
  }
  const tensor c({4}, {nan_f, -0.0f, 0.0f, 1e-30f});
  const tensor x({}, {1.0f});
  const tensor y({}, {2.0f});
  const tensor z = run(op::where{}, {&c, &x, &y});
  CHECK(z.values()[0] == 1.0f);
  CHECK(z.values()[1] == 2.0f);
  CHECK(z.values()[2] == 2.0f);
  CHECK(z.values()[3] == 1.0f);

  std::vector<float> scratch;
  std::vector<tensor> out{tensor({4})};
  const tensor wrong({3}, {1, 2, 3});
  const std::vector<const tensor*> bad{&c, &wrong, &y};
  const eval::kernel_args args{.inputs = bad, .outputs = out, .scratch = &scratch, .node_name = "where_3"};
  CHECK_THROWS_WITH(eval::float_kernel(op::where{}, args),
                    Catch::Contains("where_3") && Catch::Contains("do not broadcast"));
}

namespace {

tensor run_prelu(const op::prelu& op, const tensor& x, const tensor& weight) {
  ordered_map<tensor> parameters;
  parameters.insert_or_assign("weight", weight);
  std::vector<tensor> outputs{tensor(x.shape(), std::vector<float>(x.size(), unwritten))};
  const std::vector<const tensor*> inputs{&x};
  std::vector<float> scratch;
  const eval::kernel_args args{
      .inputs = inputs, .parameters = &parameters, .outputs = outputs, .scratch = &scratch, .node_name = "prelu_1"};
  eval::float_kernel(op, args);
  return std::move(outputs[0]);
}

// torch.nn.PReLU written out: x if x > 0, else weight[c] * x, c the index along dim 1 (or 0 with
// a single weight).
tensor prelu_reference(const tensor& x, const tensor& weight) {
  tensor y(x.shape());
  const auto channels = static_cast<std::int64_t>(weight.size());
  std::int64_t spatial = 1;
  for (int d = 2; d < x.rank(); ++d) spatial *= x.shape()[d];
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int64_t c = channels == 1 ? 0 : (static_cast<std::int64_t>(i) / spatial) % channels;
    const float v = x.values()[i];
    y.values()[i] = v > 0.0f ? v : weight.values()[static_cast<std::size_t>(c)] * v;
  }
  return y;
}

}  // namespace

namespace {

// Every pair of these, as a column against a row (the outer broadcast), and a 37-element run
// against one value both ways (the vector body, its tail, and the scalar paths): 1 where `holds`
// (IEEE's comparison, C++'s operators) is true, else 0.
template <class Op>
void check_truth(Op op, bool (*holds)(float, float)) {
  INFO(Op::name);
  const std::vector<float> values{-inf, -2.5f, -0.0f, 0.0f, 1.0f, 2.5f, inf, nan_f};
  const auto n = static_cast<std::int64_t>(values.size());
  const tensor column({n, 1}, values);
  const tensor row({1, n}, values);
  const tensor pairs = run(op, {&column, &row});
  REQUIRE(pairs.shape() == shape{n, n});
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < values.size(); ++j) {
      INFO(values[i] << " against " << values[j]);
      CHECK(pairs.data()[i * values.size() + j] == (holds(values[i], values[j]) ? 1.0f : 0.0f));
    }
  std::vector<float> run_values(37);
  for (std::size_t i = 0; i < run_values.size(); ++i) run_values[i] = static_cast<float>(i % 5) - 2.0f;
  run_values[20] = nan_f;
  const tensor long_run({37}, run_values);
  const tensor one({}, {0.0f});
  const tensor left = run(op, {&long_run, &one});
  const tensor right = run(op, {&one, &long_run});
  for (std::size_t i = 0; i < run_values.size(); ++i) {
    CHECK(left.data()[i] == (holds(run_values[i], 0.0f) ? 1.0f : 0.0f));
    CHECK(right.data()[i] == (holds(0.0f, run_values[i]) ? 1.0f : 0.0f));
  }
}

bool truth(float v) { return v != 0.0f; }  // NaN is true, either zero false (torch's rule)

}  // namespace

TEST_CASE("comparisons are IEEE's, broadcast, with NaN comparing false and -0 equal to 0") {
  check_truth(op::eq{}, [](float a, float b) { return a == b; });
  check_truth(op::lt{}, [](float a, float b) { return a < b; });
  check_truth(op::le{}, [](float a, float b) { return a <= b; });
  check_truth(op::gt{}, [](float a, float b) { return a > b; });
  check_truth(op::ge{}, [](float a, float b) { return a >= b; });
  CHECK(std::string_view(op::eq::name) == "eq");
  CHECK(std::string_view(op::ge::name) == "ge");
}

TEST_CASE("logic ops read nonzero (NaN included) as true and broadcast") {
  check_truth(op::logical_and{}, [](float a, float b) { return truth(a) && truth(b); });
  check_truth(op::logical_or{}, [](float a, float b) { return truth(a) || truth(b); });
  check_truth(op::logical_xor{}, [](float a, float b) { return truth(a) != truth(b); });
  const tensor x({6}, {-0.0f, 0.0f, nan_f, inf, -1.0f, 1e-30f});
  const tensor y = run(op::logical_not{}, x);
  CHECK(y.identical(tensor({6}, {1.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f})));
}

TEST_CASE("prelu: one slope for every element or one per channel along dim 1") {
  const tensor one_slope({1}, {0.25f});
  const tensor slopes({3}, {0.25f, -0.5f, 2.0f});
  for (const shape& s : {shape{37}, shape{}, shape{4, 5}, shape{2, 3, 4}, shape{2, 3, 2, 5}}) {
    INFO(to_string(s));
    const tensor x = filled(s, -3.0f);
    CHECK(run_prelu(op::prelu{}, x, one_slope).identical(prelu_reference(x, one_slope)));
  }
  for (const shape& s : {shape{4, 3}, shape{2, 3, 4}, shape{2, 3, 2, 5}, shape{1, 3, 17}}) {
    INFO(to_string(s));
    const tensor x = filled(s, -3.0f);
    const tensor y = run_prelu(op::prelu{.num_parameters = 3}, x, slopes);
    CHECK(y.identical(prelu_reference(x, slopes)));
  }
  const tensor special({5}, {nan_f, inf, -inf, -0.0f, 0.0f});
  const tensor y = run_prelu(op::prelu{}, special, one_slope);
  CHECK(std::isnan(y.values()[0]));
  CHECK(y.values()[1] == inf);
  CHECK(y.values()[2] == -inf);
  CHECK(y.values()[3] == 0.0f);
  CHECK(y.values()[4] == 0.0f);

  // The channel count must match, a rank-1 input takes one slope only, and the weight must fit.
  const shape vector_shape{6};
  CHECK(!op::prelu{.num_parameters = 3}.infer_shapes(std::span<const shape>(&vector_shape, 1)).ok());
  CHECK(parameters_of(op::prelu{.num_parameters = 3})[0].shape == shape{3});
  CHECK_THROWS_WITH(run_prelu(op::prelu{.num_parameters = 3}, filled({2, 4, 2}, 1.0f), slopes),
                    Catch::Contains("prelu_1") && Catch::Contains("channel dimension"));
  CHECK_THROWS_WITH(run_prelu(op::prelu{.num_parameters = 3}, filled({6}, 1.0f), slopes),
                    Catch::Contains("prelu_1") && Catch::Contains("no channel dimension"));
  CHECK_THROWS_WITH(run_prelu(op::prelu{}, filled({2, 3}, 1.0f), slopes),
                    Catch::Contains("prelu_1") && Catch::Contains("holds 3 values"));
}

TEST_CASE("element-wise kernels report bad buffers, naming the node") {
  const tensor a({2, 3}, {1, 2, 3, 4, 5, 6});
  const tensor b({4}, {1, 2, 3, 4});
  std::vector<float> scratch;
  {
    std::vector<tensor> out{tensor({2, 3})};
    const std::vector<const tensor*> in{&a, &b};
    const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "add_7"};
    CHECK_THROWS_WITH(eval::float_kernel(op::add{}, args), Catch::Contains("add_7") && Catch::Contains("do not broadcast"));
  }
  {
    std::vector<tensor> out{tensor({3, 2})};
    const std::vector<const tensor*> in{&a, &a};
    const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "mul_2"};
    CHECK_THROWS_WITH(eval::float_kernel(op::mul{}, args), Catch::Contains("mul_2") && Catch::Contains("[3, 2]"));
  }
  {
    std::vector<tensor> out{tensor({2, 3})};
    const std::vector<const tensor*> in{&a};
    const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "sub_1"};
    CHECK_THROWS_WITH(eval::float_kernel(op::sub{}, args), Catch::Contains("sub_1") && Catch::Contains("2 inputs"));
  }
  {
    std::vector<tensor> out{tensor({6})};
    const std::vector<const tensor*> in{&a};
    const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "act3"};
    CHECK_THROWS_WITH(eval::float_kernel(op::relu{}, args), Catch::Contains("act3") && Catch::Contains("[6]"));
  }
  {
    std::vector<tensor> out{tensor({2, 3})};
    const std::vector<const tensor*> in{&a};
    const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "sp"};
    CHECK_THROWS_WITH(eval::float_kernel(op::softplus{.beta = 0.0}, args), Catch::Contains("sp") && Catch::Contains("beta"));
    CHECK_THROWS_WITH(eval::float_kernel(op::hardtanh{.min_val = 2.0, .max_val = 1.0}, args),
                      Catch::Contains("sp") && Catch::Contains("min_val"));
  }
}

TEST_CASE("element-wise kernels reject tensors whose storage does not match their shape") {
  // A default-constructed tensor has shape [] (one element) but holds no values.
  const tensor a({}, {2.0f});
  std::vector<float> scratch;
  std::vector<tensor> out(1);
  const std::vector<const tensor*> two{&a, &a};
  const eval::kernel_args binary{.inputs = two, .outputs = out, .scratch = &scratch, .node_name = "add_0"};
  CHECK_THROWS_WITH(eval::float_kernel(op::add{}, binary), Catch::Contains("add_0") && Catch::Contains("holds 0 values"));
  const std::vector<const tensor*> one{&a};
  const eval::kernel_args unary{.inputs = one, .outputs = out, .scratch = &scratch, .node_name = "exp_0"};
  CHECK_THROWS_WITH(eval::float_kernel(op::exp{}, unary), Catch::Contains("exp_0") && Catch::Contains("holds 0 values"));
}

TEST_CASE("kernels overwrite every element of reused buffers") {
  // The evaluator reuses buffers between runs; a second run must not depend on the first.
  const tensor a({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const tensor b({4}, {1, -1, 2, -2});
  std::vector<tensor> out{tensor({3, 4}, std::vector<float>(12, nan_f))};
  std::vector<float> scratch;
  const std::vector<const tensor*> in{&a, &b};
  const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "add"};
  eval::float_kernel(op::add{}, args);
  CHECK(out[0].identical(broadcast_reference(a, b, {3, 4}, [](float p, float q) { return p + q; })));
}
