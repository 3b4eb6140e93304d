// The hardware cost model (include/mase/verilog/cost.hpp) against yosys and Verilator.
//
// Emits 27 designs (MLPs, the jet tagger's core, CNNs, batch norm, average and max pools, activation tables, a residual
// block, a matmul of two streams; widths 2 to 16 bits; several parallelisms), synthesizes each with
// yosys for a target (xc7: synth_xilinx, the default; ice40-up5k: synth_ice40 -dsp), and optionally
// simulates it with Verilator without stalls. It fits the target family's LUT and flip-flop
// coefficients by least squares, prints them, and reports the model's error against yosys for
// LUTs, flip-flops, DSP cells and block RAMs, with the fitted coefficients both in sample and
// leaving each design out of its own fit, and the cycles per sample against Verilator's steady
// state.
//
//   hardware_cost_calibration WORK_DIR [--target NAME] [--jobs N] [--simulate] [--reuse] [--csv FILE]

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>
#include <mase/verilog/cost.hpp>

#include "hardware_designs.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

using namespace mase;
namespace fs = std::filesystem;

namespace {

using namespace mase_hardware_designs;

graph sigmoid_mlp() {
  builder b(22);
  auto x = b.input("x", {1, 32});
  auto h = b.add("fc1", op::linear{.in_features = 32, .out_features = 24}, x);
  h = b.add("sigmoid", op::sigmoid{}, h);
  auto y = b.add("fc2", op::linear{.in_features = 24, .out_features = 8}, h);
  return b.output(y);
}

graph cnn_batch_norm(std::int64_t channels, std::int64_t filters) {
  builder b(24);
  auto x = b.input("x", {1, channels, 8, 8});
  auto h = b.add("conv1", op::conv2d{.in_channels = channels, .out_channels = filters, .kernel_size = {3},
                                     .padding = {1}, .bias = false},
                 x);
  h = b.add("bn1", op::batch_norm2d{.num_features = filters}, h);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("pool1", op::avg_pool2d{.kernel_size = {2}, .stride = {2}}, h);
  h = b.add("conv2", op::conv2d{.in_channels = filters, .out_channels = filters, .kernel_size = {3}, .padding = {1}}, h);
  h = b.add("relu2", op::relu{}, h);
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  auto y = b.add("fc1", op::linear{.in_features = filters * 16, .out_features = 6}, h);
  return b.output(y);
}

graph residual_block() {
  builder b(25);
  auto x = b.input("x", {1, 16});
  auto h = b.add("fc1", op::linear{.in_features = 16, .out_features = 32}, x);
  h = b.add("gelu", op::gelu{}, h);
  h = b.add("fc2", op::linear{.in_features = 32, .out_features = 16}, h);
  auto y = b.add("residual", op::add{}, x, h);
  return b.output(y);
}

graph query_key() {
  builder b(26);
  auto x = b.input("x", {1, 8, 16});
  auto keys = b.input("keys", {1, 16, 8});
  auto q = b.add("q_proj", op::linear{.in_features = 16, .out_features = 16}, x);
  auto scores = b.add("scores", op::matmul{}, q, keys);
  return b.output(scores);
}

struct design {
  std::string name;
  std::function<graph()> make;
  quantize_config config;
  std::array<int, 4> parallelism;
};

std::vector<design> designs() {
  const auto m = [](std::vector<std::int64_t> s) { return [s] { return mlp(s); }; };
  return {
      {"mlp64_w8_p4", m({64, 32, 10}), widths(8, 8), {4, 4, 4, 4}},
      {"mlp64_w8_p8", m({64, 32, 10}), widths(8, 8), {8, 8, 8, 8}},
      {"mlp64_w8_p2", m({64, 32, 10}), widths(8, 8), {2, 2, 2, 2}},
      {"mlp64_w4_p4", m({64, 32, 10}), widths(4, 4), {4, 4, 4, 4}},
      {"mlp64_d8w4_p8", m({64, 32, 10}), widths(8, 4), {8, 4, 4, 4}},
      {"mlp64_d6w3_p8", m({64, 32, 10}), widths(6, 3), {8, 8, 8, 8}},
      {"mlp64_w12_p4", m({64, 32, 10}), widths(12, 12), {4, 4, 4, 4}},
      {"mlp64_w16_p2", m({64, 32, 10}), widths(16, 16), {2, 4, 2, 2}},
      {"mlp64_d8w2_p8", m({64, 32, 10}), widths(8, 2), {8, 8, 8, 8}},
      {"mlp128_w8_p8", m({128, 64, 10}), widths(8, 8), {8, 8, 8, 8}},
      {"mlp128_w4_p16", m({128, 64, 10}), widths(4, 4), {16, 8, 8, 8}},
      {"mlp256_w6_p4", m({256, 128, 10}), widths(6, 6), {4, 8, 4, 4}},
      {"mlp3_w6_p4", m({32, 16, 16, 10}), widths(6, 6), {4, 4, 4, 4}},
      {"mlp_gelu_w8_p4", [] { return mlp({32, 32, 10}, true); }, widths(8, 8), {4, 4, 4, 4}},
      {"mlp_sigmoid_w6_p8", sigmoid_mlp, widths(6, 6), {8, 8, 8, 8}},
      {"cnn1x8_w8_p4", [] { return cnn(1, 8, 4); }, widths(8, 8), {4, 4, 4, 4}},
      {"cnn1x8_w8_p2", [] { return cnn(1, 8, 4); }, widths(8, 8), {2, 2, 2, 2}},
      {"cnn1x8_w4_p4", [] { return cnn(1, 8, 4); }, widths(4, 4), {4, 4, 4, 4}},
      {"cnn1x8_w12_p4", [] { return cnn(1, 8, 4); }, widths(12, 12), {4, 4, 4, 4}},
      {"cnn3x16_w8_p4", [] { return cnn(3, 16, 8); }, widths(8, 8), {4, 4, 4, 4}},
      {"cnn3x16_w5_p8", [] { return cnn(3, 16, 8); }, widths(5, 5), {8, 8, 8, 8}},
      {"cnn_bn_w8_p4", [] { return cnn_batch_norm(2, 4); }, widths(8, 8), {4, 4, 4, 4}},
      {"cnn_bn_w6_p2", [] { return cnn_batch_norm(2, 6); }, widths(6, 6), {2, 2, 2, 2}},
      {"residual_w8_p4", residual_block, widths(8, 8), {4, 4, 4, 4}},
      {"query_key_w8_p4", query_key, widths(8, 8), {4, 4, 4, 4}},
      // hls4ml's jet-tagging dense core, as `mase emit-verilog -p 2,1` and -p 4 build it
      {"jet_w8_p2x1", m({16, 64, 32, 32, 5}), widths(8, 8), {2, 1, 1, 1}},
      {"jet_w8_p4", m({16, 64, 32, 32, 5}), widths(8, 8), {4, 4, 4, 4}},
  };
}

struct measurement {
  std::string name;
  verilog::hardware_cost model;
  verilog::mapping::logic_features features;
  verilog::synthesis_report yosys;
  double simulated_cycles = 0;  // Verilator, steady state without stalls (0: not simulated)
  std::string failure;
};

measurement measure(const design& d, const verilog::target& t, const fs::path& work, bool simulate, bool reuse) {
  measurement r;
  r.name = d.name;
  try {
    const auto hw = full_range_parameters(d.make(), 7) | init_metadata | add_common_metadata | quantize(d.config) |
                    add_hardware_metadata({.max_parallelism = d.parallelism});
    r.model = verilog::estimate_hardware_cost(hw, t);
    r.features = verilog::mapping::features_of(r.model.components, t.cost);
    const fs::path dir = work / d.name;
    if (reuse && fs::exists(dir / "reports/utilization.txt") && verilog::read_synthesis_report(dir).target == t.name) {
      r.yosys = verilog::read_synthesis_report(dir);
      std::smatch m;
      const std::string log = verilog::detail::read_all(dir / "sim/verilator.log");
      static const std::regex steady(R"(steady state: (-?\d+) cycles for the last (\d+) samples)");
      if (std::regex_search(log, m, steady)) r.simulated_cycles = std::stod(m[1]) / std::stod(m[2]);
      return r;
    }
    (void)run(hw, emit_verilog({.project_dir = dir, .samples = 6}));
    r.yosys = verilog::synthesize(dir, t);
    if (simulate) {
      const verilog::simulation_result s = verilog::simulate(dir, verilog::simulator::verilator, {.stall_percent = 0});
      if (s.failed != 0) throw error(fmt::format("{} words differ from the bit-exact evaluator", s.failed));
      r.simulated_cycles = s.cycles_per_sample();
    }
  } catch (const std::exception& e) {
    r.failure = e.what();
  }
  return r;
}

// Least squares over the rows given, the columns being features; returns the coefficients. Each
// row is weighted by 1 / y, so the fit minimises the squared relative error (the error reported,
// and what makes a small design's estimate as good as a large one's). None may be negative (more
// structure never takes fewer cells): while one is, the most negative feature is dropped (its
// coefficient 0) and the rest refitted.
Eigen::VectorXd fit(const Eigen::MatrixXd& unweighted_x, const Eigen::VectorXd& unweighted_y) {
  const Eigen::VectorXd weight = unweighted_y.cwiseMax(1.0).cwiseInverse();
  const Eigen::MatrixXd x = weight.asDiagonal() * unweighted_x;
  const Eigen::VectorXd y = weight.cwiseProduct(unweighted_y);
  std::vector<Eigen::Index> kept;
  for (Eigen::Index j = 0; j < x.cols(); ++j) kept.push_back(j);
  while (!kept.empty()) {
    Eigen::MatrixXd columns(x.rows(), static_cast<Eigen::Index>(kept.size()));
    for (std::size_t j = 0; j < kept.size(); ++j) columns.col(static_cast<Eigen::Index>(j)) = x.col(kept[j]);
    const Eigen::VectorXd c = columns.colPivHouseholderQr().solve(y);
    Eigen::Index most_negative = 0;
    if (c.minCoeff(&most_negative) >= 0) {
      Eigen::VectorXd all = Eigen::VectorXd::Zero(x.cols());
      for (std::size_t j = 0; j < kept.size(); ++j) all(kept[j]) = c(static_cast<Eigen::Index>(j));
      return all;
    }
    kept.erase(kept.begin() + most_negative);
  }
  return Eigen::VectorXd::Zero(x.cols());
}

struct error_summary {
  double mean_abs = 0, max_abs = 0;  // relative errors
};

error_summary summarize(const std::vector<double>& model, const std::vector<double>& truth) {
  error_summary s;
  std::size_t n = 0;
  for (std::size_t i = 0; i < model.size(); ++i) {
    if (truth[i] == 0 && model[i] == 0) {
      ++n;
      continue;
    }
    const double e = std::abs(model[i] - truth[i]) / std::max(truth[i], 1.0);
    s.mean_abs += e;
    s.max_abs = std::max(s.max_abs, e);
    ++n;
  }
  if (n > 0) s.mean_abs /= static_cast<double>(n);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: hardware_cost_calibration WORK_DIR [--target NAME] [--jobs N] [--simulate] [--reuse] [--csv FILE]\n";
    return 2;
  }
  const fs::path work = argv[1];
  std::size_t jobs = 2;
  bool simulate = false, reuse = false;
  fs::path csv;
  const verilog::target* t = &verilog::targets::xc7;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--jobs" && i + 1 < argc) jobs = std::stoul(argv[++i]);
    else if (a == "--target" && i + 1 < argc) t = &verilog::target_from_string(argv[++i]);
    else if (a == "--simulate") simulate = true;
    else if (a == "--reuse") reuse = true;  // take the designs already synthesized in WORK_DIR
    else if (a == "--csv" && i + 1 < argc) csv = argv[++i];
    else {
      std::cerr << "hardware_cost_calibration: unknown argument " << a << "\n";
      return 2;
    }
  }
  const std::vector<design> list = designs();
  std::vector<measurement> results(list.size());
  std::atomic<std::size_t> next{0};
  std::mutex print;
  const auto worker = [&] {
    for (std::size_t i = next++; i < list.size(); i = next++) {
      results[i] = measure(list[i], *t, work, simulate, reuse);
      const std::lock_guard lock(print);
      std::cerr << fmt::format("[{}/{}] {}{}\n", i + 1, list.size(), list[i].name,
                               results[i].failure.empty() ? "" : ": " + results[i].failure);
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  std::erase_if(results, [](const measurement& m) { return !m.failure.empty(); });
  const std::size_t n = results.size();

  // LUTs = Σ c_k·feature_k; flip-flops = a·components + b·register bits.
  Eigen::MatrixXd lut_x(n, 4), ff_x(n, 2);
  Eigen::VectorXd luts(n), ffs(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& f = results[i].features;
    const auto row = static_cast<Eigen::Index>(i);
    lut_x.row(row) << f.components, f.select_bits, f.soft_product_bits, f.rom_luts;
    ff_x.row(row) << f.components, f.register_bits;
    luts(row) = static_cast<double>(results[i].yosys.luts);
    ffs(row) = static_cast<double>(results[i].yosys.flip_flops);
  }
  const Eigen::VectorXd lut_c = fit(lut_x, luts), ff_c = fit(ff_x, ffs);
  // Leave one out: each design's estimate from a fit without it.
  std::vector<double> lut_loo(n), ff_loo(n);
  for (std::size_t i = 0; i < n; ++i) {
    Eigen::MatrixXd lx(n - 1, lut_x.cols()), fx(n - 1, ff_x.cols());
    Eigen::VectorXd ly(n - 1), fy(n - 1);
    for (std::size_t j = 0, k = 0; j < n; ++j) {
      if (j == i) continue;
      const auto r = static_cast<Eigen::Index>(j), o = static_cast<Eigen::Index>(k++);
      lx.row(o) = lut_x.row(r), fx.row(o) = ff_x.row(r), ly(o) = luts(r), fy(o) = ffs(r);
    }
    const auto r = static_cast<Eigen::Index>(i);
    lut_loo[i] = lut_x.row(r).dot(fit(lx, ly));
    ff_loo[i] = ff_x.row(r).dot(fit(fx, fy));
  }

  std::vector<double> lut_model, lut_true, ff_model, ff_true, dsp_model, dsp_true, bram_model, bram_true, cyc_model,
      cyc_true, lut_committed, ff_committed, lutram_model, lutram_true;
  fmt::print("{:<20} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>5} {:>5} {:>6} {:>6} {:>6} {:>9} {:>9}\n", "design",
             "LUT", "yosys", "loo", "FF", "yosys", "DSP", "yosys", "BRAM", "yosys", "LUTRAM", "yosys", "cycles",
             "verilator");
  for (std::size_t i = 0; i < n; ++i) {
    const measurement& m = results[i];
    const auto r = static_cast<Eigen::Index>(i);
    const double lut = lut_x.row(r).dot(lut_c), ff = ff_x.row(r).dot(ff_c);
    lut_model.push_back(lut), lut_true.push_back(luts(r));
    ff_model.push_back(ff), ff_true.push_back(ffs(r));
    lut_committed.push_back(m.model.resources.luts), ff_committed.push_back(m.model.resources.flip_flops);
    dsp_model.push_back(m.model.resources.dsps), dsp_true.push_back(static_cast<double>(m.yosys.multipliers));
    bram_model.push_back(m.model.resources.block_rams), bram_true.push_back(static_cast<double>(m.yosys.block_ram_units()));
    lutram_model.push_back(m.model.resources.lut_rams), lutram_true.push_back(static_cast<double>(m.yosys.lut_rams));
    if (m.simulated_cycles > 0)
      cyc_model.push_back(static_cast<double>(m.model.cycles_per_sample)), cyc_true.push_back(m.simulated_cycles);
    fmt::print("{:<20} {:>7.0f} {:>7} {:>7.0f} {:>6.0f} {:>6} {:>6.0f} {:>5} {:>5.0f} {:>6} {:>6.0f} {:>6} {:>9} "
               "{:>9.1f}\n",
               m.name, lut, m.yosys.luts, lut_loo[i], ff, m.yosys.flip_flops, m.model.resources.dsps,
               m.yosys.multipliers, m.model.resources.block_rams, m.yosys.block_ram_units(),
               m.model.resources.lut_rams, m.yosys.lut_rams, m.model.cycles_per_sample, m.simulated_cycles);
  }
  const auto line = [](std::string_view what, const error_summary& e) {
    fmt::print("{:<44} mean {:5.1f}%  max {:5.1f}%\n", what, 100 * e.mean_abs, 100 * e.max_abs);
  };
  fmt::print("\nerror against yosys ({}) over {} designs (|model - yosys| / yosys):\n", t->synthesis, n);
  line("LUTs, fitted here (in sample)", summarize(lut_model, lut_true));
  line("LUTs, each design left out of its fit", summarize(lut_loo, lut_true));
  line("LUTs, the coefficients in cost_rules.hpp", summarize(lut_committed, lut_true));
  line("flip-flops, fitted here (in sample)", summarize(ff_model, ff_true));
  line("flip-flops, each design left out of its fit", summarize(ff_loo, ff_true));
  line("flip-flops, the coefficients in cost_rules.hpp", summarize(ff_committed, ff_true));
  line("DSP cells (yosys's mul2dsp rule)", summarize(dsp_model, dsp_true));
  line("block RAMs (yosys's memory costs)", summarize(bram_model, bram_true));
  line("distributed RAM cells (yosys's memory costs)", summarize(lutram_model, lutram_true));
  if (!cyc_true.empty()) line("cycles per sample against Verilator", summarize(cyc_model, cyc_true));
  fmt::print("\nfitted coefficients (the logic_model of {}'s cost rules):\n"
             "    .luts_per_component = {:.2f},\n    .luts_per_select_bit = {:.3f},\n"
             "    .luts_per_soft_product_bit = {:.3f},\n    .luts_per_rom_lut = {:.3f},\n"
             "    .flip_flops_per_component = {:.2f},\n    .flip_flops_per_register_bit = {:.3f},\n",
             t->name, lut_c(0), lut_c(1), lut_c(2), lut_c(3), ff_c(0), ff_c(1));

  if (!csv.empty()) {
    std::ofstream out(csv);
    out << "design,components,adder_bits,select_bits,soft_product_bits,rom_luts,register_bits,dsps,model_dsps,"
           "model_block_rams,model_cycles,yosys_luts,yosys_flip_flops,yosys_dsps,yosys_block_rams,verilator_cycles\n";
    for (const measurement& m : results) {
      const auto& f = m.features;
      out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", m.name, f.components, f.adder_bits,
                         f.select_bits, f.soft_product_bits, f.rom_luts, f.register_bits, f.dsps, m.model.resources.dsps,
                         m.model.resources.block_rams, m.model.cycles_per_sample, m.yosys.luts,
                         m.yosys.flip_flops, m.yosys.multipliers, m.yosys.block_ram_units(), m.simulated_cycles);
    }
  }
  return n == list.size() ? 0 : 1;
}
