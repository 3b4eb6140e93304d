#pragma once
// Everything in mase that needs no linked library: the per-facility umbrellas, each of which a
// file may include on its own to compile faster (tools/compile_budget.sh measures them). Apart:
// <mase/verilog.hpp> (hardware), <mase/io/onnx.hpp> (needs protobuf), <mase/io/quant_config.hpp>
// (needs toml++) and <mase/pass/profile_statistics.hpp> (calibration).

#include <mase/core.hpp>
#include <mase/eval.hpp>
#include <mase/formats.hpp>
#include <mase/io.hpp>
#include <mase/ir.hpp>
#include <mase/passes.hpp>
