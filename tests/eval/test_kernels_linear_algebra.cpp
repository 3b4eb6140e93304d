// The linear-algebra kernels against plainly written reference loops: float kernels within the
// rounding bound of a float dot product, the templated products at std::int64_t exactly.

#include <mase/eval/kernels/linear_algebra.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

using namespace mase;
using eval::kernel_args;

namespace {

// splitmix64: the same numbers on every platform, unlike std's distributions.
struct random_source {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float uniform() { return static_cast<float>(static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0); }
  // Uniform in [-bound, bound].
  std::int64_t integer(std::int64_t bound) {
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(2 * bound + 1)) - bound;
  }
};

tensor random_tensor(const shape& s, random_source& random) {
  tensor t(s);
  for (float& v : t.values()) v = random.uniform();
  return t;
}

std::vector<std::int64_t> random_integers(const shape& s, random_source& random, std::int64_t bound = 60) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(s.numel()));
  for (auto& x : v) x = random.integer(bound);
  return v;
}

std::vector<float> absolute(std::span<const float> v) {
  std::vector<float> out(v.begin(), v.end());
  for (float& x : out) x = std::fabs(x);
  return out;
}

// Runs an op's float kernel the way the evaluator does: the output sized by the op's shape
// rule, the scratch vector kept between runs. The output starts as NaN so that an element the
// kernel does not write fails the comparison.
template <class Op>
struct kernel_run {
  Op op{};
  std::vector<const tensor*> inputs{};
  ordered_map<tensor> parameters{};
  std::vector<tensor> outputs{};
  std::vector<float> scratch{};
  std::string name = "node";
  std::size_t threads = 1;

  const tensor& run() {
    std::vector<shape> shapes;
    for (const tensor* t : inputs) shapes.push_back(t->shape());
    const shape_result r = op.infer_shapes(shapes);
    REQUIRE(r.ok());
    outputs.assign(1, tensor(r.shapes[0]));
    for (float& v : outputs[0].values()) v = std::numeric_limits<float>::quiet_NaN();
    const kernel_args args{.inputs = inputs,
                           .parameters = &parameters,
                           .outputs = outputs,
                           .scratch = &scratch,
                           .node_name = name,
                           .threads = threads};
    eval::float_kernel(op, args);
    return outputs[0];
  }
};

// |got - want| within the worst-case rounding of a float dot product of length `terms`
// (terms · u · Σ|aᵢbᵢ|, `magnitude` being Σ|aᵢbᵢ| per element) plus one rounding of the result.
void check_close(const tensor& got, const std::vector<double>& want, const std::vector<double>& magnitude,
                 std::int64_t terms) {
  REQUIRE(got.size() == want.size());
  const double u = std::numeric_limits<float>::epsilon() / 2;
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << got.data()[i] << ", want " << want[i]);
    const double bound = (static_cast<double>(terms) + 1) * u * magnitude[i] + 1e-30;
    REQUIRE(std::fabs(static_cast<double>(got.data()[i]) - want[i]) <= bound);
  }
}

// A float sum rounded the way the float kernels' register blocks round it: one fused multiply-add
// per term (Fused), or a rounded product then a rounded sum (SSE without FMA). Accumulating in it,
// the reference loops give the kernels' exact bits, since every block adds the bias first and
// then the terms in the reference's order.
template <bool Fused>
struct float_chain {
  float value = 0;
  float_chain() = default;
  explicit float_chain(float v) : value(v) {}
  struct product {
    float a, b;
  };
  friend product operator*(float_chain a, float_chain b) { return {a.value, b.value}; }
  float_chain& operator+=(product p) {
    // The double product of two floats is exact, so its conversion is the rounded float product.
    value = Fused ? std::fma(p.a, p.b, value) : value + static_cast<float>(static_cast<double>(p.a) * p.b);
    return *this;
  }
};

template <bool Fused>
std::vector<float> chain_values(const std::vector<float_chain<Fused>>& sums) {
  std::vector<float> v;
  for (const auto& s : sums) v.push_back(s.value);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Reference loops, over any scalar T, accumulating in Acc.

template <class Acc, class T>
std::vector<Acc> naive_linear(const std::vector<T>& x, std::int64_t rows, std::int64_t in, const std::vector<T>& w,
                              std::int64_t out, const std::type_identity_t<std::vector<T>>* bias) {
  std::vector<Acc> y(static_cast<std::size_t>(rows * out));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      Acc sum = bias ? Acc((*bias)[static_cast<std::size_t>(o)]) : Acc(0);
      for (std::int64_t i = 0; i < in; ++i)
        sum += Acc(x[static_cast<std::size_t>(r * in + i)]) * Acc(w[static_cast<std::size_t>(o * in + i)]);
      y[static_cast<std::size_t>(r * out + o)] = sum;
    }
  return y;
}

