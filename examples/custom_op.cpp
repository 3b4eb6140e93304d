// A user's own op, from outside the library (docs/extending.md): PyTorch's Hardshrink as an op
// of this file, imported from an ONNX node of a custom domain, evaluated in float against
// PyTorch's output, counted by estimate_flops, saved to a checkpoint and loaded back through a
// vocabulary that has it, then quantized, evaluated bit-exact with its own integer rule,
// costed, emitted and simulated in Verilator against the bit-exact evaluator through its own
// component descriptor (its SystemVerilog text and cost); then a user's unary function, which
// mase's own lookup-table component serves from its scalar_function alone, and a user's fully
// connected layer, which mase's linear component serves from its linear_form. Nothing in mase is
// edited or registered globally.
//
//   custom_op [data_dir [output_dir]]   (default: the source tree's examples/data, ./custom_op_out)
//
// examples/data/make_custom_op_model.py wrote the model and PyTorch's output.

#include <mase/io/onnx.hpp>  // not in mase.hpp: it links the ONNX protobuf library
#include <mase/io/onnx/importer.hpp>  // the API of a converter
#include <mase/mase.hpp>
#include <mase/verilog.hpp>
#include <mase/verilog/cost.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>

#ifndef MASE_DEMO_DATA
#define MASE_DEMO_DATA "examples/data"
#endif

// The component, written by the user: one comparison per lane, valid/ready straight through.
constexpr std::string_view user_hard_shrink_sv = R"sv(// hard_shrink: x where |x| > THRESHOLD (in input codes), else 0, in the input's format.
module user_hard_shrink #(
    parameter int DATA_IN_0_PRECISION_0 = 8,
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 1,
    parameter int THRESHOLD = 0
) (
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0] data_in_0,
    input  logic                                                         data_in_0_valid,
    output logic                                                         data_in_0_ready,
    output logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0] data_out_0,
    output logic                                                         data_out_0_valid,
    input  logic                                                         data_out_0_ready
);
  localparam int W = DATA_IN_0_PRECISION_0;
  for (genvar lane = 0; lane < DATA_IN_0_PARALLELISM_DIM_0; lane++) begin : g_lane
    logic signed [W-1:0] x;
    assign x = data_in_0[lane*W+:W];
    assign data_out_0[lane*W+:W] = (32'(x) > THRESHOLD || 32'(x) < -THRESHOLD) ? x : '0;
  end
  assign data_out_0_valid = data_in_0_valid;
  assign data_in_0_ready  = data_out_0_ready;
endmodule
)sv";

// Its cost for estimate_hardware_cost and the search (verilog/cost.hpp): a beat a cycle; per
// lane two comparisons of the input's width and a select of the result's.
void hard_shrink_cost(const mase::verilog::cost_context& ctx, mase::verilog::component_cost& c) {
  c.cycles_per_sample = ctx.stream_cycles;
  c.adder_bits = 2 * ctx.in_lanes * ctx.x.width;
  c.select_bits = ctx.out_lanes * ctx.out.width;
}

// The component's descriptor (verilog/component.hpp): everything the hardware flow needs of it.
// The op's hardware facet points at it, so add_hardware_metadata, the emitter and the cost model
// find it without anything registered.
inline constexpr mase::verilog::component user_hard_shrink{
    .module = "user_hard_shrink",
    .source = user_hard_shrink_sv,
    .timing = mase::verilog::component_timing::beat,  // each output beat follows from its input beat
    .cost = hard_shrink_cost};

// The op: the contract every op has, and the facets this one brings as members.
struct hard_shrink {
  double lambda = 0.5;

  static constexpr std::string_view name = "hard_shrink";
  using kind = mase::kind::module_related_func;
  static constexpr mase::op_category category = mase::op_category::elementwise;
  static constexpr mase::quantizable quantization{};  // quantize gives it data_in and data_out formats
  // Its results are its inputs or 0: its input's fixed-point format holds them exactly.
  static constexpr mase::result_format_rule result_format = mase::result_format_rule::same_as_input;
  static constexpr mase::hardware_mapping hardware{.module = "user_hard_shrink", .component = &user_hard_shrink};
  static constexpr mase::arity inputs{1, 1};
  static constexpr auto attributes() { return mase::attribute_list{mase::attribute("lambda", &hard_shrink::lambda)}; }
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

  // For estimate_flops: a comparison and a select per element; the gradient is a select. (An
  // element-wise op without this member counts one operation per element each way.)
  constexpr mase::op_work work(std::span<const mase::shape> in, std::span<const mase::shape>) const {
    return {2 * in[0].numel(), in[0].numel()};
  }

