// mase::mase: the checkpoint codec and its entry points for mase::graph, JSON and vocabulary
// included, drawing graphs and .npy files (core/compiled.hpp).
// This unit defines what the headers declare (core/compiled.hpp).
#define MASE_DEFINE_COMPILED
#include <mase/io/checkpoint/codec.hpp>
#include <mase/io/draw_definitions.hpp>
#include <mase/io/npy_definitions.hpp>

template struct mase::checkpoint_detail::checkpoint_codec<mase::graph>;
template mase::checkpoint_strings mase::checkpoint_to_strings<mase::graph>(const mase::graph&);
template mase::graph mase::graph_from_checkpoint_strings<mase::graph>(std::string_view, std::string_view,
                                                                      const mase::checkpoint_load_options&);
template void mase::export_checkpoint<mase::graph>(const mase::graph&, const std::filesystem::path&);
template mase::graph mase::from_checkpoint<mase::graph>(const std::filesystem::path&,
                                                        const mase::checkpoint_load_options&);