// torch.matmul written out: promote 1-D operands to [1, k] / [k, 1], broadcast the batch
// dimensions by hand, multiply each pair of matrices.
template <class Acc, class T>
std::vector<Acc> naive_matmul(const std::vector<T>& a, shape as, const std::vector<T>& b, shape bs) {
  if (as.size() == 1) as = shape{1, as[0]};
  if (bs.size() == 1) bs = shape{bs[0], 1};
  const std::int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const int batch_rank = std::max(as.size(), bs.size()) - 2;
  // Each operand's batch dimension aligned from the right (1 where it has none).
  std::vector<std::int64_t> a_dims(static_cast<std::size_t>(batch_rank), 1), b_dims(a_dims), out_dims(a_dims);
  for (int d = 0; d < batch_rank; ++d) {
    const int ad = d - (batch_rank - (as.size() - 2)), bd = d - (batch_rank - (bs.size() - 2));
    if (ad >= 0) a_dims[static_cast<std::size_t>(d)] = as[ad];
    if (bd >= 0) b_dims[static_cast<std::size_t>(d)] = bs[bd];
    const auto du = static_cast<std::size_t>(d);
    out_dims[du] = std::max(a_dims[du], b_dims[du]);
  }
  std::int64_t batches = 1;
  for (auto d : out_dims) batches *= d;
  std::vector<Acc> y;
  std::vector<std::int64_t> index(static_cast<std::size_t>(batch_rank), 0);
  for (std::int64_t bi = 0; bi < batches; ++bi) {
    std::int64_t a_matrix = 0, b_matrix = 0;
    for (int d = 0; d < batch_rank; ++d) {
      const auto du = static_cast<std::size_t>(d);
      a_matrix = a_matrix * a_dims[du] + (a_dims[du] == 1 ? 0 : index[du]);
      b_matrix = b_matrix * b_dims[du] + (b_dims[du] == 1 ? 0 : index[du]);
    }
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        Acc sum = 0;
        for (std::int64_t p = 0; p < k; ++p)
          sum += Acc(a[static_cast<std::size_t>((a_matrix * m + i) * k + p)]) *
                 Acc(b[static_cast<std::size_t>((b_matrix * k + p) * n + j)]);
        y.push_back(sum);
      }
    for (int d = batch_rank - 1; d >= 0; --d) {
      if (++index[static_cast<std::size_t>(d)] < out_dims[static_cast<std::size_t>(d)]) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return y;
}

// Direct convolution, the definition: every output is a sum over the group's input channels and
// the kernel taps that land inside the (zero-padded) input.
template <class Acc, class T>
std::vector<Acc> naive_conv2d(const op::conv2d& op, const std::vector<T>& x, const shape& xs, const std::vector<T>& w,
                              const std::type_identity_t<std::vector<T>>* bias) {
  const bool batched = xs.size() == 4;
  const std::int64_t N = batched ? xs[0] : 1, C = xs.at(-3), H = xs.at(-2), W = xs.at(-1);
  const std::int64_t O = op.out_channels, G = op.groups, Cg = C / G, Og = O / G;
  const auto k = [](const dims& d, int i) { return d.size() == 1 ? d[0] : d[i]; };
  const std::int64_t KH = k(op.kernel_size, 0), KW = k(op.kernel_size, 1), SH = k(op.stride, 0), SW = k(op.stride, 1);
  const std::int64_t PH = k(op.padding, 0), PW = k(op.padding, 1), DH = k(op.dilation, 0), DW = k(op.dilation, 1);
  const std::int64_t HO = (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1, WO = (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1;
  std::vector<Acc> y;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t oh = 0; oh < HO; ++oh)
        for (std::int64_t ow = 0; ow < WO; ++ow) {
          Acc sum = bias ? Acc((*bias)[static_cast<std::size_t>(o)]) : Acc(0);
          const std::int64_t g = o / Og;
          for (std::int64_t c = 0; c < Cg; ++c)
            for (std::int64_t ki = 0; ki < KH; ++ki)
              for (std::int64_t kj = 0; kj < KW; ++kj) {
                const std::int64_t ih = oh * SH - PH + ki * DH, iw = ow * SW - PW + kj * DW;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                sum += Acc(x[static_cast<std::size_t>(((n * C + g * Cg + c) * H + ih) * W + iw)]) *
                       Acc(w[static_cast<std::size_t>(((o * Cg + c) * KH + ki) * KW + kj)]);
              }
          y.push_back(sum);
        }
  return y;
}

template <class Acc, class T>
std::vector<Acc> naive_conv1d(const op::conv1d& op, const std::vector<T>& x, const shape& xs, const std::vector<T>& w,
                              const std::type_identity_t<std::vector<T>>* bias) {
  const bool batched = xs.size() == 3;
  const std::int64_t N = batched ? xs[0] : 1, C = xs.at(-2), L = xs.at(-1);
  const std::int64_t O = op.out_channels, G = op.groups, Cg = C / G, Og = O / G;
  const std::int64_t K = op.kernel_size[0], S = op.stride[0], P = op.padding[0], D = op.dilation[0];
  const std::int64_t LO = (L + 2 * P - D * (K - 1) - 1) / S + 1;
  std::vector<Acc> y;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t ol = 0; ol < LO; ++ol) {
        Acc sum = bias ? Acc((*bias)[static_cast<std::size_t>(o)]) : Acc(0);
        for (std::int64_t c = 0; c < Cg; ++c)
          for (std::int64_t t = 0; t < K; ++t) {
            const std::int64_t il = ol * S - P + t * D;
            if (il < 0 || il >= L) continue;
            sum += Acc(x[static_cast<std::size_t>((n * C + (o / Og) * Cg + c) * L + il)]) *
                   Acc(w[static_cast<std::size_t>((o * Cg + c) * K + t)]);
          }
        y.push_back(sum);
      }
  return y;
}

// conv3d, the definition: as naive_conv2d with a depth axis.
template <class Acc, class T>
std::vector<Acc> naive_conv3d(const op::conv3d& op, const std::vector<T>& x, const shape& xs, const std::vector<T>& w,
                              const std::type_identity_t<std::vector<T>>* bias) {
  const bool batched = xs.size() == 5;
  const std::int64_t N = batched ? xs[0] : 1, C = xs.at(-4), D = xs.at(-3), H = xs.at(-2), W = xs.at(-1);
  const std::int64_t O = op.out_channels, G = op.groups, Cg = C / G, Og = O / G;
  const auto k = [](const dims& d, int i) { return d.size() == 1 ? d[0] : d[i]; };
  const std::int64_t KD = k(op.kernel_size, 0), KH = k(op.kernel_size, 1), KW = k(op.kernel_size, 2);
  const std::int64_t SD = k(op.stride, 0), SH = k(op.stride, 1), SW = k(op.stride, 2);
  const std::int64_t PD = k(op.padding, 0), PH = k(op.padding, 1), PW = k(op.padding, 2);
  const std::int64_t DD = k(op.dilation, 0), DH = k(op.dilation, 1), DW = k(op.dilation, 2);
  const std::int64_t DO = (D + 2 * PD - DD * (KD - 1) - 1) / SD + 1;
  const std::int64_t HO = (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1;
  const std::int64_t WO = (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1;
  std::vector<Acc> y;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t od = 0; od < DO; ++od)
        for (std::int64_t oh = 0; oh < HO; ++oh)
          for (std::int64_t ow = 0; ow < WO; ++ow) {
            Acc sum = bias ? Acc((*bias)[static_cast<std::size_t>(o)]) : Acc(0);
            const std::int64_t g = o / Og;
            for (std::int64_t c = 0; c < Cg; ++c)
              for (std::int64_t kd = 0; kd < KD; ++kd)
                for (std::int64_t kh = 0; kh < KH; ++kh)
                  for (std::int64_t kw = 0; kw < KW; ++kw) {
                    const std::int64_t id = od * SD - PD + kd * DD, ih = oh * SH - PH + kh * DH,
                                       iw = ow * SW - PW + kw * DW;
                    if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    sum += Acc(x[static_cast<std::size_t>((((n * C + g * Cg + c) * D + id) * H + ih) * W + iw)]) *
                           Acc(w[static_cast<std::size_t>((((o * Cg + c) * KD + kd) * KH + kh) * KW + kw)]);
                  }
            y.push_back(sum);
          }
  return y;
}

std::vector<float> values_of(const tensor& t) { return {t.values().begin(), t.values().end()}; }

// Whether the kernels fuse their multiply-adds when dispatch::limit caps them at `most`: the
// dispatched copies (AVX2 + FMA, AVX-512) always do; the baseline (Eigen's packets, compiled for
// this test's target) only where this test is compiled with FMA.
bool fused_at(dispatch::target most) {
#ifdef __FMA__
  constexpr bool baseline_fuses = true;
#else
  constexpr bool baseline_fuses = false;
#endif
  return baseline_fuses || (dispatch::chosen() >= dispatch::target::x86_64_v3 && most >= dispatch::target::x86_64_v3);
}

// Every target this processor runs (and this build has code for), from the baseline up.
std::vector<dispatch::target> runnable_targets() {
  std::vector<dispatch::target> all;
  for (auto t : {dispatch::target::baseline, dispatch::target::x86_64_v3, dispatch::target::x86_64_v4})
    if (dispatch::supports(t)) all.push_back(t);
  return all;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("linear: x·Wᵀ + b over the last dimension, any leading dimensions") {
  random_source random{1};
  const shape input_shapes[] = {{5}, {3, 5}, {2, 3, 5}};
  for (const shape& xs : input_shapes)
    for (bool bias : {true, false}) {
      INFO("input " << to_string(xs) << ", bias " << bias);
      kernel_run<op::linear> k{.op = {.in_features = 5, .out_features = 4, .bias = bias}};
      const tensor x = random_tensor(xs, random);
      k.inputs = {&x};
      k.parameters.insert_or_assign("weight", random_tensor({4, 5}, random));
      if (bias) k.parameters.insert_or_assign("bias", random_tensor({4}, random));
      const tensor& y = k.run();
      CHECK(y.shape() == ([&] { shape s = xs; s[s.size() - 1] = 4; return s; })());
      const std::int64_t rows = xs.numel() / 5;
      const tensor& weight = k.parameters.at("weight");
      const std::vector<float> b = bias ? values_of(k.parameters.at("bias")) : std::vector<float>{};
      const std::vector<float> b_abs = absolute(b);
      check_close(y, naive_linear<double>(values_of(x), rows, 5, values_of(weight), 4, bias ? &b : nullptr),
                  naive_linear<double>(absolute(x.values()), rows, 5, absolute(weight.values()), 4,
                                       bias ? &b_abs : nullptr),
                  5);
    }
}

TEST_CASE("linear: the MLP's first layer size (blocked GEMM path)") {
  random_source random{2};
  kernel_run<op::linear> k{.op = {.in_features = 784, .out_features = 256, .bias = true}};
  const tensor x = random_tensor({7, 784}, random);
  k.inputs = {&x};
  k.parameters.insert_or_assign("weight", random_tensor({256, 784}, random));
  k.parameters.insert_or_assign("bias", random_tensor({256}, random));
  const tensor& y = k.run();
  const tensor& weight = k.parameters.at("weight");
  const std::vector<float> b = values_of(k.parameters.at("bias")), b_abs = absolute(b);
  check_close(y, naive_linear<double>(values_of(x), 7, 784, values_of(weight), 256, &b),
              naive_linear<double>(absolute(x.values()), 7, 784, absolute(weight.values()), 256, &b_abs), 784);
}

TEST_CASE("linear: every target and thread count gives the scalar chain's bits", "[dispatch]") {
  // The dispatched copies add the bias and then one fused multiply-add per input feature, in
  // order, whatever their block shape, the split between threads, or the runs the inner
  // dimension is taken in (300 and 784 features span several); the baseline is Eigen's GEMM,
  // which sums in its own order, so it is held to the rounding bound instead.
  using dispatch::target;
  random_source random{4};
  struct size_case {
    std::int64_t rows, in, out;
    bool bias;
  };
  for (const auto& [rows, in, out, bias] : {size_case{13, 300, 37, true}, size_case{7, 784, 256, true},
                                            size_case{1, 5, 3, false}, size_case{25, 64, 10, false},
                                            size_case{12, 33, 32, true}}) {
    INFO(rows << " rows, " << in << " → " << out << ", bias " << bias);
    kernel_run<op::linear> k{.op = {.in_features = in, .out_features = out, .bias = bias}};
    const tensor x = random_tensor({rows, in}, random);
    k.inputs = {&x};
    k.parameters.insert_or_assign("weight", random_tensor({out, in}, random));
    std::vector<float> b;
    if (bias) {
      k.parameters.insert_or_assign("bias", random_tensor({out}, random));
      b = values_of(k.parameters.at("bias"));
    }
    const std::vector<float> w = values_of(k.parameters.at("weight")), b_abs = absolute(b);
    const std::vector<float> fused =
        chain_values(naive_linear<float_chain<true>>(values_of(x), rows, in, w, out, bias ? &b : nullptr));
    for (const target most : runnable_targets()) {
      INFO("target " << static_cast<int>(most));
      const target previous = dispatch::limit(most);
      for (std::size_t threads : {1, 2}) {
        k.threads = threads;
        k.scratch.clear();
        const tensor& y = k.run();
        if (most >= target::x86_64_v3) {
          CHECK(values_of(y) == fused);
          CHECK(values_of(k.run()) == fused);  // the packed weights reused
        } else {
          check_close(y, naive_linear<double>(values_of(x), rows, in, w, out, bias ? &b : nullptr),
                      naive_linear<double>(absolute(x.values()), rows, in, absolute(w), out, bias ? &b_abs : nullptr),
                      in);
        }
      }
      dispatch::limit(previous);
    }
  }
}

TEST_CASE("linear: a missing weight names the node") {
  kernel_run<op::linear> k{.op = {.in_features = 2, .out_features = 2, .bias = false}, .name = "fc1"};
  const tensor x({1, 2});
  k.inputs = {&x};
  REQUIRE_THROWS_WITH(k.run(), Catch::Contains("fc1") && Catch::Contains("weight"));
}

TEST_CASE("matmul: a hand-computed product and dot product") {
  const tensor a({2, 3}, {1, 2, 3, 4, 5, 6});
  const tensor b({3, 2}, {7, 8, 9, 10, 11, 12});
  kernel_run<op::matmul> k;
  k.inputs = {&a, &b};
  CHECK(k.run() == tensor({2, 2}, {58, 64, 139, 154}));

  const tensor u({3}, {1, -2, 3});
  const tensor v({3}, {4, 5, 6});
  k.inputs = {&u, &v};
  CHECK(k.run() == tensor(shape{}, {12}));
}

TEST_CASE("matmul: torch.matmul's 1-D and broadcasting cases") {
  struct shapes {
    shape a, b, y;
  };
  const shapes cases[] = {
      {{4}, {4}, {}},                          // dot product
      {{4}, {4, 3}, {3}},                      // row vector × matrix
      {{3, 4}, {4}, {3}},                      // matrix × column vector
      {{4}, {2, 4, 3}, {2, 3}},                // vector × batch of matrices
      {{2, 3, 4}, {4}, {2, 3}},                // batch of matrices × vector
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},          // x @ W: one GEMM over every batch
      {{2, 3, 4}, {1, 4, 5}, {2, 3, 5}},       // a size-1 batch of b broadcasts
      {{3, 4}, {2, 4, 5}, {2, 3, 5}},          // a's matrix shared by every b
      {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}}, // both broadcast
      {{1, 2, 3, 4}, {3, 1, 4, 2}, {3, 2, 3, 2}},
      {{2, 2, 3, 4}, {2, 2, 4, 5}, {2, 2, 3, 5}},  // equal batches (bmm-like, rank 4)
      {{2, 70, 300}, {300, 50}, {2, 70, 50}},      // large enough for Eigen's blocked kernel
      {{3, 0, 4}, {4, 2}, {3, 0, 2}},              // empty results
      {{2, 3, 0}, {2, 0, 5}, {2, 3, 5}},           // empty inner dimension: zeros
  };
  random_source random{3};
  for (const auto& c : cases) {
    INFO(to_string(c.a) << " × " << to_string(c.b));
    const tensor a = random_tensor(c.a, random);
    const tensor b = random_tensor(c.b, random);
    kernel_run<op::matmul> k;
    k.inputs = {&a, &b};
    const tensor& y = k.run();
    REQUIRE(y.shape() == c.y);
    check_close(y, naive_matmul<double>(values_of(a), c.a, values_of(b), c.b),
                naive_matmul<double>(absolute(a.values()), c.a, absolute(b.values()), c.b), c.a.back());
  }
}

TEST_CASE("bmm: one product per batch") {
  random_source random{4};
  const tensor a = random_tensor({3, 2, 4}, random);
  const tensor b = random_tensor({3, 4, 5}, random);
  kernel_run<op::bmm> k;
  k.inputs = {&a, &b};
  const tensor& y = k.run();
  REQUIRE(y.shape() == shape{3, 2, 5});
  check_close(y, naive_matmul<double>(values_of(a), a.shape(), values_of(b), b.shape()),
              naive_matmul<double>(absolute(a.values()), a.shape(), absolute(b.values()), b.shape()), 4);
}

TEST_CASE("conv2d: direct convolution over stride, padding, dilation, groups, bias and batching") {
  random_source random{5};
  const dims kernels[] = {{1}, {3}, {2, 3}};
  const dims strides[] = {{1}, {2}, {2, 1}};
  const dims paddings[] = {{0}, {1}, {2, 0}};
  const dims dilations[] = {{1}, {2}, {1, 2}};
  int checked = 0;
  for (const dims& kernel : kernels)
    for (const dims& stride : strides)
      for (const dims& padding : paddings)
        for (const dims& dilation : dilations)
          for (std::int64_t groups : {1, 2})
            // Few and many output channels per group: the kernel's one- and two-packet blocks.
            for (std::int64_t out_channels : {6, 20})
              for (bool bias : {true, false})
                for (bool batched : {true, false}) {
                  const op::conv2d op{.in_channels = 4, .out_channels = out_channels, .kernel_size = kernel,
                                      .stride = stride, .padding = padding, .dilation = dilation, .groups = groups,
                                      .bias = bias};
                  const shape xs = batched ? shape{2, 4, 7, 6} : shape{4, 7, 6};
                  const shape ws{out_channels, 4 / groups, kernel[0], kernel[kernel.size() - 1]};
                  INFO("kernel " << to_string(kernel) << " stride " << to_string(stride) << " padding "
                                 << to_string(padding) << " dilation " << to_string(dilation) << " groups " << groups
                                 << " out_channels " << out_channels << " bias " << bias << " input " << to_string(xs));
                  kernel_run<op::conv2d> k{.op = op};
                  const tensor x = random_tensor(xs, random);
                  k.inputs = {&x};
                  k.parameters.insert_or_assign("weight", random_tensor(ws, random));
                  if (bias) k.parameters.insert_or_assign("bias", random_tensor({out_channels}, random));
                  const tensor& weight = k.parameters.at("weight");
                  const std::vector<float> b = bias ? values_of(k.parameters.at("bias")) : std::vector<float>{};
                  const std::vector<float> b_abs = absolute(b);
                  const std::vector<double> want =
                      naive_conv2d<double>(op, values_of(x), xs, values_of(weight), bias ? &b : nullptr);
                  const std::vector<double> magnitude = naive_conv2d<double>(
                      op, absolute(x.values()), xs, absolute(weight.values()), bias ? &b_abs : nullptr);
                  check_close(k.run(), want, magnitude, ws[1] * ws[2] * ws[3]);
                  // A second run reuses the scratch buffer as it is: no reallocation, same result.
                  const float* scratch_before = k.scratch.data();
                  const std::size_t capacity_before = k.scratch.capacity();
                  check_close(k.run(), want, magnitude, ws[1] * ws[2] * ws[3]);
                  CHECK(k.scratch.data() == scratch_before);
                  CHECK(k.scratch.capacity() == capacity_before);
                  ++checked;
                }
  CHECK(checked > 800);  // most of the grid fits the 7×6 input
}

TEST_CASE("conv2d: every target, register block and thread count gives the scalar chain's bits", "[dispatch]") {
  // Each block (Eigen's, at the build's width; AVX2's and AVX-512's copies, chosen at run time;
  // wide, narrow or pixel-blocked) adds the bias and then one multiply-add per tap in the
  // reference's order, so each result equals the reference summed in a float_chain, fused or
  // not as the target rounds. One thread and two (splitting the images, or one image's pixel
  // tiles) agree bit for bit, and a second run reuses the weights packed in the scratch.
  using dispatch::target;
  random_source random{9};
  struct geometry_case {
    op::conv2d op;
    shape input;
  };
  const geometry_case cases[] = {
      {{.in_channels = 5, .out_channels = 17, .kernel_size = {3}, .padding = {1}}, {1, 5, 9, 11}},
      {{.in_channels = 8, .out_channels = 40, .kernel_size = {3}, .stride = {2}, .padding = {1}, .bias = false},
       {3, 8, 13, 10}},
      {{.in_channels = 6, .out_channels = 64, .kernel_size = {2, 3}, .dilation = {2, 1}, .groups = 2}, {2, 6, 9, 9}},
      {{.in_channels = 3, .out_channels = 32, .kernel_size = {7}, .stride = {2}, .padding = {3}}, {1, 3, 30, 30}},
      {{.in_channels = 64, .out_channels = 48, .kernel_size = {1}}, {1, 64, 7, 7}},
      // Few channels: pixel blocks (stride 1 along W), the narrow channel block (stride 2), and
      // a group of 12 (one packet of 8 and part of another).
      {{.in_channels = 1, .out_channels = 6, .kernel_size = {5}, .padding = {2}}, {2, 1, 12, 19}},
      {{.in_channels = 4, .out_channels = 7, .kernel_size = {3}, .stride = {1, 2}}, {1, 4, 10, 21}},
      {{.in_channels = 4, .out_channels = 12, .kernel_size = {3}, .padding = {1}, .bias = false}, {2, 4, 6, 9}},
  };
  for (const auto& [op, xs] : cases) {
    INFO("out_channels " << op.out_channels << " groups " << op.groups << " input " << to_string(xs));
    kernel_run<op::conv2d> k{.op = op};
    const tensor x = random_tensor(xs, random);
    k.inputs = {&x};
    const shape ws = op.parameters()[0].shape;
    k.parameters.insert_or_assign("weight", random_tensor(ws, random));
    std::vector<float> b;
    if (op.bias) {
      k.parameters.insert_or_assign("bias", random_tensor({op.out_channels}, random));
      b = values_of(k.parameters.at("bias"));
    }
    const std::vector<float> w = values_of(k.parameters.at("weight"));
    const std::vector<float> fused =
        chain_values(naive_conv2d<float_chain<true>>(op, values_of(x), xs, w, op.bias ? &b : nullptr));
    const std::vector<float> unfused =
        chain_values(naive_conv2d<float_chain<false>>(op, values_of(x), xs, w, op.bias ? &b : nullptr));
    for (const target most : runnable_targets()) {
      INFO("target " << static_cast<int>(most));
      const target previous = dispatch::limit(most);
      for (std::size_t threads : {1, 2}) {
        k.threads = threads;
        k.scratch.clear();
        const std::vector<float> y = values_of(k.run());
        CHECK(y == (fused_at(most) ? fused : unfused));
        CHECK(values_of(k.run()) == y);  // the packed weights reused
      }
      dispatch::limit(previous);
    }
  }
}

TEST_CASE("conv2d: LeNet-5's first layer") {
  random_source random{6};
  const op::conv2d op{.in_channels = 1, .out_channels = 6, .kernel_size = {5}, .padding = {2}};
  kernel_run<op::conv2d> k{.op = op};
  const tensor x = random_tensor({3, 1, 28, 28}, random);
  k.inputs = {&x};
  k.parameters.insert_or_assign("weight", random_tensor({6, 1, 5, 5}, random));
  k.parameters.insert_or_assign("bias", random_tensor({6}, random));
  const std::vector<float> b = values_of(k.parameters.at("bias")), b_abs = absolute(b);
  const tensor& y = k.run();
  REQUIRE(y.shape() == shape{3, 6, 28, 28});
  check_close(y, naive_conv2d<double>(op, values_of(x), x.shape(), values_of(k.parameters.at("weight")), &b),
              naive_conv2d<double>(op, absolute(x.values()), x.shape(), absolute(k.parameters.at("weight").values()),
                                   &b_abs),
              25);
}

TEST_CASE("conv3d: the definition over stride, padding, dilation, groups, bias and batching") {
  random_source random{17};
  const dims kernels[] = {{1}, {3}, {1, 2, 3}, {2, 1, 2}};
  const dims strides[] = {{1}, {2}, {1, 2, 3}};
  const dims paddings[] = {{0}, {1}, {2, 0, 1}};
  const dims dilations[] = {{1}, {2}, {2, 1, 1}};
  int checked = 0;
  for (const dims& kernel : kernels)
    for (const dims& stride : strides)
      for (const dims& padding : paddings)
        for (const dims& dilation : dilations)
          for (std::int64_t groups : {1, 2, 4})
            for (bool bias : {true, false})
              for (bool batched : {true, false}) {
                const op::conv3d op{.in_channels = 4, .out_channels = 4, .kernel_size = kernel, .stride = stride,
                                    .padding = padding, .dilation = dilation, .groups = groups, .bias = bias};
                const shape xs = batched ? shape{2, 4, 5, 6, 7} : shape{4, 5, 6, 7};
                const auto k = [&](int i) { return kernel[kernel.size() == 1 ? 0 : i]; };
                const shape ws{4, 4 / groups, k(0), k(1), k(2)};
                const shape in = xs;
                if (!op.infer_shapes(std::span<const shape>(&in, 1)).ok()) continue;
                INFO("kernel " << to_string(kernel) << " stride " << to_string(stride) << " padding "
                               << to_string(padding) << " dilation " << to_string(dilation) << " groups " << groups
                               << " bias " << bias << " input " << to_string(xs));
                kernel_run<op::conv3d> r{.op = op};
                const tensor x = random_tensor(xs, random);
                r.inputs = {&x};
                r.parameters.insert_or_assign("weight", random_tensor(ws, random));
                if (bias) r.parameters.insert_or_assign("bias", random_tensor({4}, random));
                const tensor& weight = r.parameters.at("weight");
                const std::vector<float> b = bias ? values_of(r.parameters.at("bias")) : std::vector<float>{};
                const std::vector<float> b_abs = absolute(b);
                const std::vector<double> want =
                    naive_conv3d<double>(op, values_of(x), xs, values_of(weight), bias ? &b : nullptr);
                const std::vector<double> magnitude = naive_conv3d<double>(
                    op, absolute(x.values()), xs, absolute(weight.values()), bias ? &b_abs : nullptr);
                const std::int64_t terms = ws[1] * ws[2] * ws[3] * ws[4];
                check_close(r.run(), want, magnitude, terms);
                // A second run reuses the scratch buffer and overwrites every result.
                const float* scratch_before = r.scratch.data();
                check_close(r.run(), want, magnitude, terms);
                CHECK(r.scratch.data() == scratch_before);
                ++checked;
              }
  CHECK(checked > 1000);  // most of the grid fits the 5×6×7 input
}

TEST_CASE("conv3d: columns built a few depth slices at a time give the same result") {
  random_source random{18};
  const op::conv3d op{.in_channels = 2, .out_channels = 3, .kernel_size = {3}, .padding = {1}};
  const shape xs{2, 2, 7, 5, 6};
  const tensor x = random_tensor(xs, random);
  const tensor w = random_tensor({3, 2, 3, 3, 3}, random);
  const tensor bias = random_tensor({3}, random);
  const std::vector<float> b = values_of(bias), b_abs = absolute(b);
  const shape in = xs;
  tensor y(op.infer_shapes(std::span<const shape>(&in, 1)).shapes[0]);
  auto g = eval::linear_algebra_detail::geometry(op, xs, y.shape());
  // Room for the columns of two output depth slices: slabs of 2, 2, 2 and 1 of the 7.
  g.column_budget = 2 * g.patch() * g.out_plane() + 1;
  REQUIRE(g.slab_depth() == 2);
  std::vector<float> columns(g.columns_size());
  eval::linear_algebra_detail::volume_convolve<float>(g, x.data(), w.data(), bias.data(), y.data(), columns.data());
  check_close(y, naive_conv3d<double>(op, values_of(x), xs, values_of(w), &b),
              naive_conv3d<double>(op, absolute(x.values()), xs, absolute(w.values()), &b_abs), 2 * 27);
}

TEST_CASE("conv3d: a misshapen weight names the node and both shapes") {
  random_source random{19};
  kernel_run<op::conv3d> r{.op = op::conv3d{.in_channels = 2, .out_channels = 3, .kernel_size = {2}}};
  const tensor x = random_tensor({1, 2, 3, 3, 3}, random);
  r.inputs = {&x};
  r.name = "c3";
  r.parameters.insert_or_assign("weight", random_tensor({3, 2, 2, 2}, random));
  r.parameters.insert_or_assign("bias", random_tensor({3}, random));
  CHECK_THROWS_WITH(r.run(), Catch::Contains("node c3") && Catch::Contains("[3, 2, 2, 2, 2]") &&
                                 Catch::Contains("[3, 2, 2, 2]"));
}

TEST_CASE("conv1d: direct convolution over stride, padding, dilation, groups, bias and batching") {
  random_source random{7};
  int checked = 0;
  for (std::int64_t kernel : {1, 3})
    for (std::int64_t stride : {1, 3})
      for (std::int64_t padding : {0, 2})
        for (std::int64_t dilation : {1, 2})
          for (std::int64_t groups : {1, 3})
            for (std::int64_t out_channels : {6, 21})
              for (bool bias : {true, false})
                for (bool batched : {true, false}) {
                  const op::conv1d op{.in_channels = 3, .out_channels = out_channels, .kernel_size = {kernel},
                                      .stride = {stride}, .padding = {padding}, .dilation = {dilation},
                                      .groups = groups, .bias = bias};
                  const shape xs = batched ? shape{2, 3, 11} : shape{3, 11};
                  INFO("kernel " << kernel << " stride " << stride << " padding " << padding << " dilation " << dilation
                                 << " groups " << groups << " out_channels " << out_channels << " bias " << bias
                                 << " input " << to_string(xs));
                  kernel_run<op::conv1d> k{.op = op};
                  const tensor x = random_tensor(xs, random);
                  k.inputs = {&x};
                  k.parameters.insert_or_assign("weight", random_tensor({out_channels, 3 / groups, kernel}, random));
                  if (bias) k.parameters.insert_or_assign("bias", random_tensor({out_channels}, random));
                  const tensor& weight = k.parameters.at("weight");
                  const std::vector<float> b = bias ? values_of(k.parameters.at("bias")) : std::vector<float>{};
                  const std::vector<float> b_abs = absolute(b);
                  check_close(k.run(),
                              naive_conv1d<double>(op, values_of(x), xs, values_of(weight), bias ? &b : nullptr),
                              naive_conv1d<double>(op, absolute(x.values()), xs, absolute(weight.values()),
                                                   bias ? &b_abs : nullptr),
                              3 / groups * kernel);
                  ++checked;
                }
  CHECK(checked == 256);
}

namespace {
struct attention_reference {
  std::vector<double> values;
  // Per element, the float error bound: Σⱼ pⱼvⱼ with weights p from scores s. A score rounded by
  // at most δ = (E + 1)·u·Σₑ|qₑkₑ|·scale moves every weight by at most 2δ relative (softmax
  // shifts all by the max), so the result moves by ≤ 2δ·max|v|; exp, the normalisation and the
  // final sum of S terms add (S + 4)·u·max|v|.
  std::vector<double> bounds;
};

// F.scaled_dot_product_attention's reference formula in double: scores = q kᵀ · scale, -inf above
// the diagonal when causal, softmax over the keys, times v. Batch dimensions broadcast.
attention_reference naive_attention(const tensor& q, const tensor& k, const tensor& v, bool causal, double scale) {
  const std::int64_t L = q.shape().at(-2), E = q.shape().back(), S = k.shape().at(-2), Ev = v.shape().back();
  if (scale == 0) scale = 1 / std::sqrt(static_cast<double>(E));
  const double u = std::numeric_limits<float>::epsilon() / 2;
  // The batch dimensions broadcast: take the longest and read size-1 dimensions at 0.
  const int batch_rank = std::max({q.rank(), k.rank(), v.rank()}) - 2;
  const auto dim = [&](const tensor& t, int d) {
    const int td = d - (batch_rank - (t.rank() - 2));
    return td >= 0 ? t.shape()[td] : std::int64_t{1};
  };
  std::int64_t batches = 1;
  for (int d = 0; d < batch_rank; ++d) batches *= std::max({dim(q, d), dim(k, d), dim(v, d)});
  attention_reference ref;
  for (std::int64_t bi = 0; bi < batches; ++bi) {
    // Split bi into coordinates and find each operand's matrix.
    std::int64_t rest = bi, qm = 0, km = 0, vm = 0, qs = 1, ks = 1, vs = 1;
    for (int d = batch_rank - 1; d >= 0; --d) {
      const std::int64_t extent = std::max({dim(q, d), dim(k, d), dim(v, d)});
      const std::int64_t c = rest % extent;
      rest /= extent;
      if (dim(q, d) != 1) qm += c * qs;
      if (dim(k, d) != 1) km += c * ks;
      if (dim(v, d) != 1) vm += c * vs;
      qs *= dim(q, d);
      ks *= dim(k, d);
      vs *= dim(v, d);
    }
    double largest_v = 0;
    for (std::int64_t j = 0; j < S * Ev; ++j)
      largest_v = std::max(largest_v, std::fabs(double(v.data()[vm * S * Ev + j])));
    for (std::int64_t i = 0; i < L; ++i) {
      std::vector<double> weight(static_cast<std::size_t>(S));
      double largest = -INFINITY, score_error = 0;
      for (std::int64_t j = 0; j < S; ++j) {
        double s = 0, magnitude = 0;
        for (std::int64_t e = 0; e < E; ++e) {
          const double term = double(q.data()[(qm * L + i) * E + e]) * double(k.data()[(km * S + j) * E + e]);
          s += term;
          magnitude += std::fabs(term);
        }
        score_error = std::max(score_error, static_cast<double>(E + 1) * u * magnitude * scale);
        weight[static_cast<std::size_t>(j)] = causal && j > i ? -INFINITY : s * scale;
        largest = std::max(largest, weight[static_cast<std::size_t>(j)]);
      }
      double total = 0;
      for (double& w : weight) total += (w = std::exp(w - largest));
      for (std::int64_t c = 0; c < Ev; ++c) {
        double sum = 0;
        for (std::int64_t j = 0; j < S; ++j)
          sum += weight[static_cast<std::size_t>(j)] / total * double(v.data()[(vm * S + j) * Ev + c]);
        ref.values.push_back(sum);
        ref.bounds.push_back((2 * score_error + static_cast<double>(S + 4) * u) * largest_v);
      }
    }
  }
  return ref;
}
}  // namespace

TEST_CASE("scaled_dot_product_attention: softmax(q kᵀ · scale) v, causal and broadcast") {
  struct shapes {
    shape q, k, v;
  };
  const shapes cases[] = {
      {{2, 3, 5, 8}, {2, 3, 5, 8}, {2, 3, 5, 4}},  // self-attention shapes
      {{2, 3, 4, 8}, {2, 3, 6, 8}, {2, 3, 6, 5}},  // L < S
      {{7, 8}, {3, 8}, {3, 2}},                    // L > S, unbatched
      {{2, 3, 4, 8}, {1, 3, 6, 8}, {3, 6, 5}},     // k and v broadcast over the batch
      {{3, 4, 8}, {2, 1, 6, 8}, {2, 3, 6, 5}},     // q broadcasts
  };
  random_source random{8};
  for (const auto& c : cases)
    for (bool causal : {false, true})
      for (double scale : {0.0, 0.7}) {
        INFO("q " << to_string(c.q) << " k " << to_string(c.k) << " v " << to_string(c.v) << " causal " << causal
                  << " scale " << scale);
        tensor q = random_tensor(c.q, random), k = random_tensor(c.k, random), v = random_tensor(c.v, random);
        // Scores up to ~200: exp without subtracting the row maximum would overflow float.
        for (float& x : q.values()) x *= 40;
        kernel_run<op::scaled_dot_product_attention> run{.op = {.is_causal = causal, .scale = scale}};
        run.inputs = {&q, &k, &v};
        const tensor& y = run.run();
        const attention_reference want = naive_attention(q, k, v, causal, scale);
        REQUIRE(y.size() == want.values.size());
        for (std::size_t i = 0; i < want.values.size(); ++i) {
          INFO("element " << i << ": got " << y.data()[i] << ", want " << want.values[i]);
          REQUIRE(std::fabs(y.data()[i] - want.values[i]) <= want.bounds[i]);
        }
      }
}

TEST_CASE("scaled_dot_product_attention: causal row 0 attends to key 0 only") {
  // With the mask, the first query's result is exactly the first value row.
  random_source random{9};
  const tensor q = random_tensor({4, 3}, random), k = random_tensor({4, 3}, random), v = random_tensor({4, 2}, random);
  kernel_run<op::scaled_dot_product_attention> run{.op = {.is_causal = true}};
  run.inputs = {&q, &k, &v};
  const tensor& y = run.run();
  CHECK(y.data()[0] == v.data()[0]);
  CHECK(y.data()[1] == v.data()[1]);
}

TEST_CASE("embedding: rows of the weight picked by float indices") {
  random_source random{10};
  kernel_run<op::embedding> k{.op = {.num_embeddings = 10, .embedding_dim = 4}, .name = "tok_emb"};
  const tensor indices({2, 3}, {0, 9, 3, 3, 7, 1});
  k.inputs = {&indices};
  k.parameters.insert_or_assign("weight", random_tensor({10, 4}, random));
  const tensor& y = k.run();
  REQUIRE(y.shape() == shape{2, 3, 4});
  const tensor& w = k.parameters.at("weight");
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t c = 0; c < 4; ++c)
      CHECK(y.data()[i * 4 + c] == w.data()[static_cast<std::size_t>(indices.data()[i]) * 4 + c]);
}

