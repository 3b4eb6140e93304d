// mase::compiled: the checkpoint codec, JSON and vocabulary included (core/compiled.hpp).
#include <mase/io/checkpoint.hpp>

template struct mase::checkpoint_detail::checkpoint_codec<mase::graph>;
