// Fuzz target: any text given as a quantize config (MASE's TOML layout) either raises mase::error
// or gives a quantize_config that the quantize pass applies to MASE's toy model
// (linear → relu → linear) or rejects with mase::error; regex_name keys are compiled there.
// Built as a libFuzzer target with clang (tools/fuzz.sh) and, with any compiler, as a replay of
// tests/fuzz/corpus/quant_config and tests/fixtures/quantize (a CTest, run under ASan/UBSan by
// the sanitize preset).
#include <mase/io/quant_config.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace {

// MASE's toy model, with its metadata: what the configs under configs/tests/quantize describe.
auto make_toy_model() {
  mase::builder b;
  auto x = b.input("x", {2, 16});
  auto h = b.add("seq_blocks_0", mase::op::linear{.in_features = 16, .out_features = 16}, x);
  h = b.add("seq_blocks_1", mase::op::relu{}, h);
  h = b.add("seq_blocks_2", mase::op::linear{.in_features = 16, .out_features = 5}, h);
  return b.output(h) | mase::init_metadata | mase::add_common_metadata;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<mase::quantize_config> config;
  try {
    config = mase::parse_quantize_config(text, "fuzz.toml");
  } catch (const mase::error&) {
    return 0;  // rejected with a message: the expected outcome for most inputs
  }
  config->report = false;  // the summary table is printing, not parsing
  try {
    static const auto toy_model = make_toy_model();
    auto model = toy_model;
    const mase::graph quantized = std::move(model) | mase::quantize(*config);
    (void)quantized;
  } catch (const mase::error&) {
    // An entry naming no node of the toy model, or formats its ops cannot take.
  }
  return 0;
}
