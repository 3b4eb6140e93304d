// A user's own op, from outside the library (docs/extending.md): PyTorch's Hardshrink as an op
// of this file, imported from an ONNX node of a custom domain, evaluated in float against
// PyTorch's output, counted by estimate_flops, saved to a checkpoint and loaded back through a
// vocabulary that has it. Nothing in mase is edited or registered globally.
//
//   custom_op [data_dir [output_dir]]   (default: the source tree's examples/data, ./custom_op_out)
//
// examples/data/make_custom_op_model.py wrote the model and PyTorch's output.

#include <mase/io/onnx.hpp>  // not in mase.hpp: it links the ONNX protobuf library
#include <mase/mase.hpp>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#ifndef MASE_DEMO_DATA
#define MASE_DEMO_DATA "examples/data"
#endif

// The op: the contract every op has, and the facets this one brings as members.
struct hard_shrink {
  double lambda = 0.5;

  static constexpr std::string_view name = "hard_shrink";
  using kind = mase::kind::module_related_func;
  static constexpr mase::arity inputs{1, 1};
  static constexpr auto attributes() { return std::tuple{mase::attribute("lambda", &hard_shrink::lambda)}; }
  constexpr mase::shape_result infer_shapes(std::span<const mase::shape> in) const { return mase::shape_ok(in[0]); }
  constexpr bool operator==(const hard_shrink&) const = default;

  // The float kernel: x where |x| > lambda, else 0.
  void evaluate(const mase::eval::kernel_args& args) const {
    const mase::tensor& x = args.input(0);
    mase::tensor& y = args.output();
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float v = x.data()[i];
      y.data()[i] = std::fabs(v) > lambda ? v : 0.0f;
    }
  }

  // For estimate_flops: one comparison per element, as mase counts its activations.
  mase::op_cost flops(std::span<const mase::shape> in, std::span<const mase::shape> results) const {
    return {.parameters = 0,
            .computations = in[0].numel(),
            .backward_computations = in[0].numel(),
            .input_buffer_size = in[0].numel(),
            .output_buffer_size = results[0].numel()};
  }
};

// The ONNX converter for com.example.HardShrink (attribute "lambd", as torch spells it).
void convert_hard_shrink(mase::onnx::importer& c) {
  c.set_output(0, c.emit(hard_shrink{.lambda = c.float_attribute("lambd", 0.5)}, {c.input(0)}));
}

int main(int argc, char** argv) {
  try {
    const std::filesystem::path data = argc > 1 ? argv[1] : MASE_DEMO_DATA;
    const std::filesystem::path out = argc > 2 ? argv[2] : "custom_op_out";
    std::filesystem::create_directories(out);

    mase::onnx::import_options options;
    options.converters["com.example.HardShrink"] = convert_hard_shrink;
    mase::onnx::imported_model model = mase::onnx::load_model(data / "custom_op.onnx", options);
    const mase::graph g = model.graph | mase::init_metadata | mase::add_common_metadata;
    std::cout << "== 1. Imported with the user's converter\n" << g << "\n";

    const mase::tensor x = mase::npy::load(data / "custom_op_x.npy");
    const mase::tensor torch_y = mase::npy::load(data / "custom_op_y.npy");
    mase::evaluator ev(g);
    const mase::tensor& y = ev.run({{model.inputs[0].node, x}})[0];
    double largest = 0;
    for (std::size_t i = 0; i < y.size(); ++i)
      largest = std::max(largest, std::fabs(static_cast<double>(y.data()[i]) - torch_y.data()[i]));
    const bool matches = y.shape() == torch_y.shape() && largest <= 1e-5;
    std::cout << fmt::format("== 2. Evaluated with the user's kernel: largest difference from PyTorch {:.3g} -> {}\n\n",
                             largest, matches ? "matches PyTorch" : "DIFFERS FROM PYTORCH");

    const mase::flop_estimate flops = mase::estimate_flops(g);
    std::cout << "== 3. estimate_flops, the user's rule for the user's op\n";
    for (const auto& [node, cost] : flops.nodes)
      if (cost.computations > 0) std::cout << fmt::format("  {:<8} {:>6} computations\n", node, cost.computations);
    std::cout << fmt::format("  {:<8} {:>6} computations\n\n", "total", flops.total.computations);

    mase::vocabulary ops = mase::builtin_vocabulary();
    ops.add<hard_shrink>();
    mase::export_checkpoint(g, out / "custom_op");
    const mase::graph reloaded = mase::from_checkpoint(out / "custom_op", {.ops = &ops});
    std::cout << "== 4. Saved " << (out / "custom_op").string() << ".{json,safetensors} and reloaded it with the "
              << "user's vocabulary: " << (reloaded == g ? "identical" : "DIFFERENT") << "\n";
    return matches && reloaded == g ? 0 : 1;
  } catch (const mase::error& e) {
    std::cerr << "custom_op: " << e.what() << "\n";
    return 1;
  }
}
