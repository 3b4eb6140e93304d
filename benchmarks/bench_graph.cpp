// Checkpoints and pipelines, each beside a baseline from the same run.
//
// Checkpoints: an MLP with four 1024×1024 linear layers (16 MiB of float32 parameters) saved to
// and loaded from memory (checkpoint_to_strings / graph_from_checkpoint_strings) and from files
// in the temporary folder (atomic writes with fsync, so a file save includes the disk flush).
// Baseline: a memcpy of the same parameter bytes. Bytes per second count parameter bytes.
//
// Pipelines: init_metadata | add_common_metadata | verify over a chain of 1000 linear/relu
// nodes. Baseline: copying the same graph, which every pass pipeline does once (value
// semantics). Items per second count nodes.

#include <mase/io/checkpoint.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/verify.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t width = 1024;
constexpr int layers = 4;

const mase::graph& big_mlp() {
  static const mase::graph g = [] {
    mase::builder b(7);
    auto h = b.input("x", {1, width});
    for (int i = 0; i < layers; ++i)
      h = b.add(fmt::format("fc{}", i), mase::op::linear{.in_features = width, .out_features = width}, h);
    return b.output(h) | mase::init_metadata | mase::add_common_metadata;
  }();
  return g;
}

std::int64_t parameter_bytes(const mase::graph& g) {
  std::int64_t bytes = 0;
  for (const auto& [name, t] : g.named_parameters()) bytes += static_cast<std::int64_t>(t->size_in_bytes());
  return bytes;
}

const mase::graph& long_chain() {
  static const mase::graph g = [] {
    mase::builder b(3);
    auto h = b.input("x", {8, 16});
    for (int i = 0; i < 500; ++i) {
      h = b.add(fmt::format("fc{}", i), mase::op::linear{.in_features = 16, .out_features = 16}, h);
      h = b.add(fmt::format("relu{}", i), mase::op::relu{}, h);
    }
    return b.output(h);
  }();
  return g;
}

void bm_memcpy_parameters(benchmark::State& state) {
  const std::int64_t bytes = parameter_bytes(big_mlp());
  std::vector<char> in(static_cast<std::size_t>(bytes), 1), out(static_cast<std::size_t>(bytes));
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), out.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void bm_save_to_memory(benchmark::State& state) {
  const mase::graph& g = big_mlp();
  for (auto _ : state) {
    mase::checkpoint_strings saved = mase::checkpoint_to_strings(g);
    benchmark::DoNotOptimize(saved.safetensors.data());
  }
  state.SetBytesProcessed(state.iterations() * parameter_bytes(g));
}

void bm_load_from_memory(benchmark::State& state) {
  const mase::graph& g = big_mlp();
  const mase::checkpoint_strings saved = mase::checkpoint_to_strings(g);
  for (auto _ : state) {
    mase::graph loaded = mase::graph_from_checkpoint_strings(saved.json, saved.safetensors);
    benchmark::DoNotOptimize(&loaded);
  }
  state.SetBytesProcessed(state.iterations() * parameter_bytes(g));
}

const std::filesystem::path& checkpoint_stem() {
  static const std::filesystem::path stem = std::filesystem::temp_directory_path() / "mase_bench_checkpoint";
  return stem;
}

void bm_save_to_files(benchmark::State& state) {
  const mase::graph& g = big_mlp();
  for (auto _ : state) mase::export_checkpoint(g, checkpoint_stem());
  state.SetBytesProcessed(state.iterations() * parameter_bytes(g));
}

void bm_load_from_files(benchmark::State& state) {
  const mase::graph& g = big_mlp();
  mase::export_checkpoint(g, checkpoint_stem());
  for (auto _ : state) {
    mase::graph loaded = mase::from_checkpoint(checkpoint_stem());
    benchmark::DoNotOptimize(&loaded);
  }
  state.SetBytesProcessed(state.iterations() * parameter_bytes(g));
}

void bm_copy_graph(benchmark::State& state) {
  const mase::graph& g = long_chain();
  for (auto _ : state) {
    mase::graph copy = g;
    benchmark::DoNotOptimize(&copy);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(g.size()));
}

void bm_metadata_pipeline(benchmark::State& state) {
  const mase::graph& g = long_chain();
  const auto pipeline = mase::init_metadata | mase::add_common_metadata | mase::verify;
  for (auto _ : state) {
    auto annotated = g | pipeline;
    benchmark::DoNotOptimize(&annotated);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(g.size()));
}

}  // namespace

BENCHMARK(bm_memcpy_parameters)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_save_to_memory)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_load_from_memory)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_save_to_files)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_load_from_files)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_copy_graph)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_metadata_pipeline)->Unit(benchmark::kMicrosecond);
