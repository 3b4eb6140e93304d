// Inference through the evaluator on the three reference models (benchmarks/reference_models.hpp),
// one thread (and the _threads2 entries on two), beside two baselines from the same run:
// - direct: the same float kernels called by hand in a fixed sequence on preallocated tensors,
//   so evaluator / direct is the interpreter's overhead;
// - float: the evaluator's float mode, the baseline of the quantized modes.
// bit_exact uses 8-bit fixed point everywhere the quantize pass reaches (data_in, weight,
// bias, data_out 8 bits; fraction bits from the profiled ranges). PyTorch's eager times for the
// same models come from benchmarks/pytorch_baseline.py (docs/benchmarks.md).

#include "reference_models.hpp"

#include <mase/core/dispatch.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

using namespace mase;

// The shapes, formats and quantized graph of one model.
struct model_case {
  graph float_graph;
  graph quantized_graph;
  tensor input;
};

using reference_models::eight_bit_config;
using reference_models::random_input;

model_case make_case(graph g, const shape& input_shape) {
  model_case m;
  m.float_graph = std::move(g);
  m.quantized_graph = m.float_graph | init_metadata | add_common_metadata | quantize(eight_bit_config());
  m.input = random_input(input_shape, 42);
  return m;
}

const model_case& mlp() {
  static const model_case m = make_case(reference_models::mlp(64), {64, 784});
  return m;
}
const model_case& lenet() {
  static const model_case m = make_case(reference_models::lenet5(64), {64, 1, 28, 28});
  return m;
}
const model_case& encoder() {
  static const model_case m = make_case(reference_models::encoder(8), {8, 32, 128});
  return m;
}
// torchvision's resnet18 on one 224×224 image (float only: 11.7 M random weights, built here).
const model_case& resnet18() {
  static const model_case m{.float_graph = reference_models::resnet18(1, 224), .quantized_graph = {},
                            .input = random_input({1, 3, 224, 224}, 42)};
  return m;
}

// --- the direct baseline -----------------------------------------------------------------------

// Calls one float kernel by hand on tensors the caller owns.
struct direct_runner {
  const graph& g;
  std::vector<float> scratch;

  template <class Op>
  void call(std::string_view node_name, std::initializer_list<const tensor*> inputs, tensor& out) {
    const node& n = g[g.id(node_name)];
    const std::vector<const tensor*> in(inputs);
    eval::float_kernel(n.as<Op>(), eval::kernel_args{.inputs = in,
                                                     .parameters = &n.parameters,
                                                     .outputs = std::span<tensor>(&out, 1),
                                                     .scratch = &scratch,
                                                     .node_name = n.name});
  }
};

// Preallocated results, shaped as one evaluator run shaped them.
tensor& buffer(std::vector<tensor>& pool, const evaluator& ev, std::string_view name) {
  pool.emplace_back(ev.results(name)[0]->shape());
  return pool.back();
}

void bm_mlp_direct(benchmark::State& state) {
  const model_case& m = mlp();
  evaluator shapes(m.float_graph);
  shapes.run(m.input);
  std::vector<tensor> pool;
  pool.reserve(8);
  tensor &h1 = buffer(pool, shapes, "fc1"), &r1 = buffer(pool, shapes, "relu1"), &h2 = buffer(pool, shapes, "fc2"),
         &r2 = buffer(pool, shapes, "relu2"), &y = buffer(pool, shapes, "fc3");
  direct_runner d{m.float_graph, {}};
  for (auto _ : state) {
    d.call<op::linear>("fc1", {&m.input}, h1);
    d.call<op::relu>("relu1", {&h1}, r1);
    d.call<op::linear>("fc2", {&r1}, h2);
    d.call<op::relu>("relu2", {&h2}, r2);
    d.call<op::linear>("fc3", {&r2}, y);
    benchmark::DoNotOptimize(y.data());
  }
}

