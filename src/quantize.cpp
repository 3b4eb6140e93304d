// mase::compiled: the quantizer over every runtime format, with every family's kernels
// (core/compiled.hpp).
// This unit defines what the headers declare (core/compiled.hpp).
#define MASE_DEFINE_COMPILED
#include <mase/quant/block_definitions.hpp>
#include <mase/quant/quantize_definitions.hpp>
