// mase info: what an ONNX model holds — its inputs and outputs with shapes, its parameters, and
// the graph report (every node, and node counts per kind and per op).
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/report_tables.hpp>

#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace mase_cli {

namespace {

// The shape of what `node` produces, from add_common_metadata's results.
std::string result_shape(const mase::graph& g, const std::string& node) {
  const auto id = g.find(node);
  if (!id) return "?";
  const auto& results = g[*id].meta.common.results;
  const auto out = results.find("data_out_0");
  return out == results.end() ? "?" : mase::to_string(out->second.shape);
}

}  // namespace

int run_info(const info_options& o) {
  const loaded_model model = load_model(o.model, o.input_shapes, o.raise, {}, false, "");

  // Shapes come from the ops' shape rules; a model whose shapes cannot be inferred still gets
  // its report, with "?" for the shapes.
  mase::graph g = model.graph;
  std::optional<std::string> shape_problem;
  try {
    g = mase::graph(model.graph | mase::init_metadata | mase::add_common_metadata);
  } catch (const mase::error& e) {
    shape_problem = e.what();
  }

  fmt::print("Model: {}\n", model.file.string());
  fmt::print("Opset: {}{}\n", model.opset, model.producer.empty() ? "" : fmt::format(" (producer: {})", model.producer));

  mase::detail::text_table ports({"", "ONNX name", "node", "shape"});
  for (const model_port& p : model.inputs) ports.add_row({"input", p.onnx_name, p.node, result_shape(g, p.node)});
  for (const model_port& p : model.outputs) ports.add_row({"output", p.onnx_name, p.node, result_shape(g, p.node)});
  std::cout << '\n';
  ports.write(std::cout);
  if (shape_problem) fmt::print("(shapes unknown: {})\n", *shape_problem);

  std::size_t parameters = 0;
  const auto named = g.named_parameters();
  for (const auto& entry : named) parameters += entry.second->size();
  fmt::print("\nParameters: {} in {} tensor{} ({:.1f} KiB as float32)\n\n", parameters, named.size(),
             named.size() == 1 ? "" : "s", static_cast<double>(parameters) * 4.0 / 1024.0);

  mase::write_graph_report(std::cout, g);
  if (o.shapes && !shape_problem) {
    std::cout << "\nShapes\n";
    mase::write_node_shape_report(std::cout, g);
  }
  return 0;
}

}  // namespace mase_cli