void bm_lenet_direct(benchmark::State& state) {
  const model_case& m = lenet();
  evaluator shapes(m.float_graph);
  shapes.run(m.input);
  std::vector<tensor> pool;
  pool.reserve(16);
  const char* names[] = {"conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "flatten",
                         "fc1",   "relu3", "fc2",   "relu4", "fc3"};
  for (const char* name : names) buffer(pool, shapes, name);
  direct_runner d{m.float_graph, {}};
  for (auto _ : state) {
    d.call<op::conv2d>("conv1", {&m.input}, pool[0]);
    d.call<op::relu>("relu1", {&pool[0]}, pool[1]);
    d.call<op::max_pool2d>("pool1", {&pool[1]}, pool[2]);
    d.call<op::conv2d>("conv2", {&pool[2]}, pool[3]);
    d.call<op::relu>("relu2", {&pool[3]}, pool[4]);
    d.call<op::max_pool2d>("pool2", {&pool[4]}, pool[5]);
    d.call<op::flatten>("flatten", {&pool[5]}, pool[6]);
    d.call<op::linear>("fc1", {&pool[6]}, pool[7]);
    d.call<op::relu>("relu3", {&pool[7]}, pool[8]);
    d.call<op::linear>("fc2", {&pool[8]}, pool[9]);
    d.call<op::relu>("relu4", {&pool[9]}, pool[10]);
    d.call<op::linear>("fc3", {&pool[10]}, pool[11]);
    benchmark::DoNotOptimize(pool[11].data());
  }
}

void bm_encoder_direct(benchmark::State& state) {
  const model_case& m = encoder();
  evaluator shapes(m.float_graph);
  shapes.run(m.input);
  const std::vector<std::string> steps = {"q", "q_heads", "q_perm", "k", "k_heads", "k_perm", "v", "v_heads",
                                          "v_perm", "attention", "merge_perm", "merge_heads", "o", "residual1",
                                          "norm1", "ffn_up", "gelu", "ffn_down", "residual2", "norm2"};
  std::vector<tensor> pool;
  pool.reserve(2 * steps.size());
  for (int l = 0; l < 2; ++l)
    for (const std::string& s : steps) buffer(pool, shapes, "layer" + std::to_string(l) + "_" + s);
  direct_runner d{m.float_graph, {}};
  for (auto _ : state) {
    const tensor* h = &m.input;
    for (int l = 0; l < 2; ++l) {
      const std::string p = "layer" + std::to_string(l) + "_";
      tensor* t = &pool[static_cast<std::size_t>(l) * steps.size()];
      const auto at = [&](std::size_t i) -> tensor& { return t[i]; };
      d.call<op::linear>(p + "q", {h}, at(0));
      d.call<op::reshape>(p + "q_heads", {&at(0)}, at(1));
      d.call<op::permute>(p + "q_perm", {&at(1)}, at(2));
      d.call<op::linear>(p + "k", {h}, at(3));
      d.call<op::reshape>(p + "k_heads", {&at(3)}, at(4));
      d.call<op::permute>(p + "k_perm", {&at(4)}, at(5));
      d.call<op::linear>(p + "v", {h}, at(6));
      d.call<op::reshape>(p + "v_heads", {&at(6)}, at(7));
      d.call<op::permute>(p + "v_perm", {&at(7)}, at(8));
      d.call<op::scaled_dot_product_attention>(p + "attention", {&at(2), &at(5), &at(8)}, at(9));
      d.call<op::permute>(p + "merge_perm", {&at(9)}, at(10));
      d.call<op::reshape>(p + "merge_heads", {&at(10)}, at(11));
      d.call<op::linear>(p + "o", {&at(11)}, at(12));
      d.call<op::add>(p + "residual1", {&at(12), h}, at(13));
      d.call<op::layer_norm>(p + "norm1", {&at(13)}, at(14));
      d.call<op::linear>(p + "ffn_up", {&at(14)}, at(15));
      d.call<op::gelu>(p + "gelu", {&at(15)}, at(16));
      d.call<op::linear>(p + "ffn_down", {&at(16)}, at(17));
      d.call<op::add>(p + "residual2", {&at(17), &at(14)}, at(18));
      d.call<op::layer_norm>(p + "norm2", {&at(18)}, at(19));
      h = &at(19);
    }
    benchmark::DoNotOptimize(h->data());
  }
}

