// MASE's tutorial 1 in C++, on bert-tiny: import a model exported with its dropouts, initialise
// its metadata with a dummy input of token ids, draw it, count and remove the dropouts with
// passes written in a few lines, count again, export a checkpoint, reload it and compare.
//
//   tutorial_1 [output folder [model.onnx]]
//
// The default model is tests/fixtures/bert_tiny/bert_tiny_dropout_opset17.onnx: BERT's layout at
// bert-tiny's sizes, exported from PyTorch in training mode so that its Dropout nodes stay in
// the file (an inference export drops them); each imports as a `dropout` node.

#include <mase/io/checkpoint.hpp>
#include <mase/io/draw.hpp>
#include <mase/io/onnx.hpp>  // not in mase.hpp: it links the ONNX protobuf library
#include <mase/mase.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>

#ifndef MASE_TUTORIAL_MODEL
#define MASE_TUTORIAL_MODEL "bert_tiny_dropout_opset17.onnx"
#endif

using namespace mase;

constexpr std::int64_t sequence_length = 32;

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

// MASE's dummy input: one sequence of token ids, every position attended to.
ordered_map<tensor> dummy_input() {
  tensor ids(shape{1, sequence_length}), mask(shape{1, sequence_length});
  for (std::int64_t t = 0; t < sequence_length; ++t) {
    ids.values()[static_cast<std::size_t>(t)] = static_cast<float>(101 + 7 * t);
    mask.values()[static_cast<std::size_t>(t)] = 1.0f;
  }
  return {{"input_ids", std::move(ids)}, {"attention_mask", std::move(mask)}};
}

int main(int argc, char** argv) {
  try {
    const std::filesystem::path out = argc > 1 ? argv[1] : "tutorial_1_out";
    const std::filesystem::path model_file = argc > 2 ? argv[2] : MASE_TUTORIAL_MODEL;
    std::filesystem::create_directories(out);

    // 1. Import: the batch is symbolic in the file; the dummy input's fixes it.
    mase::onnx::import_options options;
    for (const auto& [name, value] : dummy_input()) options.data_shapes.insert_or_assign(name, value.shape());
    const graph bert = mase::onnx::load_model(model_file, options).graph;
    std::cout << "== 1. Imported " << model_file.filename().string() << ": " << bert.size() << " nodes\n";

    // 2. Metadata from a run on the dummy input; the graph's type records that metadata exists
    //    and has been annotated, so passes that need it compile only after it.
    const auto annotated = bert | init_metadata | add_common_metadata(dummy_input());
    const auto first_dropout = *std::find_if(annotated.order().begin(), annotated.order().end(),
                                             [&](node_id id) { return annotated[id].is<op::dropout>(); });
    std::cout << "== 2. Metadata of the first dropout\n" << to_string(annotated, first_dropout) << "\n";

    draw(annotated, out / "bert.dot");
    std::cout << "== 3. Drew " << (out / "bert.dot").string();
    try {
      draw(annotated, out / "bert.svg");
      std::cout << " and " << (out / "bert.svg").string();
    } catch (const error& e) {
      std::cout << " (no SVG: " << e.what() << ")";
    }
    std::cout << "\n";

    // 4. The exercise: erasing a dropout that still has readers fails, naming them.
    graph attempt = annotated;
    try {
      attempt.erase(first_dropout);
    } catch (const error& e) {
      std::cout << "== 4. Erasing a dropout before rewiring its readers: " << e.what() << "\n";
    }

    // 5. Dropout counted, removed, counted again, and the graph verified.
    auto [g, info] = run(annotated, count_dropout | remove_dropout_by_hand | count_dropout | verify);
    std::cout << "== 5. Dropout nodes before: " << std::get<0>(info).count << ", after: " << std::get<2>(info).count
              << "\n";

    export_checkpoint(g, out / "bert_tiny");
    const graph reloaded = from_checkpoint(out / "bert_tiny");
    std::cout << "== 6. Exported " << (out / "bert_tiny").string() << ".{json,safetensors} and reloaded it: "
              << (reloaded == g ? "identical (every node, edge, parameter bit and metadata field)" : "DIFFERENT")
              << "\n";
    return reloaded == g ? 0 : 1;
  } catch (const error& e) {
    std::cerr << "tutorial_1: " << e.what() << "\n";
    return 1;
  }
}
