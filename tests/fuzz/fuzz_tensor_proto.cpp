// Fuzz target: any bytes given as an ONNX TensorProto (.pb) input file either raise mase::error
// or give a tensor that saves as a TensorProto and reads back with the same shape and bits.
// The declared shape must be checked against the data present (raw_data or the typed repeated
// fields) before anything is allocated for it: run with -rss_limit_mb.
// Built as a libFuzzer target with clang (tools/fuzz.sh) and, with any compiler, as a replay of
// tests/fuzz/corpus/tensor_proto and the fixtures' test data (a CTest, run under ASan/UBSan by
// the sanitize preset).
#include <mase/io/onnx.hpp>
#include <mase/io/onnx/tensor_proto.hpp>  // the protobuf classes (io/onnx.hpp declares the entry points only)

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<mase::tensor> loaded;
  try {
    loaded = mase::onnx::parse_tensor(std::as_bytes(std::span(data, size)), "fuzz.pb");
  } catch (const mase::error&) {
    return 0;  // rejected with a message (onnx::unsupported among them)
  }
  std::string saved;
  if (!mase::onnx::make_tensor_proto(*loaded, "fuzz").SerializeToString(&saved)) {
    std::fprintf(stderr, "fuzz_tensor_proto: a loaded tensor does not serialize\n");
    std::abort();
  }
  const mase::tensor reloaded = mase::onnx::parse_tensor(std::as_bytes(std::span(saved.data(), saved.size())), "saved.pb");
  // Compared as bytes: a NaN read from the file must come back as the same NaN.
  if (!(reloaded.shape() == loaded->shape()) ||
      (loaded->size() != 0 && std::memcmp(reloaded.data(), loaded->data(), loaded->size_in_bytes()) != 0)) {
    std::fprintf(stderr, "fuzz_tensor_proto: a tensor of shape %s does not save and load back to itself\n",
                 mase::to_string(loaded->shape()).c_str());
    std::abort();
  }
  return 0;
}