// --- the evaluator -----------------------------------------------------------------------------

// One thread unless `threads` says otherwise (the _threads2 entries: the same run on two).
void run_evaluator(benchmark::State& state, const model_case& m, eval_mode mode, std::size_t threads = 1) {
  const graph& g = mode == eval_mode::float32 ? m.float_graph : m.quantized_graph;
  evaluator ev(g, mode);
  ev.set_threads(threads);
  ev.run(m.input);  // plans the shapes
  for (auto _ : state) benchmark::DoNotOptimize(ev.run(m.input).data());
}

// resnet18's convolutions: their time in the evaluator's run (an observer stamps each node's end)
// and their GFLOP/s (2 per multiply-accumulate), by stage, beside one core's FMA peak (bm_fma_peak).
void bm_resnet18_convolutions(benchmark::State& state) {
  const model_case& m = resnet18();
  const graph& g = m.float_graph;
  evaluator ev(g);
  ev.set_threads(1);
  ev.run(m.input);
  // Stage of each convolution (conv1 is stage 0, layerN_… stage N) and its multiply-accumulates.
  std::vector<int> stage(g.id_bound(), -1);
  std::vector<double> macs(g.id_bound(), 0.0);
  for (node_id id : g.order()) {
    const node& n = g[id];
    if (!n.is<op::conv2d>()) continue;
    const shape& w = n.parameters.at("weight").shape();
    macs[id.index] = static_cast<double>(ev.results(id)[0]->size()) * static_cast<double>(w[1] * w[2] * w[3]);
    stage[id.index] = n.name.rfind("layer", 0) == 0 ? n.name[5] - '0' : 0;
  }
  std::array<double, 5> seconds{}, flops{};
  for (auto _ : state) {
    auto last = std::chrono::steady_clock::now();
    ev.run_with(m.input, [&](const node_run& r) {
      const auto now = std::chrono::steady_clock::now();
      if (const int s = stage[r.id.index]; s >= 0) {
        seconds[static_cast<std::size_t>(s)] += std::chrono::duration<double>(now - last).count();
        flops[static_cast<std::size_t>(s)] += 2 * macs[r.id.index];
      }
      last = now;
    });
  }
  double all_seconds = 0, all_flops = 0;
  for (std::size_t s = 0; s < seconds.size(); ++s) {
    state.counters[s == 0 ? "conv1_GFLOPs" : "layer" + std::to_string(s) + "_GFLOPs"] = flops[s] / seconds[s] * 1e-9;
    all_seconds += seconds[s];
    all_flops += flops[s];
  }
  state.counters["conv_GFLOPs"] = all_flops / all_seconds * 1e-9;
  state.counters["conv_ms"] = all_seconds / static_cast<double>(state.iterations()) * 1e3;
}

#if MASE_DISPATCH
// One core's fused multiply-add peak: independent chains of vfmadd on 512-bit (AVX-512) or
// 256-bit (AVX2) registers, 2 flops per lane and instruction.
// Twelve chains in named registers (GCC spills an array of them to the stack on every round).
template <class Vector>
[[gnu::always_inline]] inline double fma_chains(std::int64_t rounds) {
  Vector c0{}, c1{}, c2{}, c3{}, c4{}, c5{}, c6{}, c7{}, c8{}, c9{}, c10{}, c11{};
  const Vector a = Vector{} + 0.999f, b = Vector{} + 1e-3f;
  for (std::int64_t r = 0; r < rounds; ++r) {
    c0 = c0 * a + b;
    c1 = c1 * a + b;
    c2 = c2 * a + b;
    c3 = c3 * a + b;
    c4 = c4 * a + b;
    c5 = c5 * a + b;
    c6 = c6 * a + b;
    c7 = c7 * a + b;
    c8 = c8 * a + b;
    c9 = c9 * a + b;
    c10 = c10 * a + b;
    c11 = c11 * a + b;
    // Opaque to the optimiser, so that the identical chains are neither merged nor folded.
    __asm__(""
            : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5),  //
              "+v"(c6), "+v"(c7), "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));
  }
  benchmark::DoNotOptimize(c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11);
  return static_cast<double>(rounds) * 12 * 2 * (sizeof(Vector) / sizeof(float));
}
using vector512 = float __attribute__((vector_size(64)));
using vector256 = float __attribute__((vector_size(32)));
__attribute__((target("avx512f"))) double fma_peak_512(std::int64_t rounds) { return fma_chains<vector512>(rounds); }
__attribute__((target("avx2,fma"))) double fma_peak_256(std::int64_t rounds) { return fma_chains<vector256>(rounds); }
void bm_fma_peak(benchmark::State& state, bool wide) {
  const dispatch::target needs = wide ? dispatch::target::x86_64_v4 : dispatch::target::x86_64_v3;
  if (!dispatch::supports(needs)) return state.SkipWithError("this processor lacks the instructions");
  double flops = 0;
  for (auto _ : state) flops += wide ? fma_peak_512(1 << 20) : fma_peak_256(1 << 20);
  state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsRate);
}
#endif

