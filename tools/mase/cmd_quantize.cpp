// mase quantize: quantizes a model with a MASE TOML config and saves a checkpoint.
#include "cli.hpp"

#include <mase/io/checkpoint.hpp>

#include <iostream>
#include <optional>

#include <fmt/format.h>

namespace mase_cli {

int run_quantize(const quantize_options& o) {
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
