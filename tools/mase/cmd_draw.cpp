// mase draw: the model's graph as Graphviz DOT text or SVG.
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/io/draw.hpp>

#include <fmt/format.h>

namespace mase_cli {

int run_draw(const draw_options& o) {
  refuse_outputs_over_inputs("draw", {o.output}, {o.model}, "output file (-o)");
  // With shapes when they can be inferred (each box then shows its result's shape, symbolic
  // dimensions by name).
  const described_model d = describe_model(o.model, o.input_shapes, o.raise);
  if (d.shape_problem) fmt::print(stderr, "mase: warning: drawing without shapes: {}\n", *d.shape_problem);
  mase::draw(d.graph, o.output, d.respell);
  fmt::print("wrote {}\n", o.output.string());
  if (!d.model.symbolic.empty() && !d.shape_problem)
    fmt::print("symbolic dimensions: {}, drawn by name\n", describe_symbolic(d.model.symbolic));
  return 0;
}

}  // namespace mase_cli
