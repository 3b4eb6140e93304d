// Fuzz target: any bytes given to the .npy reader either raise mase::error or give a tensor that
// saves (to_npy_bytes) and reads back with the same shape and the same bits. Nothing may be
// allocated for a shape before it is checked against the bytes present (run with
// -rss_limit_mb, a header claiming a huge array shows up as an out-of-memory report).
// Built as a libFuzzer target with clang (tools/fuzz.sh) and, with any compiler, as a replay of
// tests/fuzz/corpus/npy and the .npy fixtures (a CTest, run under ASan/UBSan by the sanitize preset).
#include <mase/io/npy.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::optional<mase::tensor> loaded;
  try {
    loaded = mase::npy::from_npy_bytes(bytes, "fuzz.npy");
  } catch (const mase::error&) {
    return 0;  // rejected with a message: the expected outcome for most inputs
  }
  const mase::tensor reloaded = mase::npy::from_npy_bytes(mase::npy::to_npy_bytes(*loaded), "saved.npy");
  // Compared as bytes: a NaN read from the file must come back as the same NaN.
  if (!(reloaded.shape() == loaded->shape()) ||
      (loaded->size() != 0 && std::memcmp(reloaded.data(), loaded->data(), loaded->size_in_bytes()) != 0)) {
    std::fprintf(stderr, "fuzz_npy: a loaded array of shape %s does not save and load back to itself\n",
                 mase::to_string(loaded->shape()).c_str());
    std::abort();
  }
  return 0;
}
