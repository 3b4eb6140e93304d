#pragma once
// ONNX import: a ModelProto (opsets 7 to 17) becomes a mase::graph. Initializers and Constant
// nodes become constant nodes, graph inputs placeholders, and each ONNX node one or more ops of
// the vocabulary (docs/onnx.md lists the mapping). Shape arithmetic on constants is folded at
// import. An op mase does not support is an onnx::unsupported error that lists every such op of
// the model at once; a damaged file, a missing initializer or a wrong attribute is a mase::error
// naming the file, node and op.
//
// Not part of mase.hpp: it needs the ONNX protobuf library (ONNX::onnx_proto from Debian's
// libonnx-dev). Linking mase::onnx takes the importer compiled once: this header then declares
// the entry points only (io/onnx/api.hpp). mase::onnx_header_only compiles it in the unit.

#include <mase/io/onnx/api.hpp>

#if !defined(MASE_ONNX_SEPARATE_COMPILATION)
#include <mase/io/onnx/entry_points.hpp>
#endif
