// Fuzz target: any bytes given to the ONNX importer either raise mase::error (onnx::unsupported
// among them) or give a graph that passes verify-style checks by running: a model whose inputs
// are small is evaluated on zeros, and the evaluator may raise mase::error (or run out of memory
// on a valid but huge model) and nothing else.
// Built as a libFuzzer target with clang (tools/fuzz.sh) and, with any compiler, as a replay of
// tests/fuzz/corpus/onnx_model, the ONNX fixtures and Debian's ONNX backend-test models (a CTest,
// run under ASan/UBSan by the sanitize preset).
#include <mase/eval/evaluator.hpp>
#include <mase/io/onnx.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
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
  try {
    mase::evaluator ev(model->graph);
    ev.run(inputs);
  } catch (const mase::error&) {
  } catch (const std::bad_alloc&) {  // a valid model may simply be too large to run here
  }
  return 0;
}
