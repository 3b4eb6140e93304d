// The main job: the MASE flow on a bundled model, end to end.
//
//   1. import the bundled ONNX model, an MLP 784-256-64-10 (examples/data, trained and exported
//      by make_synthetic_digits.py on a synthetic 10-class image set; its batch dimension is
//      symbolic, and the import fixes it);
//   2. init_metadata | add_common_metadata(dummy input) | add_software_metadata |
//      profile_statistics: the range of every activation and weight, over calibration batches;
//   3. choose 8-bit fixed-point formats from those ranges and quantize;
//   4. accuracy on the 1000 bundled test images: float, fake-quant (MASE's software semantics)
//      and bit-exact (what the fixed-point hardware computes);
//   5. summarize_quantization and calculate_avg_bits;
//   6. add_hardware_metadata | emit_verilog: a streaming SystemVerilog design whose testbench
//      replays test images through it; lint it, simulate it with Verilator (every output word
//      compared with the bit-exact evaluator, under random valid/ready stalls), count its
//      cycles, and synthesize it with yosys for a resource estimate.
//
// usage: end_to_end [data_dir [hardware_dir]]   (default: the source tree's examples/data and
//        mlp_hardware in the build tree)

#include <mase/io/onnx.hpp>  // not in mase.hpp: it links the ONNX protobuf library
#include <mase/mase.hpp>
#include <mase/pass/profile_statistics.hpp>  // not in mase.hpp: calibration tools include it
#include <mase/verilog.hpp>                  // not in mase.hpp: emission is kept apart, as in MASE

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#ifndef MASE_DEMO_DATA
#define MASE_DEMO_DATA "examples/data"
#endif
#ifndef MASE_DEMO_HARDWARE_DIR
#define MASE_DEMO_HARDWARE_DIR "mlp_hardware"
#endif

namespace {

using namespace mase;

constexpr std::int64_t pixels = 784, test_count = 1000, calibration_batch = 50, calibration_samples = 200;
constexpr std::int64_t hardware_images = 50;  // replayed through the simulated design

std::vector<char> read_file(const std::string& path, std::size_t bytes) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw error(fmt::format("end_to_end: cannot open {}; pass the data directory as the first argument", path));
  std::vector<char> data(bytes);
  file.read(data.data(), static_cast<std::streamsize>(bytes));
  if (file.gcount() != static_cast<std::streamsize>(bytes) || file.peek() != std::char_traits<char>::eof())
    throw error(fmt::format("end_to_end: {} should hold exactly {} bytes", path, bytes));
  return data;
}

struct dataset {
  tensor images;  // [1000, 784], pixels / 255
  std::vector<int> labels;
};

dataset load_test_set(const std::string& dir) {
  const std::vector<char> pixels_u8 = read_file(dir + "/synthetic_digits_test.u8", test_count * pixels);
  const std::vector<char> labels_u8 = read_file(dir + "/synthetic_digits_test.labels", test_count);
  dataset d{tensor({test_count, pixels}), {}};
  for (std::size_t i = 0; i < pixels_u8.size(); ++i)
    d.images.data()[i] = static_cast<float>(static_cast<unsigned char>(pixels_u8[i])) / 255.0f;
  for (char l : labels_u8) d.labels.push_back(static_cast<unsigned char>(l));
  return d;
}

graph trained_mlp(const std::string& dir) {
  mase::onnx::import_options options;
  options.input_shapes.insert_or_assign("x", shape{calibration_batch, pixels});
  return mase::onnx::load_model(dir + "/mlp_784_256_64_10.onnx", options).graph;
}

tensor rows(const tensor& t, std::int64_t first, std::int64_t count) {
  const std::int64_t width = t.shape()[1];
  return tensor({count, width}, std::vector<float>(t.data() + first * width, t.data() + (first + count) * width));
}

double accuracy(evaluator& ev, const dataset& d) {
  const tensor& logits = ev.run(d.images)[0];
  int correct = 0;
  for (std::int64_t i = 0; i < test_count; ++i) {
    const float* row = logits.data() + i * 10;
    correct += static_cast<int>(std::max_element(row, row + 10) - row) == d.labels[static_cast<std::size_t>(i)];
  }
  return static_cast<double>(correct) / test_count;
}

