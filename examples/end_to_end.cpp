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
//      cycles, and synthesize it with yosys for a resource estimate;
//   7. the same for a CNN, the bundled LeNet-5 trained on the same digits (make_lenet.py):
//      profile, 8-bit formats, accuracy in float and bit-exact, and its design proven in
//      simulation.
//
// usage: end_to_end [data_dir [hardware_dir [lenet_hardware_dir]]]   (default: the source tree's
//        examples/data, and mlp_hardware and lenet_hardware in the build tree; with hardware_dir
//        alone, LeNet's design goes to hardware_dir + "_lenet")

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
#ifndef MASE_DEMO_LENET_HARDWARE_DIR
#define MASE_DEMO_LENET_HARDWARE_DIR "lenet_hardware"
#endif

namespace {

using namespace mase;

constexpr std::int64_t pixels = 784, test_count = 1000, calibration_batch = 50, calibration_samples = 200;
constexpr std::int64_t hardware_images = 50;        // replayed through the simulated MLP
constexpr std::int64_t lenet_hardware_images = 20;  // and LeNet

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

graph trained_lenet(const std::string& dir) {
  mase::onnx::import_options options;
  options.input_shapes.insert_or_assign("x", shape{calibration_batch, 1, 28, 28});
  return mase::onnx::load_model(dir + "/lenet5.onnx", options).graph;
}

graph trained_mlp(const std::string& dir) {
  mase::onnx::import_options options;
  options.input_shapes.insert_or_assign("x", shape{calibration_batch, pixels});
  return mase::onnx::load_model(dir + "/mlp_784_256_64_10.onnx", options).graph;
}

// Images [first, first + count) of t ([N, 784]) in `image_shape` per image ({784}, or {1, 28, 28}).
tensor rows(const tensor& t, std::int64_t first, std::int64_t count, const shape& image_shape = shape{pixels}) {
  shape s{count};
  for (int i = 0; i < image_shape.size(); ++i) s.push_back(image_shape[i]);
  return tensor(s, std::vector<float>(t.data() + first * pixels, t.data() + (first + count) * pixels));
}

// The share of images [0, count) whose largest logit is their label.
double accuracy_of(const tensor& logits, const dataset& d, std::int64_t count) {
  int correct = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const float* row = logits.data() + i * 10;
    correct += static_cast<int>(std::max_element(row, row + 10) - row) == d.labels[static_cast<std::size_t>(i)];
  }
  return static_cast<double>(correct) / static_cast<double>(count);
}

