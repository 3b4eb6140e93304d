#pragma once
// Checkpoints: a graph saved as two files that lose nothing of it (MASE's MaseGraph.export /
// from_checkpoint, which pickle instead).
//
//   mase::export_checkpoint(g, "out/model");       // writes out/model.safetensors, out/model.json
//   mase::graph g = mase::from_checkpoint("out/model");
//
// The format, and the definitions: io/checkpoint/codec.hpp, which this header includes unless the
// unit links mase::mase (core/compiled.hpp); that library holds the entry points for
// mase::graph compiled once, so such a unit parses the declarations below only.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/ir/graph.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ios>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include <fmt/core.h>

namespace mase {

inline constexpr int checkpoint_version = 1;

// A checkpoint held in memory: the .json text and the .safetensors bytes.
struct checkpoint_strings {
  std::string json;
  std::string safetensors;
};

struct checkpoint_load_options {
  // Check that the .safetensors is the one saved with the .json (its recorded size and hash).
  // Turn it off only to load weights that another tool rewrote on purpose.
  bool verify_pairing = true;
  // The ops the checkpoint may name: nullptr for mase's built-in ones; a user whose graphs hold
  // their own ops passes a vocabulary that has them (ir/op_traits.hpp).
  const vocabulary* ops = nullptr;
};

// The entry points are templates over the graph type (always mase::graph) only so that a unit
// compiles the codec, and every op's code with it, where it saves or loads.

// The checkpoint of `g` in memory: the .json text and the .safetensors bytes.
template <class Graph = graph>
checkpoint_strings checkpoint_to_strings(const std::type_identity_t<Graph>& g);

// Reads a checkpoint held in memory. Messages name the parts "<checkpoint json>" and
// "<checkpoint safetensors>".
template <class Graph = graph>
Graph graph_from_checkpoint_strings(std::string_view json_text, std::string_view safetensors_bytes,
                                    const checkpoint_load_options& options = {});

// Throws mase::error unless export_checkpoint may write at `stem`: it names a file stem (not a
// folder such as "out/"), and each of <stem>.json and <stem>.safetensors is free or a checkpoint
// file mase wrote (a .json whose opening names the format, a .safetensors whose header's
// metadata does). Anything else is the user's: export_checkpoint refuses it before touching any
// file, and a tool can call this before its work to refuse as early.
inline void check_checkpoint_stem(const std::filesystem::path& stem) {
  const std::string name = stem.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw error(fmt::format("\"{}\" names a folder, not a checkpoint stem; give one such as out/model (for "
                            "out/model.json and out/model.safetensors)",
                            stem.string()));
  for (std::string_view suffix : {".json", ".safetensors"}) {
    std::filesystem::path file = stem;
    file += std::string(suffix);
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::symlink_status(file, ec);
    if (!std::filesystem::exists(status)) continue;
    if (std::filesystem::is_directory(status))
      throw error(fmt::format("{} is a folder; give the checkpoint a stem whose .json and .safetensors names are free "
                              "or hold a previous checkpoint",
                              file.string()));
    std::string opening(256, '\0');
    std::ifstream in(file, std::ios::binary);
    in.read(opening.data(), static_cast<std::streamsize>(opening.size()));
    opening.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    bool ours = false;
    if (suffix == ".json") {
      std::string compact;  // without white space, so the layout does not matter
      for (char c : opening)
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') compact += c;
      ours = compact.starts_with("{\"format\":\"mase-checkpoint\"");
    } else {
      // 8 bytes of header length, then the header, which opens with mase's metadata.
      constexpr std::string_view mark = R"({"__metadata__":{"format":"mase-checkpoint")";
      ours = opening.size() > 8 + mark.size() && std::string_view(opening).substr(8, mark.size()) == mark;
    }
    if (!ours || !std::filesystem::is_regular_file(status))
      throw error(fmt::format("{} exists and is not a checkpoint mase wrote; mase replaces only its own checkpoint "
                              "files. Nothing was changed: choose another stem, or move the file away",
                              file.string()));
  }
}

// Writes <stem>.safetensors and <stem>.json: both are written to temporary files first and
// renamed into place only once both are complete. The directory must exist. An existing
// checkpoint at `stem` is replaced; anything else there is refused (check_checkpoint_stem) and
// other files are never touched.
template <class Graph = graph>
void export_checkpoint(const std::type_identity_t<Graph>& g, const std::filesystem::path& stem);

// Reads <stem>.json and <stem>.safetensors back into the graph that was saved.
template <class Graph = graph>
Graph from_checkpoint(const std::filesystem::path& stem, const checkpoint_load_options& options = {});

#if MASE_EXTERN_INSTANTIATIONS
extern template checkpoint_strings checkpoint_to_strings<graph>(const graph&);
extern template graph graph_from_checkpoint_strings<graph>(std::string_view, std::string_view,
                                                           const checkpoint_load_options&);
extern template void export_checkpoint<graph>(const graph&, const std::filesystem::path&);
extern template graph from_checkpoint<graph>(const std::filesystem::path&, const checkpoint_load_options&);
#endif

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/io/checkpoint/codec.hpp>
#endif