TEST_CASE("embedding: an index that is not a row names the node, the index and its position") {
  kernel_run<op::embedding> k{.op = {.num_embeddings = 10, .embedding_dim = 2}, .name = "tok_emb"};
  k.parameters.insert_or_assign("weight", tensor({10, 2}));
  const auto rejects = [&](float bad, const char* shown) {
    INFO("index " << bad);
    const tensor indices({2, 2}, {1, 2, bad, 3});
    k.inputs = {&indices};
    REQUIRE_THROWS_AS(k.run(), mase::error);
    REQUIRE_THROWS_WITH(k.run(), Catch::Contains("tok_emb") && Catch::Contains(std::string("index ") + shown) &&
                                     Catch::Contains("[1, 0]") && Catch::Contains("[0, 10)"));
  };
  rejects(10, "10");
  rejects(-1, "-1");
  rejects(2.5f, "2.5");
  rejects(std::numeric_limits<float>::quiet_NaN(), "nan");
}

// ---------------------------------------------------------------------------------------------
// The templated products at the bit-exact evaluator's types.

TEST_CASE("products at std::int64_t equal the integer reference exactly") {
  random_source random{11};
  SECTION("linear_product") {
    const auto x = random_integers({6, 13}, random), w = random_integers({5, 13}, random);
    std::vector<std::int64_t> y(30, -999);
    eval::linear_product<std::int64_t>(x.data(), 6, 13, w.data(), 5, y.data());
    CHECK(y == naive_linear<std::int64_t>(x, 6, 13, w, 5, nullptr));
  }
  SECTION("matmul_product") {
    const std::pair<shape, shape> cases[] = {{{4}, {4}},       {{4}, {2, 4, 3}},       {{2, 3, 4}, {4}},
                                             {{2, 3, 4}, {4, 5}}, {{3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {5, 4, 6}}};
    for (const auto& [as, bs] : cases) {
      INFO(to_string(as) << " × " << to_string(bs));
      const shape ys = op::matmul{}.infer_shapes(std::vector<shape>{as, bs}).shapes[0];
      const auto a = random_integers(as, random), b = random_integers(bs, random);
      std::vector<std::int64_t> y(static_cast<std::size_t>(ys.numel()), -999);
      eval::matmul_product<std::int64_t>(a.data(), as, b.data(), bs, y.data(), ys);
      CHECK(y == naive_matmul<std::int64_t>(a, as, b, bs));
    }
  }
  SECTION("conv2d_product") {
    const op::conv2d ops[] = {
        {.in_channels = 4, .out_channels = 6, .kernel_size = {3, 2}, .stride = {2, 1}, .padding = {1, 2},
         .dilation = {1, 2}, .groups = 2, .bias = false},
        {.in_channels = 4, .out_channels = 2, .kernel_size = {1}, .groups = 2, .bias = false},  // pointwise
    };
    for (const auto& op : ops) {
      const shape xs{2, 4, 7, 6};
      const shape ws = op.parameters()[0].shape;
      const shape ys = op.infer_shapes(std::vector<shape>{xs}).shapes[0];
      const auto x = random_integers(xs, random), w = random_integers(ws, random);
      std::vector<std::int64_t> y(static_cast<std::size_t>(ys.numel()), -999), scratch;
      eval::conv2d_product<std::int64_t>(op, x.data(), xs, w.data(), y.data(), ys, scratch);
      CHECK(y == naive_conv2d<std::int64_t>(op, x, xs, w, nullptr));
    }
  }
  SECTION("conv1d_product") {
    const op::conv1d op{.in_channels = 3, .out_channels = 6, .kernel_size = {3}, .stride = {2}, .padding = {2},
                        .dilation = {2}, .groups = 3, .bias = false};
    const shape xs{3, 11};
    const shape ys = op.infer_shapes(std::vector<shape>{xs}).shapes[0];
    const auto x = random_integers(xs, random), w = random_integers({6, 1, 3}, random);
    std::vector<std::int64_t> y(static_cast<std::size_t>(ys.numel()), -999), scratch;
    eval::conv1d_product<std::int64_t>(op, x.data(), xs, w.data(), y.data(), ys, scratch);
    CHECK(y == naive_conv1d<std::int64_t>(op, x, xs, w, nullptr));
  }
  SECTION("wide operands accumulate without rounding") {
    // Seven products (2^40 + 1)(2^20 + 1) = 2^60 + 2^40 + 2^20 + 1: the sum, just below 2^63,
    // needs all 63 bits, more than a double's 53.
    const std::int64_t term = (std::int64_t{1} << 60) + (std::int64_t{1} << 40) + (std::int64_t{1} << 20) + 1;
    std::vector<std::int64_t> x(7, (std::int64_t{1} << 40) + 1), w(7, (std::int64_t{1} << 20) + 1);
    std::int64_t y = 0;
    eval::linear_product<std::int64_t>(x.data(), 1, 7, w.data(), 1, &y);
    CHECK(y == 7 * term);
  }
}

TEST_CASE("products at double match the reference within double rounding") {
  random_source random{12};
  const op::conv2d op{.in_channels = 2, .out_channels = 3, .kernel_size = {3}, .padding = {1}, .bias = false};
  const shape xs{2, 5, 5};
  std::vector<double> x(50), w(54), y(75), scratch;
  for (double& v : x) v = random.uniform();
  for (double& v : w) v = random.uniform();
  eval::conv2d_product<double>(op, x.data(), xs, w.data(), y.data(), {3, 5, 5}, scratch);
  const std::vector<double> want = naive_conv2d<double>(op, x, xs, w, nullptr);
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(want[i]).epsilon(1e-13).margin(1e-13));

  std::vector<double> m(12), product(6);
  for (double& v : m) v = random.uniform();
  eval::matmul_product<double>(m.data(), {2, 6}, m.data(), {6, 2}, product.data(), {2, 2});
  const std::vector<double> want_product = naive_matmul<double>(m, {2, 6}, m, {6, 2});
  for (std::size_t i = 0; i < 4; ++i) CHECK(product[i] == Approx(want_product[i]).epsilon(1e-13).margin(1e-13));
  eval::linear_product<double>(m.data(), 2, 6, m.data(), 2, product.data());
  const std::vector<double> want_linear = naive_linear<double>(m, 2, 6, m, 2, nullptr);
  for (std::size_t i = 0; i < 4; ++i) CHECK(product[i] == Approx(want_linear[i]).epsilon(1e-13).margin(1e-13));
}

