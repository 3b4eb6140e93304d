// mase draw: the model's graph as Graphviz DOT text or SVG.
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/io/draw.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>

#include <fmt/format.h>

namespace mase_cli {

int run_draw(const draw_options& o) {
  refuse_outputs_over_inputs("draw", {o.output}, {o.model}, "output file (-o)");
  const loaded_model model = load_model(o.model, o.input_shapes, o.raise, {}, false, "");
  // With shapes when they can be inferred (each box then shows its result's shape).
  mase::graph g = model.graph;
  try {
    g = mase::graph(model.graph | mase::init_metadata | mase::add_common_metadata);
  } catch (const mase::error& e) {
    fmt::print(stderr, "mase: warning: drawing without shapes: {}\n", e.what());
  }
  mase::draw(g, o.output);
  fmt::print("wrote {}\n", o.output.string());
  return 0;
}

}  // namespace mase_cli
