#pragma once
// Files: checkpoints (JSON + safetensors), drawings (DOT/SVG), NumPy .npy tensors. ONNX import
// (<mase/io/onnx.hpp>) and TOML quantize configs (<mase/io/quant_config.hpp>) need linked
// libraries and are apart.

#include <mase/io/checkpoint.hpp>
#include <mase/io/draw.hpp>
#include <mase/io/npy.hpp>