  // In fixed point |x| > lambda is |code| > lambda·2^frac, which for an integer code is
  // |code| > floor(lambda·2^frac).
  static std::int64_t threshold_code(double lambda, const mase::fixed_fmt& f) {
    return static_cast<std::int64_t>(std::floor(std::ldexp(lambda, f.frac)));
  }

  // The integer rule (bit-exact evaluator and testbench): on codes, in the input's format.
  std::optional<mase::eval::bit_exact_kernel> bit_exact(const mase::node& n) const {
    const std::optional<mase::fixed_fmt> in = mase::eval::fixed_format_of(n, "data_in_0");
    if (!in || in != mase::eval::fixed_format_of(n, "data_out_0")) return std::nullopt;  // the component keeps it
    const std::int64_t t = threshold_code(lambda, *in);
    return mase::eval::bit_exact_kernel{
        fmt::format("hard_shrink: |code| > {}", t), [t, frac = in->frac](const mase::eval::kernel_args& args) {
          const mase::tensor& x = args.input(0);
          mase::tensor& y = args.output();
          for (std::size_t i = 0; i < x.size(); ++i) {
            const std::int64_t c = mase::eval::raw_of(x.data()[i], frac);
            y.data()[i] = c > t || c < -t ? x.data()[i] : 0.0f;
          }
        }};
  }

  // The component's own parameter, beside the streams' formats and lanes mase sets.
  void hardware_parameters(const mase::node& n, mase::hardware_meta& h) const {
    h.verilog_param.insert_or_assign("THRESHOLD", threshold_code(lambda, *mase::eval::fixed_format_of(n, "data_in_0")));
  }
};


// A user's unary function that mase's own lookup-table component (mase_lut) serves: its exact
// value (scalar_function) is all it needs for hardware. The bit-exact evaluator tabulates it
// over every input code, as it does mase's activations, and mase_lut's descriptor writes that
// table; it needs no RTL, integer rule or cost of its own.
struct soft_clip {
  double scale = 1.0;

  static constexpr std::string_view name = "soft_clip";
  using kind = mase::kind::module_related_func;
  static constexpr mase::op_category category = mase::op_category::elementwise;
  static constexpr mase::quantizable quantization{};
  static constexpr mase::hardware_mapping hardware{"mase_lut"};
  static constexpr mase::arity inputs{1, 1};
  static constexpr auto attributes() { return mase::attribute_list{mase::attribute("scale", &soft_clip::scale)}; }
  constexpr mase::shape_result infer_shapes(std::span<const mase::shape> in) const { return mase::shape_ok(in[0]); }
  constexpr bool operator==(const soft_clip&) const = default;

  // scale · x / (1 + |x|): softsign, stretched.
  double scalar_function(double x) const { return scale * x / (1.0 + std::fabs(x)); }
  void evaluate(const mase::eval::kernel_args& args) const {
    const mase::tensor& x = args.input(0);
    mase::tensor& y = args.output();
    for (std::size_t i = 0; i < x.size(); ++i) y.data()[i] = static_cast<float>(scalar_function(x.data()[i]));
  }
};

// A user's fully connected layer (one of the user's own framework, say): it computes what
// op::linear computes and says so with linear_form, so the bit-exact evaluator lowers it as a
// linear and mase's own mase_linear serves it (weight and bias ROMs, tiles, cost); it brings its
// float kernel and nothing for hardware.
struct user_dense {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;

  static constexpr std::string_view name = "user_dense";
  using kind = mase::kind::module_related_func;
  static constexpr mase::op_category category = mase::op_category::dot_product;
  static constexpr mase::quantizable quantization{.weight = mase::operand_use::required,
                                                  .bias = mase::operand_use::required_with_parameter};
  static constexpr mase::hardware_mapping hardware{"mase_linear"};
  static constexpr mase::arity inputs{1, 1};
  static constexpr auto attributes() {
    return mase::attribute_list{mase::attribute("in_features", &user_dense::in_features),
                                mase::attribute("out_features", &user_dense::out_features)};
  }
  constexpr mase::parameter_list parameters() const {
    return {{"weight", {out_features, in_features}}, {"bias", {out_features}}};
  }
  constexpr mase::shape_result infer_shapes(std::span<const mase::shape> in) const {
    if (in[0].size() != 2 || in[0][1] != in_features) return mase::shape_error("user_dense: the input must be [N, in_features]");
    return mase::shape_ok(mase::shape{in[0][0], out_features});
  }
  constexpr bool operator==(const user_dense&) const = default;

