// mase quantize: quantizes a model with a MASE TOML config and saves a checkpoint.
#include "cli.hpp"

#include <mase/io/checkpoint.hpp>

#include <iostream>
#include <optional>

#include <fmt/format.h>

namespace mase_cli {

int run_quantize(const quantize_options& o) {
  // A stem names the two files; a folder ("out/") or nothing would give them hidden names (".json").
  const std::string stem_name = o.output.filename().string();
  if (stem_name.empty() || stem_name == "." || stem_name == "..")
    throw usage_error(fmt::format("-o takes a checkpoint stem such as out/model (mase writes out/model.json and "
                                  "out/model.safetensors), not \"{}\"",
                                  o.output.string()));
  std::vector<fs::path> read_files = assigned_files(o.inputs, "--input");
  read_files.push_back(o.model);
  read_files.push_back(o.config);
  const fs::path json = fs::path(o.output) += ".json", weights = fs::path(o.output) += ".safetensors";
  refuse_outputs_over_inputs("quantize", {json, weights}, read_files, "checkpoint stem (-o)");
  mase::check_checkpoint_stem(o.output);  // before the work, not only when saving
  const loaded_model model = load_model(o.model, o.input_shapes, o.raise, o.inputs);
  const input_batches batches(model, o.inputs);
  if (batches.size() > 1) throw usage_error("mase quantize takes each --input once (one dummy run)");
  std::optional<mase::ordered_map<mase::tensor>> dummy;
  if (!batches.empty()) dummy = batches.load(0);

  const quantized_model q = quantize_graph(model.graph, o.config, dummy ? &*dummy : nullptr);
  std::cout << q.summary;
  fmt::print("\n{} node{} quantized, {} bypassed\n", q.quantized_nodes, q.quantized_nodes == 1 ? "" : "s",
             q.bypassed_nodes);
  mase::export_checkpoint(q.quantized, o.output);
  fmt::print("wrote {}.json and {}.safetensors\n", o.output.string(), o.output.string());
  return 0;
}

}  // namespace mase_cli
