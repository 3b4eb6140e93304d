// The importer's compiled mode, as a user's project links it (mase::onnx_compiled): this unit
// parses the importer's declarations only; the converters and the protobuf classes come from the
// installed library.
#include <mase/io/onnx.hpp>
#include <mase/mase.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

int main(int argc, char** argv) try {
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer_onnx_compiled MODEL.onnx SCRATCH_FOLDER\n");
    return 2;
  }
  mase::onnx::import_options options;
  options.input_shapes.insert_or_assign("x", mase::shape{1, 784});  // the file's batch is symbolic
  const mase::onnx::imported_model mlp = mase::onnx::load_model(argv[1], options);
  mase::evaluator run(mlp.graph);
  const mase::tensor input({1, 784}, std::vector<float>(784, 0.5f));
  const mase::tensor logits = run.run(input)[0];

  const std::filesystem::path saved = std::filesystem::path(argv[2]) / "logits.pb";
  std::filesystem::create_directories(argv[2]);
  mase::onnx::save_tensor(saved, logits, "logits");
  const mase::tensor reloaded = mase::onnx::load_tensor(saved);
  const bool ok = logits.shape() == mase::shape{1, 10} && reloaded.shape() == logits.shape() &&
                  std::equal(logits.data(), logits.data() + logits.size(), reloaded.data());
  std::printf("consumer_onnx_compiled: imported %zu nodes, logits saved and reloaded: %s\n", mlp.graph.size(),
              ok ? "identical" : "DIFFERENT");
  return ok ? 0 : 1;
} catch (const mase::error& e) {
  std::fprintf(stderr, "consumer_onnx_compiled: %s\n", e.what());
  return 1;
}
