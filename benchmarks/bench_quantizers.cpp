// Throughput of every array quantizer against a memcpy of the same bytes, in one run.
//
// Each entry quantizes 2^24 float32 values, normal(0, 1) from a fixed seed, out of place, on one
// thread, through the runtime path users call: mase::quantize(mase::format, in, shape, out), with
// the format parsed from its string once and dispatched once per call. Block formats see the
// values as a [4096, 4096] tensor (element-wise formats ignore the shape). The baseline
// `memcpy/16777216` copies the same 64 MiB into a separate buffer; absolute figures drift on a
// shared machine, the ratio to the baseline is the figure (tools/bench_table.py, docs/benchmarks.md).

#include <mase/format/format.hpp>
#include <mase/quant/quantize.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t rows = 4096;
constexpr std::int64_t cols = 4096;
constexpr std::int64_t count = rows * cols;  // 2^24

const char* const elementwise_formats[] = {
    "fixed<8,3>", "fixed<16,8>", "ufixed<8,4>", "fixed<8,3,floor>", "minifloat<8,4,7>", "e4m3",       "e5m2",
    "e3m2",       "e2m3",        "e2m1",        "float16",          "bfloat16",         "log<8,63>",  "log<4,3>",
    "binary",     "ternary<0.5>"};

const char* const block_formats[] = {"block_fp<8,8,127,[16]>", "block_minifloat<8,4,8,[16]>", "block_log<4,8,[16]>",
                                     "mxint<8,8,[1,32]>",      "mxint8",                      "mxfp8_e4m3",
                                     "mxfp8_e5m2",             "mxfp6_e3m2",                  "mxfp6_e2m3",
                                     "mxfp4_e2m1"};

// Shared, page-faulted buffers: the input once from a fixed seed, one output for every entry.
const std::vector<float>& input() {
  static const std::vector<float> values = [] {
    std::vector<float> v(static_cast<std::size_t>(count));
    std::mt19937_64 rng(20240607);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& x : v) x = normal(rng);
    return v;
  }();
  return values;
}

std::vector<float>& output() {
  static std::vector<float> values(static_cast<std::size_t>(count), 0.0f);
  return values;
}

void bm_memcpy(benchmark::State& state) {
  const std::vector<float>& in = input();
  std::vector<float>& out = output();
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), n * sizeof(float));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void bm_quantize(benchmark::State& state, const mase::format& f) {
  const std::vector<float>& in = input();
  std::vector<float>& out = output();
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::int64_t shape[] = {rows, cols};
  for (auto _ : state) {
    mase::quantize(f, std::span<const float>(in.data(), n), shape, std::span<float>(out.data(), n));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// Set by benchmarks/CMakeLists.txt; the JSON context carries them to tools/bench_table.py.
#ifndef MASE_BENCH_COMPILER
#define MASE_BENCH_COMPILER "unknown compiler"
#endif
#ifndef MASE_BENCH_FLAGS
#define MASE_BENCH_FLAGS "unknown flags"
#endif

// The processor's name, for the report (Linux; empty elsewhere).
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return {};
}

const int registered = [] {
  benchmark::AddCustomContext("mase_compiler", MASE_BENCH_COMPILER);
  benchmark::AddCustomContext("mase_flags", MASE_BENCH_FLAGS);
  benchmark::AddCustomContext("mase_elements", std::to_string(count));
  if (const std::string cpu = cpu_model(); !cpu.empty()) benchmark::AddCustomContext("mase_cpu", cpu);
  benchmark::RegisterBenchmark("memcpy", bm_memcpy)->Arg(count)->Unit(benchmark::kMillisecond);
  auto add = [](const char* text) {
    const mase::format f = mase::parse_format(text);
    benchmark::RegisterBenchmark((std::string("quantize/") + text).c_str(),
                                 [f](benchmark::State& state) { bm_quantize(state, f); })
        ->Arg(count)
        ->Unit(benchmark::kMillisecond);
  };
  for (const char* text : elementwise_formats) add(text);
  for (const char* text : block_formats) add(text);
  return 0;
}();

}  // namespace
