// The bit-exact evaluator's integer products against the best libraries, one thread, the same
// shapes in the same run: C[M][N] = A[M][K] · B[N][K]ᵀ (a linear layer's weight as B).
//
// - mase_int8/<target>: eval/kernels/integer_gemm.hpp on 8-bit codes, A and B laid out once
//   (the product alone, exact int32 results), on every target this processor runs;
// - mase_int8_layer: the whole bit-exact linear node through the evaluator (the float input's
//   codes, the product, the bias and the cast back to float values);
// - mase_fp32_layer: the float linear node through the evaluator (its dispatched register blocks);
// - eigen_fp32: Eigen's float GEMM, which the float evaluator ran before them (and still runs on
//   processors without AVX2);
// - onednn_fp32 / onednn_int8: oneDNN's matmul primitive in f32, and in u8 × s8 → s32 (the
//   outside anchor; built when libdnnl-dev is installed).
//
// Shapes: the MLP's first layer (64 × 784 → 256), the encoder's FFN (256 × 128 → 512) and
// LeNet's second convolution as a GEMM (64 images × 100 pixels, 150 taps → 16 channels).

#include "reference_models.hpp"

#include <mase/core/tensor_eigen.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/eval/kernels/integer_gemm.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#if MASE_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>
#endif

namespace {

using namespace mase;
namespace ig = mase::eval::integer_gemm;

struct gemm_shape {
  std::int64_t m, k, n;
};
constexpr gemm_shape shapes[] = {{64, 784, 256}, {256, 128, 512}, {6400, 150, 16}};

std::vector<std::int8_t> random_codes(std::size_t count, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> code(-128, 127);
  std::vector<std::int8_t> v(count);
  for (auto& c : v) c = static_cast<std::int8_t>(code(random));
  return v;
}

void set_counters(benchmark::State& state, const gemm_shape& s) {
  const double macs = static_cast<double>(s.m * s.k * s.n);
  state.counters["GMAC/s"] = benchmark::Counter(macs * static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n));
}

void mase_int8(benchmark::State& state, ig::isa target) {
  const gemm_shape s = shapes[state.range(0)];
  if (!ig::supports(target)) {
    state.SkipWithError("this processor lacks the target");
    return;
  }
  const auto a = random_codes(static_cast<std::size_t>(s.m * s.k), 1);
  const auto b = random_codes(static_cast<std::size_t>(s.n * s.k), 2);
  ig::packed_rhs packed;
  ig::pack_rhs(target, 8, 8, s.n, s.k, [&](ig::Index n, ig::Index i) { return b[static_cast<std::size_t>(n * s.k + i)]; },
               packed);
  ig::lhs_rows rows;
  rows.reshape(packed.kind, s.m, s.k);
  for (ig::Index r = 0; r < s.m; ++r)
    for (ig::Index i = 0; i < s.k; ++i) rows.set(r, i, a[static_cast<std::size_t>(r * s.k + i)]);
  std::vector<std::int32_t> c(static_cast<std::size_t>(s.m * s.n));
  for (auto _ : state) {
    ig::multiply(rows, packed, c.data(), s.n);
    benchmark::DoNotOptimize(c.data());
  }
  set_counters(state, s);
}

void mase_int8_portable(benchmark::State& s) { mase_int8(s, ig::isa::portable); }
void mase_int8_avx2(benchmark::State& s) { mase_int8(s, ig::isa::avx2); }
void mase_int8_avx_vnni(benchmark::State& s) { mase_int8(s, ig::isa::avx_vnni); }
void mase_int8_avx512_vnni(benchmark::State& s) { mase_int8(s, ig::isa::avx512_vnni); }

// The whole linear node through the evaluator, M rows of K features into N: bit-exact with 8-bit
// formats (the input's codes, the integer product, the bias, the cast back to values), or float
// (the dispatched register blocks of eval/kernels/float_blocks.hpp, bias included).
void linear_layer(benchmark::State& state, eval_mode mode) {
  const gemm_shape s = shapes[state.range(0)];
  builder bld(5);
  auto x = bld.input("x", {s.m, s.k});
  auto fc = bld.add("fc", op::linear{.in_features = s.k, .out_features = s.n}, x);
  graph g = bld.output(fc);
  if (mode == eval_mode::bit_exact)
    g = std::move(g) | init_metadata | add_common_metadata | quantize(reference_models::eight_bit_config());
  evaluator ev(g, mode);
  ev.set_threads(1);
  tensor input({s.m, s.k});
  std::mt19937 random(3);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  for (float& v : input.values()) v = value(random);
  ev.run(input);
  for (auto _ : state) benchmark::DoNotOptimize(ev.run(input).data());
  set_counters(state, s);
}
void mase_int8_layer(benchmark::State& s) { linear_layer(s, eval_mode::bit_exact); }
void mase_fp32_layer(benchmark::State& s) { linear_layer(s, eval_mode::float32); }

void eigen_fp32(benchmark::State& state) {
  const gemm_shape s = shapes[state.range(0)];
  using row_major = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const row_major a = row_major::Random(s.m, s.k), b = row_major::Random(s.n, s.k);
  row_major c(s.m, s.n);
  for (auto _ : state) {
    c.noalias() = a * b.transpose();
    benchmark::DoNotOptimize(c.data());
  }
  set_counters(state, s);
}

#if MASE_BENCH_ONEDNN
// oneDNN on one thread (its CPU runtime is OpenMP).
const int onednn_one_thread = (omp_set_num_threads(1), 0);

template <dnnl::memory::data_type A, dnnl::memory::data_type B, dnnl::memory::data_type C, class TA, class TB, class TC>
void onednn(benchmark::State& state) {
  const gemm_shape s = shapes[state.range(0)];
  using tag = dnnl::memory::format_tag;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc a_desc({s.m, s.k}, A, tag::ab), b_desc({s.k, s.n}, B, tag::ba), c_desc({s.m, s.n}, C, tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_desc, b_desc, c_desc), engine);
  const dnnl::matmul product(pd);
  std::vector<TA> a(static_cast<std::size_t>(s.m * s.k), TA(3));
  std::vector<TB> b(static_cast<std::size_t>(s.k * s.n), TB(-2));
  std::vector<TC> c(static_cast<std::size_t>(s.m * s.n));
  dnnl::memory a_mem(a_desc, engine, a.data()), b_mem(b_desc, engine, b.data()), c_mem(c_desc, engine, c.data());
  for (auto _ : state) {
    product.execute(stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    stream.wait();
    benchmark::DoNotOptimize(c.data());
  }
  set_counters(state, s);
  state.counters["threads"] = onednn_one_thread + omp_get_max_threads();
}
void onednn_fp32(benchmark::State& s) {
  using dt = dnnl::memory::data_type;
  onednn<dt::f32, dt::f32, dt::f32, float, float, float>(s);
}
void onednn_int8(benchmark::State& s) {
  using dt = dnnl::memory::data_type;
  onednn<dt::u8, dt::s8, dt::s32, std::uint8_t, std::int8_t, std::int32_t>(s);
}
#endif

}  // namespace

BENCHMARK(mase_int8_portable)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK(mase_int8_avx2)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK(mase_int8_avx_vnni)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK(mase_int8_avx512_vnni)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK(mase_int8_layer)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK(mase_fp32_layer)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK(eigen_fp32)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
#if MASE_BENCH_ONEDNN
BENCHMARK(onednn_fp32)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK(onednn_int8)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
#endif