// ---------------------------------------------------------------------------------------------
// Transposed convolutions against the scatter loop that defines them.

namespace {

// F.conv_transpose2d written as its definition: every input pixel (n, c, ih, iw) adds
// x · w[c, o, kh, kw] to output (n, group·Og + o, ih·stride − padding + kh·dilation, …) for each
// output channel o of its group and each tap that lands inside the output; then the bias.
// conv_transpose1d is the case H = kH = 1.
struct transposed_case {
  std::int64_t N, C, H, W, O, G, KH, KW, SH, SW, PH, PW, OPH, OPW, DH, DW;
  std::int64_t out_h() const { return (H - 1) * SH - 2 * PH + DH * (KH - 1) + OPH + 1; }
  std::int64_t out_w() const { return (W - 1) * SW - 2 * PW + DW * (KW - 1) + OPW + 1; }
};

std::vector<double> naive_conv_transpose(const transposed_case& t, std::span<const float> x, std::span<const float> w,
                                         const std::vector<float>* bias) {
  const std::int64_t Cg = t.C / t.G, Og = t.O / t.G, HO = t.out_h(), WO = t.out_w();
  std::vector<double> y(static_cast<std::size_t>(t.N * t.O * HO * WO), 0.0);
  for (std::int64_t n = 0; n < t.N; ++n)
    for (std::int64_t c = 0; c < t.C; ++c)
      for (std::int64_t ih = 0; ih < t.H; ++ih)
        for (std::int64_t iw = 0; iw < t.W; ++iw) {
          const double value = x[static_cast<std::size_t>(((n * t.C + c) * t.H + ih) * t.W + iw)];
          const std::int64_t g = c / Cg;
          for (std::int64_t o = 0; o < Og; ++o)
            for (std::int64_t kh = 0; kh < t.KH; ++kh)
              for (std::int64_t kw = 0; kw < t.KW; ++kw) {
                const std::int64_t oh = ih * t.SH - t.PH + kh * t.DH, ow = iw * t.SW - t.PW + kw * t.DW;
                if (oh < 0 || oh >= HO || ow < 0 || ow >= WO) continue;
                y[static_cast<std::size_t>(((n * t.O + g * Og + o) * HO + oh) * WO + ow)] +=
                    value * w[static_cast<std::size_t>(((c * Og + o) * t.KH + kh) * t.KW + kw)];
              }
        }
  if (bias != nullptr)
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] += (*bias)[static_cast<std::size_t>(static_cast<std::int64_t>(i) / (HO * WO) % t.O)];
  return y;
}

