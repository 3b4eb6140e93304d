// mase::onnx: the ONNX importer's entry points with every converter (io/onnx/api.hpp).
#define MASE_ONNX_DEFINE_ENTRY_POINTS
#include <mase/io/onnx/entry_points.hpp>
