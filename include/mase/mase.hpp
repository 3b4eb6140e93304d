#pragma once
// Everything in mase that needs no linked library.

#include <mase/core/error.hpp>
#include <mase/format/format.hpp>
#include <mase/quant/block_codes.hpp>
#include <mase/quant/mase_compat.hpp>
#include <mase/quant/quantize.hpp>
