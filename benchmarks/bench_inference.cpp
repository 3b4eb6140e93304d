// Inference through the evaluator on the three reference models (benchmarks/reference_models.hpp),
// one thread (and the _threads2 entries on two), beside two baselines from the same run:
// - direct: the same float kernels called by hand in a fixed sequence on preallocated tensors,
//   so evaluator / direct is the interpreter's overhead;
// - float: the evaluator's float mode, the baseline of the quantized modes.
// bit_exact uses 8-bit fixed point everywhere the quantize pass reaches (data_in, weight,
// bias, data_out 8 bits; fraction bits from the profiled ranges). PyTorch's eager times for the
// same models come from benchmarks/pytorch_baseline.py (docs/benchmarks.md).

#include "reference_models.hpp"

#include <mase/eval/evaluator.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <benchmark/benchmark.h>

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
// Wall time: the second thread's work is not the benchmark thread's CPU time.
BENCHMARK(bm_mlp_float_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_mlp_bit_exact_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_lenet_float_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_lenet_bit_exact_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_encoder_float_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_encoder_bit_exact_threads2)->Unit(benchmark::kMicrosecond)->UseRealTime();