  mase::op::linear linear_form() const { return {.in_features = in_features, .out_features = out_features, .bias = true}; }
  // y[r, o] = bias[o] + sum_i x[r, i] * weight[o, i]
  void evaluate(const mase::eval::kernel_args& args) const {
    const mase::tensor& x = args.input(0);
    const mase::tensor& w = args.parameter("weight");
    const mase::tensor& b = args.parameter("bias");
    mase::tensor& y = args.output();
    const auto in = static_cast<std::size_t>(in_features), out = static_cast<std::size_t>(out_features);
    for (std::size_t r = 0; r < x.size() / in; ++r)
      for (std::size_t o = 0; o < out; ++o) {
        double sum = b.data()[o];
        for (std::size_t i = 0; i < in; ++i) sum += static_cast<double>(x.data()[r * in + i]) * w.data()[o * in + i];
        y.data()[r * out + o] = static_cast<float>(sum);
      }
  }
};

// x [8, 4] -> linear 4 -> 4 -> soft_clip -> output, with fixed weights.
mase::graph soft_clip_network() {
  mase::graph g;
  const mase::node_id x = g.add("x", mase::op::placeholder{.shape = {8, 4}});
  const mase::node_id fc = g.add("fc", mase::op::linear{.in_features = 4, .out_features = 4, .bias = true}, {x});
  mase::tensor weight({4, 4}), bias({4});
  for (std::size_t i = 0; i < weight.size(); ++i) weight.data()[i] = 0.25f * static_cast<float>(static_cast<int>(i % 7) - 3);
  for (std::size_t i = 0; i < bias.size(); ++i) bias.data()[i] = 0.125f * static_cast<float>(i);
  g.set_parameter(fc, "weight", weight);
  g.set_parameter(fc, "bias", bias);
  const mase::node_id clip = g.add("clip", soft_clip{.scale = 1.5}, {fc});
  g.add("output", mase::op::output{}, {clip});
  return g;
}

// x [8, 6] -> user_dense 6 -> 4 -> relu -> output, with fixed weights.
mase::graph user_dense_network() {
  mase::graph g;
  const mase::node_id x = g.add("x", mase::op::placeholder{.shape = {8, 6}});
  const mase::node_id dense = g.add("dense", user_dense{.in_features = 6, .out_features = 4}, {x});
  mase::tensor weight({4, 6}), bias({4});
  for (std::size_t i = 0; i < weight.size(); ++i) weight.data()[i] = 0.125f * static_cast<float>(static_cast<int>(i % 11) - 5);
  for (std::size_t i = 0; i < bias.size(); ++i) bias.data()[i] = 0.25f * static_cast<float>(i) - 0.5f;
  g.set_parameter(dense, "weight", weight);
  g.set_parameter(dense, "bias", bias);
  const mase::node_id relu = g.add("relu", mase::op::relu{}, {dense});
  g.add("output", mase::op::output{}, {relu});
  return g;
}

