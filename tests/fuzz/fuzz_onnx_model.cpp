// Fuzz target: any bytes given to the ONNX importer either raise mase::error (onnx::unsupported
// among them) or give a graph that passes verify-style checks by running: a model whose inputs
// are small (and whose results fit in memory) is evaluated on zeros, and the evaluator may raise
// mase::error and nothing else.
// Built as a libFuzzer target with clang (tools/fuzz.sh) and, with any compiler, as a replay of
// tests/fuzz/corpus/onnx_model, the ONNX fixtures and Debian's ONNX backend-test models (a CTest,
// run under ASan/UBSan by the sanitize preset).
#include <mase/eval/evaluator.hpp>
#include <mase/io/onnx.hpp>
#include <mase/ir/shape_inference.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<mase::onnx::imported_model> model;
  try {
    model = mase::onnx::parse_model(std::as_bytes(std::span(data, size)), "fuzz input");
  } catch (const mase::error&) {
    return 0;
  }
  mase::ordered_map<mase::tensor> inputs;
  std::int64_t elements = 0;
  for (const mase::onnx::port& p : model->inputs) {
    const mase::shape& s = model->graph.at(p.node).as<mase::op::placeholder>().shape;
    elements += s.numel();
    inputs.insert_or_assign(p.node, mase::tensor(s));
  }
  if (elements > (1 << 16)) return 0;
  // A valid model may also compute results far larger than memory (a Tile by 10^9), or merely
  // large ones that take longer than the fuzzer's time limit under ASan (a Pad that grows the batch
  // to 60,000); that is not the loader's business. Such models are not run: all the results
  // together hold at most 2^24 elements.
  std::vector<mase::shape_list> results(model->graph.id_bound());
  std::int64_t result_elements = 0;
  try {
    for (mase::node_id id : model->graph.order()) {
      results[id.index] = mase::infer_node_shapes(model->graph, id, [&](mase::node_id i) -> const mase::shape_list& {
        return results[i.index];
      });
      for (const mase::shape& s : results[id.index]) {
        std::int64_t d = 1;
        for (std::int64_t i = 0; i < s.size(); ++i)
          if (__builtin_mul_overflow(d, s[i], &d) || d > (std::int64_t{1} << 24)) return 0;
        result_elements += d;
        if (result_elements > (std::int64_t{1} << 24)) return 0;
      }
    }
    mase::evaluator ev(model->graph);
    ev.run(inputs);
  } catch (const mase::error&) {
  }
  return 0;
}
