// Emitting Verilog for a 100-node graph, beside a baseline from the same run.
//
// The graph: a chain of 49 linear(64 → 64) / relu pairs between its input and output (100
// nodes), quantized to 8-bit fixed point, with hardware metadata at max_parallelism 4. One
// emission writes the whole project (components, top level, 98 ROM files, testbench) and runs
// the bit-exact evaluator on the testbench's 8 samples.
// Baseline: writing the same number of bytes to one file in the same folder, which is the least
// any emitter of this project must do.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

mase::format eight_bit(int frac) { return mase::format(mase::fixed_fmt{.width = 8, .frac = frac}); }

mase::quantize_config config() {
  return {.by = mase::quantize_by::type,
          .default_config = mase::operand_formats{
              .data_in = eight_bit(4), .weight = eight_bit(6), .bias = eight_bit(5), .data_out = eight_bit(4)}};
}

const mase::graph& hundred_nodes() {
  static const mase::graph g = [] {
    mase::builder b(5);
    auto h = b.input("x", {1, 64});
    for (int i = 0; i < 49; ++i) {
      h = b.add(fmt::format("fc{}", i), mase::op::linear{.in_features = 64, .out_features = 64}, h);
      h = b.add(fmt::format("relu{}", i), mase::op::relu{}, h);
    }
    return mase::graph(b.output(h) | mase::init_metadata | mase::add_common_metadata | mase::quantize(config()) |
                       mase::add_hardware_metadata({.max_parallelism = {4, 4, 4, 4}}));
  }();
  return g;
}

fs::path project() { return fs::temp_directory_path() / "mase_bench_verilog"; }

std::int64_t bytes_under(const fs::path& dir) {
  std::int64_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) total += static_cast<std::int64_t>(entry.file_size());
  return total;
}

void emit_verilog_100_nodes(benchmark::State& state) {
  const mase::graph& g = hundred_nodes();
  if (g.size() != 100) state.SkipWithError("the graph should have 100 nodes");
  for (auto _ : state) {
    mase::verilog::emit_info info = mase::verilog::emit_verilog_project(g, {.project_dir = project(), .samples = 8});
    benchmark::DoNotOptimize(info);
  }
  state.counters["bytes"] = static_cast<double>(bytes_under(project()));
  state.counters["nodes"] = static_cast<double>(g.size());
}
BENCHMARK(emit_verilog_100_nodes)->Unit(benchmark::kMillisecond);

void write_same_bytes(benchmark::State& state) {
  mase::verilog::emit_verilog_project(hundred_nodes(), {.project_dir = project(), .samples = 8});
  const std::string bytes(static_cast<std::size_t>(bytes_under(project())), 'a');
  const fs::path file = fs::temp_directory_path() / "mase_bench_verilog_bytes";
  for (auto _ : state) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  state.counters["bytes"] = static_cast<double>(bytes.size());
  fs::remove(file);
}
BENCHMARK(write_same_bytes)->Unit(benchmark::kMillisecond);

}  // namespace