void bm_mlp_float(benchmark::State& s) { run_evaluator(s, mlp(), eval_mode::float32); }
void bm_mlp_fake_quant(benchmark::State& s) { run_evaluator(s, mlp(), eval_mode::fake_quant); }
void bm_mlp_bit_exact(benchmark::State& s) { run_evaluator(s, mlp(), eval_mode::bit_exact); }
void bm_lenet_float(benchmark::State& s) { run_evaluator(s, lenet(), eval_mode::float32); }
void bm_lenet_fake_quant(benchmark::State& s) { run_evaluator(s, lenet(), eval_mode::fake_quant); }
void bm_lenet_bit_exact(benchmark::State& s) { run_evaluator(s, lenet(), eval_mode::bit_exact); }
void bm_encoder_float(benchmark::State& s) { run_evaluator(s, encoder(), eval_mode::float32); }
void bm_encoder_fake_quant(benchmark::State& s) { run_evaluator(s, encoder(), eval_mode::fake_quant); }
void bm_encoder_bit_exact(benchmark::State& s) { run_evaluator(s, encoder(), eval_mode::bit_exact); }
void bm_mlp_float_threads2(benchmark::State& s) { run_evaluator(s, mlp(), eval_mode::float32, 2); }
void bm_mlp_bit_exact_threads2(benchmark::State& s) { run_evaluator(s, mlp(), eval_mode::bit_exact, 2); }
void bm_lenet_float_threads2(benchmark::State& s) { run_evaluator(s, lenet(), eval_mode::float32, 2); }
void bm_lenet_bit_exact_threads2(benchmark::State& s) { run_evaluator(s, lenet(), eval_mode::bit_exact, 2); }
void bm_resnet18_float(benchmark::State& s) { run_evaluator(s, resnet18(), eval_mode::float32); }
void bm_resnet18_float_threads2(benchmark::State& s) { run_evaluator(s, resnet18(), eval_mode::float32, 2); }
void bm_encoder_float_threads2(benchmark::State& s) { run_evaluator(s, encoder(), eval_mode::float32, 2); }
void bm_encoder_bit_exact_threads2(benchmark::State& s) { run_evaluator(s, encoder(), eval_mode::bit_exact, 2); }

}  // namespace

BENCHMARK(bm_mlp_direct)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_mlp_float)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_mlp_fake_quant)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_mlp_bit_exact)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_lenet_direct)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_lenet_float)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_lenet_fake_quant)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_lenet_bit_exact)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_encoder_direct)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_encoder_float)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_encoder_fake_quant)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_encoder_bit_exact)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_resnet18_float)->Unit(benchmark::kMillisecond);
#if MASE_DISPATCH
BENCHMARK_CAPTURE(bm_fma_peak, avx512, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_fma_peak, avx2, false)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(bm_resnet18_convolutions)->Unit(benchmark::kMillisecond);
// Wall time: the second thread's work is not the benchmark thread's CPU time.
BENCHMARK(bm_mlp_float_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_mlp_bit_exact_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_lenet_float_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_lenet_bit_exact_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_encoder_float_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_encoder_bit_exact_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_resnet18_float_threads2)->Unit(benchmark::kMillisecond)->UseRealTime();
