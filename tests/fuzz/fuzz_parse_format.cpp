// Fuzz target: any bytes given to parse_format either raise mase::error or give a format that
// prints and parses back to itself, and that quantizes and encodes a few values without fault.
// Built as a libFuzzer target with clang (tools/fuzz.sh) and, with any compiler, as a replay of
// the corpus under tests/fuzz/corpus (a CTest, run under ASan/UBSan by the sanitize preset).
#include <mase/format/format_string.hpp>
#include <mase/quant/block_codes.hpp>
#include <mase/quant/quantize.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  mase::format f = mase::formats::e4m3;
  try {
    f = mase::parse_format(text);
  } catch (const mase::error&) {
    return 0;  // rejected with a message: the expected outcome for most inputs
  }
  const std::string printed = mase::to_string(f);
  if (!(mase::parse_format(printed) == f)) {
    std::fprintf(stderr, "\"%.*s\" parses to %s, which does not parse back to itself\n", static_cast<int>(size),
                 reinterpret_cast<const char*>(data), printed.c_str());
    std::abort();
  }
  const float values[] = {0.0f, -0.0f, 1.0f, -2.5f, 3e-40f, 1e30f, -1e-3f, 0.375f, 65504.0f, -7.0f, 0.1f, 100.0f};
  const std::int64_t shape[] = {3, 4};
  float out[12];
  try {
    mase::quantize(f, values, shape, out);
    if (f.is_elementwise()) {
      for (const float v : values) (void)mase::decode(f, mase::encode(f, v));
    } else {
      float decoded[12];
      mase::decode_blocks(f, mase::encode_blocks(f, values, shape), shape, decoded);
    }
  } catch (const mase::error&) {
    // Shapes a block format cannot take (e.g. a 3-D-only layout) are reported, not crashed on.
  }
  return 0;
}
