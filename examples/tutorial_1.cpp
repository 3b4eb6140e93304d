// MASE's tutorial 1 in C++: build a model, initialise its metadata, count and remove dropout with
// passes written in a few lines, report, draw, export a checkpoint, reload it and compare.
//
//   tutorial_1 [output folder]      (default: ./tutorial_1_out)

#include <mase/io/checkpoint.hpp>
#include <mase/io/draw.hpp>
#include <mase/mase.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>

using namespace mase;

// The JSC-style toy network of MASE's tutorials, with dropout added so there is some to remove.
graph jsc_with_dropout() {
  builder b(/*seed=*/1);
  auto x = b.input("x", {8, 16});
  auto h = b.add("bn", op::batch_norm1d{.num_features = 16}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("fc1", op::linear{.in_features = 16, .out_features = 32}, h);
  h = b.add("dropout1", op::dropout{.p = 0.2}, h);
  h = b.add("relu2", op::relu{}, h);
  h = b.add("fc2", op::linear{.in_features = 32, .out_features = 5}, h);
  h = b.add("dropout2", op::dropout{.p = 0.1}, h);
  return b.output(h);
}

// An analysis pass: reads the graph, returns what it found.
struct dropout_count {
  std::size_t count = 0;
};
const auto count_dropout = make_pass([](const graph& g) {
  return dropout_count{static_cast<std::size_t>(
      std::count_if(g.order().begin(), g.order().end(), [&](node_id id) { return g[id].is<op::dropout>(); }))};
});

// A transform pass: rewires each dropout's readers to its input, then erases it.
const auto remove_dropout_by_hand = make_pass([](graph& g) {
  for (node_id id : std::vector<node_id>(g.order().begin(), g.order().end()))
    if (g[id].is<op::dropout>()) {
      g.replace_all_uses_with(id, g[id].inputs[0]);
      g.erase(id);
    }
});

int main(int argc, char** argv) {
  try {
    const std::filesystem::path out = argc > 1 ? argv[1] : "tutorial_1_out";
    std::filesystem::create_directories(out);

    std::cout << "== 1. The model as a graph\n" << jsc_with_dropout() << "\n";

    // 2. Metadata, dropout counted, removed, counted again; the graph's type records that
    //    metadata exists and has been annotated.
    auto [g, info] = run(jsc_with_dropout(), init_metadata | add_common_metadata | count_dropout |
                                                 remove_dropout_by_hand | count_dropout | verify);
    std::cout << "== 2. Dropout nodes before: " << std::get<2>(info).count
              << ", after: " << std::get<4>(info).count << "\n\n";

    std::cout << "== 3. Reports\n";
    (void)(g | report_node_type | report_node_shape | report_metadata(metadata_sections::common));

    std::cout << "\n== 4. One node with all of its metadata\n" << to_string(g, g.id("fc1")) << "\n";

    draw(g, out / "jsc.dot");
    std::cout << "== 5. Drew " << (out / "jsc.dot").string();
    try {
      draw(g, out / "jsc.svg");
      std::cout << " and " << (out / "jsc.svg").string();
    } catch (const error& e) {
      std::cout << " (no SVG: " << e.what() << ")";
    }
    std::cout << "\n";

    export_checkpoint(g, out / "jsc");
    const graph reloaded = from_checkpoint(out / "jsc");
    std::cout << "== 6. Exported " << (out / "jsc").string() << ".{json,safetensors} and reloaded it: "
              << (reloaded == g ? "identical (every node, edge, parameter bit and metadata field)" : "DIFFERENT")
              << "\n";
    return reloaded == g ? 0 : 1;
  } catch (const error& e) {
    std::cerr << "tutorial_1: " << e.what() << "\n";
    return 1;
  }
}