template <class Op>
void check_transposed(const Op& op, const transposed_case& t, const shape& xs, const shape& ws, bool bias,
                      random_source& random) {
  kernel_run<Op> k{.op = op};
  const tensor x = random_tensor(xs, random);
  k.inputs = {&x};
  k.parameters.insert_or_assign("weight", random_tensor(ws, random));
  if (bias) k.parameters.insert_or_assign("bias", random_tensor({t.O}, random));
  const tensor& weight = k.parameters.at("weight");
  const std::vector<float> b = bias ? values_of(k.parameters.at("bias")) : std::vector<float>{};
  const std::vector<float> b_abs = absolute(b);
  const std::vector<double> want = naive_conv_transpose(t, x.values(), weight.values(), bias ? &b : nullptr);
  const std::vector<double> magnitude =
      naive_conv_transpose(t, absolute(x.values()), absolute(weight.values()), bias ? &b_abs : nullptr);
  const std::int64_t terms = t.C / t.G * t.KH * t.KW;
  const tensor& y = k.run();
  REQUIRE(y.shape().numel() == static_cast<std::int64_t>(want.size()));
  check_close(y, want, magnitude, terms);
  // A second run reuses the scratch buffer and overwrites the output.
  const float* scratch_before = k.scratch.data();
  check_close(k.run(), want, magnitude, terms);
  CHECK(k.scratch.data() == scratch_before);
}

}  // namespace