// A design in which mase's own component serves a user's op: the op's bit-exact rule, the
// component the op got and its cost, and the design emitted and simulated in Verilator.
struct served {
  std::string rule;
  std::string module;
  mase::verilog::hardware_cost cost;
  std::size_t component = 0;  // the op's entry in cost.components
  mase::verilog::simulation_result sim;
  std::string simulated;      // what emitting and simulating did, in words
};
served serve(const mase::graph& design, const std::string& node, const std::filesystem::path& dir) {
  served s;
  const mase::evaluator exact(design, mase::eval_mode::bit_exact);
  s.rule = exact.bit_exact_description(design.id(node));
  s.module = design.at(node).meta.hardware.module.value_or("no component");
  s.cost = mase::verilog::estimate_hardware_cost(design);
  while (s.component < s.cost.components.size() && s.cost.components[s.component].node != node) ++s.component;
  if (s.component == s.cost.components.size()) throw mase::error("custom_op: node " + node + " has no cost");
  const mase::verilog::emit_info emitted = mase::verilog::emit_verilog_project(design, {.project_dir = dir});
  s.sim = mase::verilog::simulate(emitted.project_dir, mase::verilog::simulator::verilator);
  s.simulated = fmt::format("emitted {}, simulated in Verilator against the bit-exact evaluator: {} words passed, {} failed",
                            emitted.project_dir.string(), s.sim.passed, s.sim.failed);
  return s;
}

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
              << "user's vocabulary: " << (reloaded == g ? "identical" : "DIFFERENT") << "\n\n";

    // Fixed point everywhere: hard_shrink takes data_in from the config and keeps it for its result.
    const mase::format q = mase::format(mase::fixed_fmt{.width = 10, .frac = 6});
    auto hardware = model.graph | mase::init_metadata | mase::add_common_metadata |
                    mase::quantize({.by = mase::quantize_by::type,
                                    .entries = {{"linear", mase::operand_formats{.data_in = q, .weight = q, .bias = q, .data_out = q}},
                                                {"hard_shrink", mase::operand_formats{.data_in = q}}}}) |
                    mase::add_hardware_metadata;
    mase::evaluator exact(hardware, mase::eval_mode::bit_exact);
    const bool shrink_exact = exact.runs_bit_exact(hardware.id("shrink"));
    std::cout << "== 5. Quantized; the bit-exact evaluator runs shrink with the user's integer rule: "
              << (shrink_exact ? "yes" : "NO") << "\n";
    const mase::verilog::hardware_cost cost = mase::verilog::estimate_hardware_cost(hardware);
    for (const mase::verilog::component_cost& c : cost.components)
      if (c.node == "shrink")
        std::cout << fmt::format("   its cost, from its descriptor: {} cycles per sample, {} adder bits, {} select bits "
                                 "({}); the design: {:.0f} LUTs, {} cycles per sample\n",
                                 c.cycles_per_sample, c.adder_bits, c.select_bits, c.modelled ? "modelled" : "NOT MODELLED",
                                 cost.resources.luts, cost.cycles_per_sample);
    const mase::verilog::emit_info emitted =
        mase::verilog::emit_verilog_project(hardware, {.project_dir = out / "custom_op_rtl"});
    const mase::verilog::simulation_result sim =
        mase::verilog::simulate(emitted.project_dir, mase::verilog::simulator::verilator);
    std::cout << fmt::format("== 6. Emitted {} with the user's component, simulated in Verilator against the "
                             "bit-exact evaluator: {} words passed, {} failed\n",
                             emitted.project_dir.string(), sim.passed, sim.failed);

    // A user's unary function served by mase's lookup-table component.
    const served clip = serve(soft_clip_network() | mase::init_metadata | mase::add_common_metadata |
                                  mase::quantize({.by = mase::quantize_by::type,
                                                  .entries = {{"linear", mase::operand_formats{.data_in = q, .weight = q, .bias = q, .data_out = q}},
                                                              {"soft_clip", mase::operand_formats{.data_in = q, .data_out = q}}}}) |
                                  mase::add_hardware_metadata,
                              "clip", out / "soft_clip_rtl");
    const mase::verilog::component_cost& clip_cost = clip.cost.components[clip.component];
    std::cout << fmt::format("== 7. soft_clip, a user's unary function, on {}: bit-exact rule \"{}\"; its cost "
                             "{} cycles per sample, {} ROM bits ({}); {}\n",
                             clip.module, clip.rule, clip_cost.cycles_per_sample,
                             clip_cost.memories.empty() ? 0 : clip_cost.memories[0].width * clip_cost.memories[0].depth,
                             clip_cost.modelled ? "modelled" : "NOT MODELLED", clip.simulated);
    const bool clip_ok = clip.rule.find("lookup table") != std::string::npos && clip_cost.modelled && clip.sim.ok();

    // A user's fully connected layer served by mase's linear component.
    const served dense = serve(user_dense_network() | mase::init_metadata | mase::add_common_metadata |
                                   mase::quantize({.by = mase::quantize_by::type,
                                                   .entries = {{"user_dense", mase::operand_formats{.data_in = q, .weight = q, .bias = q, .data_out = q}},
                                                               {"relu", mase::operand_formats{.data_in = q, .data_out = q}}}}) |
                                   mase::add_hardware_metadata({.max_parallelism = {2, 2, 2, 2}}),
                               "dense", out / "user_dense_rtl");
    const mase::verilog::component_cost& dense_cost = dense.cost.components[dense.component];
    std::cout << fmt::format("== 8. user_dense, a user's fully connected layer, on {}: bit-exact rule \"{}\"; its cost "
                             "{} cycles per sample, {} multipliers ({}); {}\n",
                             dense.module, dense.rule, dense_cost.cycles_per_sample,
                             dense_cost.multipliers.empty() ? 0 : dense_cost.multipliers[0].count,
                             dense_cost.modelled ? "modelled" : "NOT MODELLED", dense.simulated);
    const bool dense_ok = dense.rule.find("accumulator") != std::string::npos && dense_cost.modelled && dense.sim.ok();
    return matches && reloaded == g && shrink_exact && sim.ok() && clip_ok && dense_ok ? 0 : 1;
  } catch (const mase::error& e) {
    std::cerr << "custom_op: " << e.what() << "\n";
    return 1;
  }
}
