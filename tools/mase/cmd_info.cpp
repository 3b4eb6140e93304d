// mase info: what an ONNX model holds — its inputs and outputs with shapes, its parameters, and
// the graph report (every node, and node counts per kind and per op).
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/pass/report_tables.hpp>

#include <algorithm>
#include <iostream>
#include <string>

#include <fmt/format.h>

namespace mase_cli {

namespace {

// The shape of what `node` produces, from add_common_metadata's results.
std::string result_shape(const described_model& d, const std::string& node) {
  const auto id = d.graph.find(node);
  if (!id) return "?";
  const auto& results = d.graph[*id].meta.common.results;
  const auto out = results.find("data_out_0");
  if (out == results.end()) return "?";
  const std::string text = mase::to_string(out->second.shape);
  return d.respell ? d.respell(d.graph[*id], "data_out_0", text) : text;
}

}  // namespace

int run_info(const info_options& o) {
  // Shapes come from the ops' shape rules; a model whose shapes cannot be inferred still gets
  // its report, with "?" for the shapes. Symbolic dimensions need no size to be described.
  const described_model d = describe_model(o.model, o.input_shapes, o.raise);
  const loaded_model& model = d.model;
  const mase::graph& g = d.graph;

  fmt::print("Model: {}\n", model.file.string());
  fmt::print("Opset: {}{}\n", model.opset, model.producer.empty() ? "" : fmt::format(" (producer: {})", model.producer));

  mase::detail::text_table ports({"", "ONNX name", "node", "shape"});
  for (const model_port& p : model.inputs) ports.add_row({"input", p.onnx_name, p.node, result_shape(d, p.node)});
  for (const model_port& p : model.outputs) ports.add_row({"output", p.onnx_name, p.node, result_shape(d, p.node)});
  std::cout << '\n';
  ports.write(std::cout);
  if (d.shape_problem) fmt::print("(shapes unknown: {})\n", *d.shape_problem);
  if (!model.symbolic.empty())
    fmt::print("Symbolic dimensions: {}. Shapes show a dimension that follows one by its name, and ? where a size "
               "depends on one otherwise; --input-shape gives them sizes.\n",
               describe_symbolic(model.symbolic));

  // Constants folded from a symbolic input's shape have sizes that follow it: those are listed
  // apart, by shape, and the count is of the others.
  std::size_t parameters = 0, tensors = 0;
  std::string symbolic_parameters;
  const auto others = d.other ? d.other->named_parameters() : decltype(g.named_parameters()){};
  for (const auto& entry : g.named_parameters()) {
    // (Not a structured binding: clang 14 cannot capture one in the lambda below.)
    const std::string& name = entry.first;
    const mase::tensor* t = entry.second;
    const auto other = std::find_if(others.begin(), others.end(), [&](const auto& e) { return e.first == name; });
    if (d.merge && (other == others.end() || other->second->shape() != t->shape())) {
      const std::string shape = other == others.end() ? std::string("?")
                                                      : d.merge(mase::to_string(t->shape()),
                                                                mase::to_string(other->second->shape()));
      symbolic_parameters += fmt::format("{}{} {}", symbolic_parameters.empty() ? "" : ", ", name, shape);
      continue;
    }
    parameters += t->size();
    ++tensors;
  }
  fmt::print("\nParameters: {} in {} tensor{} ({:.1f} KiB as float32)\n", parameters, tensors, tensors == 1 ? "" : "s",
             static_cast<double>(parameters) * 4.0 / 1024.0);
  if (!symbolic_parameters.empty())
    fmt::print("Constants whose size follows the symbolic dimensions (not counted): {}\n", symbolic_parameters);
  std::cout << '\n';

  mase::write_graph_report(std::cout, g, d.respell);
  if (o.shapes && !d.shape_problem) {
    std::cout << "\nShapes\n";
    mase::write_node_shape_report(std::cout, g, d.respell);
  }
  return 0;
}

}  // namespace mase_cli