TEST_CASE("conv_transpose2d: the scatter definition over stride, padding, output_padding, dilation, groups") {
  random_source random{11};
  int checked = 0;
  for (const dims& kernel : {dims{1}, dims{3}, dims{2, 3}})
    for (const dims& stride : {dims{1}, dims{2}, dims{3, 1}})
      for (const dims& padding : {dims{0}, dims{1}, dims{2, 0}})
        for (const dims& dilation : {dims{1}, dims{2}, dims{1, 3}})
          for (std::int64_t groups : {1, 2})
            for (bool bias : {true, false})
              for (bool batched : {true, false}) {
                const auto at = [](const dims& d, int i) { return d[d.size() == 1 ? 0 : i]; };
                // The largest output_padding PyTorch allows per dimension: below stride or dilation.
                const std::int64_t oph = std::max(at(stride, 0), at(dilation, 0)) - 1;
                const std::int64_t opw = std::max(at(stride, 1), at(dilation, 1)) - 1;
                const transposed_case t{.N = batched ? 2 : 1, .C = 4, .H = 3, .W = 4, .O = 6, .G = groups,
                                        .KH = at(kernel, 0), .KW = at(kernel, 1), .SH = at(stride, 0),
                                        .SW = at(stride, 1), .PH = at(padding, 0), .PW = at(padding, 1),
                                        .OPH = oph, .OPW = opw, .DH = at(dilation, 0), .DW = at(dilation, 1)};
                if (t.out_h() < 1 || t.out_w() < 1) continue;  // padding crops everything
                const op::conv_transpose2d op{.in_channels = 4, .out_channels = 6, .kernel_size = kernel,
                                              .stride = stride, .padding = padding,
                                              .output_padding = dims{oph, opw}, .groups = groups, .bias = bias,
                                              .dilation = dilation};
                INFO("kernel " << to_string(kernel) << " stride " << to_string(stride) << " padding "
                               << to_string(padding) << " dilation " << to_string(dilation) << " output_padding "
                               << oph << "," << opw << " groups " << groups << " bias " << bias << " batched "
                               << batched);
                const shape xs = batched ? shape{2, 4, 3, 4} : shape{4, 3, 4};
                check_transposed(op, t, xs, {4, 6 / groups, t.KH, t.KW}, bias, random);
                ++checked;
              }
  CHECK(checked > 500);
}

