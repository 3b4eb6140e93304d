// Fuzz target: any bytes given to the checkpoint loader either raise mase::error or give a graph
// that saves and loads back to the same graph (and to the same bytes: the saved form spells
// every double and float bit exactly, so it is the comparison that also sees NaNs).
// The input is the .json text, a zero byte, then the .safetensors bytes (no zero byte: all
// .json). Each input is loaded twice: as given, and without the check that the two parts were
// saved together, so that mutations reach the code behind that check.
// Built as a libFuzzer target with clang (tools/fuzz.sh) and, with any compiler, as a replay of
// the corpus under tests/fuzz/corpus/checkpoint (a CTest, run under ASan/UBSan by the sanitize
// preset).
#include <mase/io/checkpoint.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace {

[[noreturn]] void report(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_checkpoint: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void load_and_round_trip(std::string_view json, std::string_view safetensors, bool verify_pairing) {
  std::optional<mase::graph> loaded;
  try {
    loaded = mase::graph_from_checkpoint_strings(json, safetensors, {.verify_pairing = verify_pairing});
  } catch (const mase::error&) {
    return;  // rejected with a message: the expected outcome for most inputs
  }
  // Whatever loads saves: every string in it came from valid JSON, every tensor from F32 data.
  mase::checkpoint_strings saved;
  try {
    saved = mase::checkpoint_to_strings(*loaded);
  } catch (const mase::error& e) {
    report("a loaded checkpoint could not be saved", e.what());
  }
  mase::graph reloaded;
  try {
    reloaded = mase::graph_from_checkpoint_strings(saved.json, saved.safetensors);
  } catch (const mase::error& e) {
    report("a saved checkpoint could not be loaded back", e.what());
  }
  // graph::operator== compares doubles with ==, so a graph holding a NaN differs from itself;
  // compare the graphs where that cannot happen, and the saved bytes always.
  if (*loaded == *loaded && !(reloaded == *loaded)) report("the reloaded graph differs", saved.json);
  const mase::checkpoint_strings saved_again = mase::checkpoint_to_strings(reloaded);
  if (saved_again.json != saved.json || saved_again.safetensors != saved.safetensors)
    report("saving the reloaded graph gives other bytes", saved.json + "\n---\n" + saved_again.json);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view json = input.substr(0, split);
  const std::string_view safetensors = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  load_and_round_trip(json, safetensors, true);
  load_and_round_trip(json, safetensors, false);
  return 0;
}