double accuracy(evaluator& ev, const dataset& d, const shape& image_shape = shape{pixels}) {
  return accuracy_of(ev.run(rows(d.images, 0, test_count, image_shape))[0], d, test_count);
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

// Formats from the profiled ranges: each linear and convolution reads its input in the format its
// range needs and writes the format its reader's range needs; a relu reader reads that format
// (and keeps it, as the pools after it do).
quantize_config eight_bit_config(const graph& profiled) {
  quantize_config config{.by = quantize_by::name};
  for (node_id id : profiled.order()) {
    const node& layer = profiled[id];
    if (!layer.is<op::linear>() && !layer.is<op::conv2d>()) continue;
    const std::vector<node_id> readers = profiled.users(id);
    require(readers.size() == 1, "end_to_end: {} should have one reader", layer.name);
    const node& reader = profiled[readers[0]];
    const fixed_fmt out = eight_bits_for(max_magnitude(reader, "data_in_0"));
    config.entries.emplace_back(layer.name, operand_formats{.data_in = eight_bits_for(max_magnitude(layer, "data_in_0")),
                                                            .weight = eight_bits_for(max_magnitude(layer, "weight")),
                                                            .bias = eight_bits_for(max_magnitude(layer, "bias")),
                                                            .data_out = out});
    if (reader.is<op::relu>()) config.entries.emplace_back(reader.name, operand_formats{.data_in = out});
  }
  return config;
}

// init_metadata | add_common_metadata | add_software_metadata | profile_statistics over the
// calibration images: the range of every dot product's weights and of every activation.
auto profile(const graph& model, const dataset& d, const shape& image_shape) {
  std::int64_t next_batch = 0;
  const auto calibration = [&]() -> std::optional<ordered_map<tensor>> {
    if (next_batch * calibration_batch >= calibration_samples) return std::nullopt;
    return ordered_map<tensor>{{"x", rows(d.images, (next_batch++) * calibration_batch, calibration_batch, image_shape)}};
  };
  const auto progress = [](std::size_t done, std::size_t total) {
    const std::size_t width = 30, filled = total ? done * width / total : width;
    fmt::print("\r   profiling [{}{}] {}/{} batches", std::string(filled, '#'), std::string(width - filled, '.'), done,
               total);
    if (done == total) fmt::print("\n");
    std::fflush(stdout);
  };
  return model | init_metadata |
         add_common_metadata({{"x", rows(d.images, 0, calibration_batch, image_shape)}}, {.add_value = false}) |
         add_software_metadata |
         profile_statistics({.by = profile_by::type,
                             .target_weight_nodes = {"linear", "conv2d"},
                             .target_activation_nodes = {"linear", "conv2d", "relu", "output"},
                             .weight_statistics = {stats::range_min_max_options{}},
                             .activation_statistics = {stats::range_min_max_options{}},
                             .inputs = calibration,
                             .num_samples = calibration_samples,
                             .progress = progress});
}

// Emits `quantized`'s design into `dir` with `images` test images as its stimulus, then lints,
// simulates (with and without stalls) and synthesizes it, printing each figure; true when it is
// lint-clean and every output word matched the bit-exact evaluator's.
template <class Quantized>  // the pipeline's typed graph, which records that it is quantized
bool prove_hardware(const Quantized& quantized, const dataset& test, const shape& image_shape, std::int64_t images,
                    const std::string& dir, const char* step) {
  const auto hardware = quantized | add_hardware_metadata({.max_parallelism = {16, 8, 8, 8}});
  const auto emit_start = std::chrono::steady_clock::now();
  const auto [design, emitted_info] =
      run(hardware, emit_verilog({.project_dir = dir, .inputs = {{"x", rows(test.images, 0, images, image_shape)}}}));
  const verilog::emit_info& emitted = std::get<0>(emitted_info);
  fmt::print("{} emitted {} in {:.2f} s: {} components, {} parallel multipliers\n", step, emitted.project_dir.string(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - emit_start).count(),
             emitted.components.size(), emitted.multipliers);
  std::int64_t ideal = 0;
  for (const verilog::linear_cost& l : emitted.dot_product_layers) {
    fmt::print("   {}: {} multiply-accumulates per image on {} multipliers: ideal {} cycles\n", l.node,
               l.macs_per_sample, l.multipliers, l.ideal_cycles());
    ideal = std::max(ideal, l.ideal_cycles());
  }
  const std::string warnings = verilog::lint(emitted.project_dir);
  fmt::print("   lint (verilator --lint-only -Wall): {}\n", warnings.empty() ? "clean" : warnings);
  const verilog::simulation_result sim = verilog::simulate(emitted.project_dir, verilog::simulator::verilator);
  fmt::print("   verilator, {} images with random stalls: {} passed, {} failed, {} cycles -> {}\n", images, sim.passed,
             sim.failed, sim.cycles, sim.ok() ? "bit-exact" : "MISMATCH");
  if (sim.ok()) {
    // Every output word is the bit-exact evaluator's, so the design classifies these images as it does.
    evaluator bit_exact(quantized, eval_mode::bit_exact);
    fmt::print("   the design's accuracy on those {} images: {:.2f} % (bit-exact evaluator: the same words)\n", images,
               100.0 * accuracy_of(bit_exact.run(rows(test.images, 0, images, image_shape))[0], test, images));
  }
  const verilog::simulation_result steady =
      verilog::simulate(emitted.project_dir, verilog::simulator::verilator, {.stall_percent = 0});
  fmt::print("   without stalls: {:.1f} cycles per image in steady state ({:.2f}x the slowest layer's ideal {})\n",
             steady.cycles_per_sample(), steady.cycles_per_sample() / static_cast<double>(ideal), ideal);
  const verilog::synthesis_report synthesis = verilog::synthesize(emitted.project_dir);
  fmt::print("   yosys synth_xilinx: {} cells, {} flip-flops, {} LUTs, {} multipliers (DSP48E1), {} block RAMs\n",
             synthesis.cells, synthesis.flip_flops, synthesis.luts, synthesis.multipliers, synthesis.block_rams);
  return sim.ok() && warnings.empty();
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
  const auto profiled = profile(model, test, shape{pixels});
  fmt::print("2. profiled range_min_max of every linear's weights and every activation\n");

  // 3. formats from the ranges
  auto [quantized, info] = run(profiled, quantize(eight_bit_config(profiled)));
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
  const bool mlp_proven = prove_hardware(quantized, test, shape{pixels}, hardware_images, hardware_dir, "6.");

  // 7. a CNN: LeNet-5 on the same images, the same flow
  const shape image{1, 28, 28};
  const graph lenet = trained_lenet(dir);
  const auto lenet_profiled = profile(lenet, test, image);
  const auto lenet_quantized = lenet_profiled | quantize(eight_bit_config(lenet_profiled));
  evaluator lenet_float(lenet);
  evaluator lenet_exact(lenet_quantized, eval_mode::bit_exact);
  fmt::print("7. LeNet-5 (lenet5.onnx, trained on the same digits), 8-bit formats from its profiled ranges; accuracy "
             "on {} test images:\n",
             test_count);
  fmt::print("   float32               {:6.2f} %\n", 100 * accuracy(lenet_float, test, image));
  fmt::print("   8-bit bit-exact       {:6.2f} %\n", 100 * accuracy(lenet_exact, test, image));
  const std::string lenet_dir = argc > 3 ? argv[3] : argc > 2 ? hardware_dir + "_lenet" : MASE_DEMO_LENET_HARDWARE_DIR;
  const bool lenet_proven = prove_hardware(lenet_quantized, test, image, lenet_hardware_images, lenet_dir, "  ");
  return mlp_proven && lenet_proven ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "end_to_end: " << e.what() << "\n";
  return 1;
}