TEST_CASE("conv_transpose1d: the scatter definition, and a DCGAN-sized 2-D layer") {
  random_source random{12};
  int checked = 0;
  for (std::int64_t kernel : {1, 4})
    for (std::int64_t stride : {1, 3})
      for (std::int64_t padding : {0, 2})
        for (std::int64_t dilation : {1, 2})
          for (std::int64_t groups : {1, 3})
            for (bool bias : {true, false}) {
              const std::int64_t output_padding = std::max(stride, dilation) - 1;
              const transposed_case t{.N = 2, .C = 3, .H = 1, .W = 5, .O = 6, .G = groups, .KH = 1, .KW = kernel,
                                      .SH = 1, .SW = stride, .PH = 0, .PW = padding, .OPH = 0,
                                      .OPW = output_padding, .DH = 1, .DW = dilation};
              if (t.out_w() < 1) continue;
              const op::conv_transpose1d op{.in_channels = 3, .out_channels = 6, .kernel_size = {kernel},
                                            .stride = {stride}, .padding = {padding},
                                            .output_padding = {output_padding}, .groups = groups, .bias = bias,
                                            .dilation = {dilation}};
              INFO("kernel " << kernel << " stride " << stride << " padding " << padding << " dilation " << dilation
                             << " groups " << groups << " bias " << bias);
              check_transposed(op, t, {2, 3, 5}, {3, 6 / groups, kernel}, bias, random);
              ++checked;
            }
  CHECK(checked >= 60);

  // A generator's upsampling layer: 64 → 32 channels, 8×8 → 16×16.
  const op::conv_transpose2d up{.in_channels = 64, .out_channels = 32, .kernel_size = {4}, .stride = {2},
                                .padding = {1}};
  const transposed_case t{.N = 2, .C = 64, .H = 8, .W = 8, .O = 32, .G = 1, .KH = 4, .KW = 4, .SH = 2, .SW = 2,
                          .PH = 1, .PW = 1, .OPH = 0, .OPW = 0, .DH = 1, .DW = 1};
  REQUIRE(t.out_h() == 16);
  check_transposed(up, t, {2, 64, 8, 8}, {64, 32, 4, 4}, true, random);
}

TEST_CASE("conv_transpose: a missing or misshapen weight names the node") {
  const op::conv_transpose2d op{.in_channels = 2, .out_channels = 3, .kernel_size = {3}};
  kernel_run<op::conv_transpose2d> k{.op = op, .name = "up_1"};
  const tensor x({1, 2, 3, 3});
  k.inputs = {&x};
  CHECK_THROWS_WITH(k.run(), Catch::Contains("up_1") && Catch::Contains("weight"));
  k.parameters.insert_or_assign("weight", tensor({3, 2, 3, 3}));  // conv2d's order, not [in, out/groups, …]
  k.parameters.insert_or_assign("bias", tensor({3}));
  CHECK_THROWS_WITH(k.run(), Catch::Contains("up_1") && Catch::Contains("[2, 3, 3, 3]"));
}
