// The main job until the end-to-end flow exists: quantize a bundled weight tensor (a 64x128
// linear layer, examples/data/fc1_weight_64x128.f32) into every mase format and print a table
// of format, bits per value, SQNR, max error and throughput.

#include <mase/mase.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::vector<float> load_f32(const std::string& path, std::size_t count) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw mase::error("quantize_demo: cannot open " + path + "; pass the tensor's path as the first argument");
  std::vector<float> values(count);
  file.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (file.gcount() != static_cast<std::streamsize>(count * sizeof(float))) {
    throw mase::error("quantize_demo: " + path + " holds fewer than " + std::to_string(count) + " float32 values");
  }
  return values;
}

struct error_stats {
  double sqnr_db;
  double max_error;
};

error_stats measure(const std::vector<float>& x, const std::vector<float>& q) {
  long double signal = 0, noise = 0, max_error = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double e = static_cast<long double>(x[i]) - q[i];
    signal += static_cast<long double>(x[i]) * x[i];
    noise += e * e;
    max_error = std::max(max_error, std::fabs(e));
  }
  const double sqnr = noise == 0 ? INFINITY : static_cast<double>(10 * std::log10(signal / noise));
  return {sqnr, static_cast<double>(max_error)};
}

// Million values per second over repeated runs of at least ~20 ms.
double throughput(const mase::format& f, const std::vector<float>& x, std::span<const std::int64_t> shape) {
  std::vector<float> out(x.size());
  using clock = std::chrono::steady_clock;
  std::size_t runs = 0;
  const auto start = clock::now();
  auto elapsed = clock::duration::zero();
  while (elapsed < std::chrono::milliseconds(20)) {
    mase::quantize(f, x, shape, out);
    ++runs;
    elapsed = clock::now() - start;
  }
  return static_cast<double>(runs * x.size()) / std::chrono::duration<double>(elapsed).count() / 1e6;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : MASE_DEMO_TENSOR;
  const std::int64_t shape[] = {64, 128};
  const std::vector<float> weights = load_f32(path, 64 * 128);

  const char* formats[] = {
      "fixed<8,3>", "fixed<8,7>", "fixed<6,5>", "fixed<4,3>", "fixed<8,7,floor>", "fixed<16,15>",
      "float16", "bfloat16", "minifloat<8,4,7>", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1",
      "log<8,63>", "log<5,7>", "binary", "ternary<0.05>", "residual_sign<2,0.1,0.05>",
      "block_fp<8,8,127,[16]>", "block_fp<6,8,127,[16]>", "block_fp<4,8,127,[4,4],weight>",
      "block_minifloat<8,4,8,[16]>", "block_log<5,8,[16]>", "mxint<8,8,[1,32]>", "mxint<4,8,[1,32]>",
      "mxint8", "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1",
  };

  fmt::print("mase quantization demo: {} ({} x {} float32 weights)\n\n", path, shape[0], shape[1]);
  fmt::print("{:<34} {:>8} {:>10} {:>12} {:>14}\n", "format", "bits/val", "SQNR (dB)", "max error", "Mvalues/s");
  fmt::print("{:-<34} {:->8} {:->10} {:->12} {:->14}\n", "", "", "", "", "");
  for (const char* text : formats) {
    const mase::format f = mase::parse_format(text);
    const std::vector<float> q = mase::quantized(f, weights, shape);
    const error_stats stats = measure(weights, q);
    fmt::print("{:<34} {:>8.3f} {:>10.2f} {:>12.3e} {:>14.1f}\n", mase::to_string(f), mase::bits_per_value(f),
               stats.sqnr_db, stats.max_error, throughput(f, weights, shape));
  }
  return 0;
} catch (const mase::error& e) {
  fmt::print(stderr, "error: {}\n", e.what());
  return 1;
}
