// mase run: evaluates a model on input files and writes one file per graph output.
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/eval/evaluator.hpp>

#include <span>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace mase_cli {

namespace {

mase::eval_mode mode_from(const std::string& text) {
  if (text == "float") return mase::eval_mode::float32;
  if (text == "fake-quant") return mase::eval_mode::fake_quant;
  if (text == "bit-exact") return mase::eval_mode::bit_exact;
  throw usage_error(fmt::format("--mode must be float, fake-quant or bit-exact, not \"{}\"", text));
}

}  // namespace

int run_run(const run_options& o) {
  // A config without --mode runs MASE's own software semantics (fake-quant), and says so: the
  // float run would ignore the config.
  if (o.config && o.mode.empty())
    fmt::print(stderr, "mase run: --config without --mode: evaluating fake-quant (MASE's software semantics); give "
                       "--mode bit-exact for the fixed-point hardware's arithmetic, or --mode float to ignore the "
                       "config\n");
  const mase::eval_mode mode = mode_from(o.mode.empty() ? (o.config ? "fake-quant" : "float") : o.mode);
  if (mode != mase::eval_mode::float32 && !o.config)
    throw usage_error(fmt::format("--mode {} needs --config Q.toml: without a quantization config every format is "
                                  "float32",
                                  o.mode));
  if (o.format != "pb" && o.format != "npy")
    throw usage_error(fmt::format("--format must be pb or npy, not \"{}\"", o.format));

  const loaded_model model = load_model(o.model, o.input_shapes, o.raise, o.inputs);
  const input_batches batches(model, o.inputs);
  if (batches.empty()) throw usage_error("mase run needs the model's inputs: --input NAME=FILE");

  // Distinct output names can map to one file name (file_name_for); refuse rather than overwrite.
  for (std::size_t i = 0; i < model.outputs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (file_name_for(model.outputs[i].onnx_name) == file_name_for(model.outputs[j].onnx_name))
        throw mase::error(fmt::format("the outputs \"{}\" and \"{}\" would both be written to {}.{}",
                                      model.outputs[j].onnx_name, model.outputs[i].onnx_name,
                                      file_name_for(model.outputs[i].onnx_name), o.format));

  mase::graph g = model.graph;
  if (o.config) g = quantize_graph(model.graph, *o.config, nullptr).quantized;

  std::vector<fs::path> outputs;
  for (std::size_t k = 0; k < batches.size(); ++k)
    for (const model_port& port : model.outputs)
      outputs.push_back(tensor_file_path(o.output_dir, batches.size() == 1 ? port.onnx_name
                                                                            : fmt::format("{}_{}", port.onnx_name, k),
                                         o.format));
  // The files mase was given to read: an output that would land on one of them is refused before
  // anything runs (-o . next to x.npy for an output named x would replace the input otherwise).
  std::vector<fs::path> read_files = assigned_files(o.inputs, "--input");
  read_files.push_back(o.model);
  if (o.config) read_files.push_back(*o.config);
  refuse_outputs_over_inputs("run", outputs, read_files, "output folder (-o)");

  std::error_code ec;
  fs::create_directories(o.output_dir, ec);
  if (ec) throw mase::error(fmt::format("cannot create the output folder {}: {}", o.output_dir.string(), ec.message()));

  mase::evaluator ev(g, mode);
  ev.set_threads(o.jobs);
  progress_bar bar("running", batches.size() > 1 ? batches.size() : 0);
  for (std::size_t k = 0; k < batches.size(); ++k) {
    const mase::ordered_map<mase::tensor> inputs = batches.load(k);
    std::span<const mase::tensor> results;
    try {
      results = ev.run(inputs);
    } catch (const mase::error& e) {
      throw mase::error(fmt::format("running {} on {}: {}", o.model.string(), batches.describe(k), e.what()));
    }
    if (results.size() != model.outputs.size())
      throw mase::error(fmt::format("{}: the graph gave {} results for the model's {} outputs", o.model.string(),
                                    results.size(), model.outputs.size()));
    for (std::size_t i = 0; i < results.size(); ++i) {
      // One run: "y.pb"; several: "y_0.pb", "y_1.pb", … in the order of the --input options.
      const std::string& name = model.outputs[i].onnx_name;
      const std::string stem = batches.size() == 1 ? name : fmt::format("{}_{}", name, k);
      const fs::path file = write_tensor_file(o.output_dir, stem, name, results[i], o.format);
      bar.clear();
      fmt::print("wrote {} {}\n", file.string(), mase::to_string(results[i].shape()));
    }
    bar.update(k + 1);
  }
  return 0;
}

}  // namespace mase_cli