// The largest magnitude a profiled entry reached (range_min_max over all its values).
double max_magnitude(const node& n, std::string_view entry) {
  const statistic& s = n.meta.software.args.at(entry).stat.at("range_min_max");
  return std::max(std::fabs(std::get<double>(s.at("min"))), std::fabs(std::get<double>(s.at("max"))));
}

// An 8-bit signed fixed-point format whose integer bits just hold `magnitude`.
fixed_fmt eight_bits_for(double magnitude) {
  const int integer_bits = magnitude > 0 ? std::max(0, static_cast<int>(std::ceil(std::log2(magnitude * (1 + 1e-9))))) : 0;
  return {.width = 8, .frac = 7 - integer_bits};
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string dir = argc > 1 ? argv[1] : MASE_DEMO_DATA;
  const dataset test = load_test_set(dir);
  const graph model = trained_mlp(dir);
  std::string imported;
  model.for_each_node([&](const node& n) {
    if (!n.is<op::placeholder>() && !n.is<op::output>()) imported += fmt::format(" {}:{}", n.name, n.op_name());
  });
  fmt::print("1. imported mlp_784_256_64_10.onnx: {} nodes,{}\n", model.size(), imported);

  // 2. metadata and statistics
  std::int64_t next_batch = 0;
  const auto calibration = [&]() -> std::optional<ordered_map<tensor>> {
    if (next_batch * calibration_batch >= calibration_samples) return std::nullopt;
    return ordered_map<tensor>{{"x", rows(test.images, (next_batch++) * calibration_batch, calibration_batch)}};
  };
  const auto progress = [](std::size_t done, std::size_t total) {
    const std::size_t width = 30, filled = total ? done * width / total : width;
    fmt::print("\r   profiling [{}{}] {}/{} batches", std::string(filled, '#'), std::string(width - filled, '.'), done,
               total);
    if (done == total) fmt::print("\n");
    std::fflush(stdout);
  };
  const auto profiled =
      model | init_metadata | add_common_metadata({{"x", rows(test.images, 0, calibration_batch)}}, {.add_value = false}) |
      add_software_metadata |
      profile_statistics({.by = profile_by::type,
                          .target_weight_nodes = {"linear"},
                          .target_activation_nodes = {"linear", "relu", "output"},
                          .weight_statistics = {stats::range_min_max_options{}},
                          .activation_statistics = {stats::range_min_max_options{}},
                          .inputs = calibration,
                          .num_samples = calibration_samples,
                          .progress = progress});
  fmt::print("2. profiled range_min_max of every linear's weights and every activation\n");

  // 3. formats from the ranges: each linear reads its input in the format its range needs and
  //    writes the format its reader's range needs; relu keeps its input's format.
  quantize_config config{.by = quantize_by::name};
  const char* layers[] = {"fc1", "fc2", "fc3"};
  const char* readers[] = {"relu1", "relu2", "output"};
  for (int i = 0; i < 3; ++i) {
    const node& fc = profiled[profiled.id(layers[i])];
    const node& reader = profiled[profiled.id(readers[i])];
    const fixed_fmt out = eight_bits_for(max_magnitude(reader, "data_in_0"));
    config.entries.emplace_back(layers[i], operand_formats{.data_in = eight_bits_for(max_magnitude(fc, "data_in_0")),
                                                           .weight = eight_bits_for(max_magnitude(fc, "weight")),
                                                           .bias = eight_bits_for(max_magnitude(fc, "bias")),
                                                           .data_out = out});
    if (i < 2) config.entries.emplace_back(readers[i], operand_formats{.data_in = out});
  }
  auto [quantized, info] = run(profiled, quantize(config));
  (void)info;
  fmt::print("3. quantized to 8-bit fixed point (fraction bits from the profiled ranges)\n");

  // 4. accuracy
  evaluator float_model(model);
  evaluator fake_quant(quantized, eval_mode::fake_quant);
  evaluator bit_exact(quantized, eval_mode::bit_exact);
  const double float_accuracy = accuracy(float_model, test);
  const double fake_accuracy = accuracy(fake_quant, test);
  const double exact_accuracy = accuracy(bit_exact, test);
  fmt::print("4. accuracy on {} test images:\n", test_count);
  fmt::print("   float32               {:6.2f} %\n", 100 * float_accuracy);
  fmt::print("   8-bit fake-quant      {:6.2f} %\n", 100 * fake_accuracy);
  fmt::print("   8-bit bit-exact       {:6.2f} %   (integer accumulation, floor and saturate, as the RTL)\n",
             100 * exact_accuracy);

  // 5. summary
  fmt::print("5. what changed:\n");
  summarize_quantization(profiled, quantized).write(std::cout);
  const avg_bits bits = calculate_avg_bits(quantized);
  fmt::print("   average bits: data {:.2f}, weights {:.2f} (float32: 32)\n", bits.data_avg_bit, bits.w_avg_bit);

  // 6. hardware
  const std::string hardware_dir = argc > 2 ? argv[2] : MASE_DEMO_HARDWARE_DIR;
  const auto hardware = quantized | add_hardware_metadata({.max_parallelism = {16, 8, 8, 8}});
  const auto emit_start = std::chrono::steady_clock::now();
  const auto [design, emitted_info] =
      run(hardware, emit_verilog({.project_dir = hardware_dir,
                                  .inputs = {{"x", rows(test.images, 0, hardware_images)}}}));
  const verilog::emit_info& emitted = std::get<0>(emitted_info);
  fmt::print("6. emitted {} in {:.2f} s: {} components, {} parallel multipliers\n", emitted.project_dir.string(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - emit_start).count(),
             emitted.components.size(), emitted.multipliers);
  std::int64_t ideal = 0;
  for (const verilog::linear_cost& l : emitted.linear_layers) {
    fmt::print("   {}: {} multiply-accumulates per image on {} multipliers: ideal {} cycles\n", l.node,
               l.macs_per_sample, l.multipliers, l.ideal_cycles());
    ideal = std::max(ideal, l.ideal_cycles());
  }
  const std::string warnings = verilog::lint(emitted.project_dir);
  fmt::print("   lint (verilator --lint-only -Wall): {}\n", warnings.empty() ? "clean" : warnings);
  const verilog::simulation_result sim = verilog::simulate(emitted.project_dir, verilog::simulator::verilator);
  fmt::print("   verilator, {} images with random stalls: {} passed, {} failed, {} cycles -> {}\n", hardware_images,
             sim.passed, sim.failed, sim.cycles, sim.ok() ? "bit-exact" : "MISMATCH");
  if (sim.ok()) {
    // Every output word is the bit-exact evaluator's, so the design classifies these images as it does.
    const tensor& logits = bit_exact.run(rows(test.images, 0, hardware_images))[0];
    int correct = 0;
    for (std::int64_t i = 0; i < hardware_images; ++i) {
      const float* row = logits.data() + i * 10;
      correct += static_cast<int>(std::max_element(row, row + 10) - row) == test.labels[static_cast<std::size_t>(i)];
    }
    fmt::print("   the design's accuracy on those {} images: {:.2f} % (bit-exact evaluator: the same words)\n",
               hardware_images, 100.0 * correct / static_cast<double>(hardware_images));
  }
  const verilog::simulation_result steady =
      verilog::simulate(emitted.project_dir, verilog::simulator::verilator, {.stall_percent = 0});
  fmt::print("   without stalls: {:.1f} cycles per image in steady state ({:.2f}x the slowest layer's ideal {})\n",
             steady.cycles_per_sample(), steady.cycles_per_sample() / static_cast<double>(ideal), ideal);
  const verilog::synthesis_report synthesis = verilog::synthesize(emitted.project_dir);
  fmt::print("   yosys synth_xilinx: {} cells, {} flip-flops, {} LUTs, {} multipliers (DSP48E1), {} block RAMs\n",
             synthesis.cells, synthesis.flip_flops, synthesis.luts, synthesis.multipliers, synthesis.block_rams);
  return sim.ok() && warnings.empty() ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "end_to_end: " << e.what() << "\n";
  return 1;
}
