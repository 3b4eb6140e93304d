#pragma once
// Number formats and quantizers: the compile-time format types (fixed, minifloat, log, binary,
// block, MX), format strings, and the quantizers that apply them to float data (MASE's own
// quantizers in quant/mase_compat.hpp).

#include <mase/core.hpp>
#include <mase/format/format.hpp>
#include <mase/quant/block_codes.hpp>
#include <mase/quant/mase_compat.hpp>
#include <mase/quant/quantize.hpp>
