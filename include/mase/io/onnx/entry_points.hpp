#pragma once
// The definitions of io/onnx/api.hpp's entry points: inline through io/onnx.hpp in the
// header-only mode, compiled once into mase::onnx (src/onnx.cpp) in the compiled mode.

#include <mase/core/temp_file.hpp>
#include <mase/io/onnx/api.hpp>
#include <mase/io/onnx/converters.hpp>
#include <mase/io/onnx/importer.hpp>
#include <mase/io/onnx/tensor_proto.hpp>

#include <cstddef>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include <fmt/core.h>

#if defined(MASE_ONNX_SEPARATE_COMPILATION) && !defined(MASE_ONNX_DEFINE_ENTRY_POINTS)
#error "mase/io/onnx/entry_points.hpp defines what the compiled importer (mase::onnx) holds; include <mase/io/onnx.hpp> instead"
#endif

namespace mase::onnx {

MASE_ONNX_ENTRY_POINT imported_model import_model(const ::onnx::ModelProto& model, std::string_view source,
                                                  const import_options& options) {
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw error(fmt::format("{}: the model has no graph nodes", source));
  return detail::importer(model, std::string(source), options).run();
}

MASE_ONNX_ENTRY_POINT imported_model parse_model(std::span<const std::byte> bytes, std::string_view source,
                                                 const import_options& options) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw error(fmt::format("{}: {} bytes is larger than protobuf reads (2 GiB)", source, bytes.size()));
  ::onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw error(fmt::format("{}: not an ONNX model (the protobuf ModelProto does not parse; is the file damaged "
                            "or truncated?)",
                            source));
  return import_model(model, source, options);
}

MASE_ONNX_ENTRY_POINT imported_model load_model(const std::filesystem::path& file, const import_options& options) {
  const std::string bytes = detail::read_file(file, "ONNX model");
  return parse_model(std::as_bytes(std::span(bytes.data(), bytes.size())), file.string(), options);
}

MASE_ONNX_ENTRY_POINT tensor parse_tensor(std::span<const std::byte> bytes, std::string_view source) {
  ::onnx::TensorProto proto;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw error(fmt::format("{}: not an ONNX TensorProto (the protobuf does not parse)", source));
  tensor_data d = read_tensor_proto(proto, source);
  return tensor(d.shape, std::move(d.values));
}

MASE_ONNX_ENTRY_POINT tensor load_tensor(const std::filesystem::path& pb_file) {
  const std::string bytes = detail::read_file(pb_file, "TensorProto file");
  return parse_tensor(std::as_bytes(std::span(bytes.data(), bytes.size())), pb_file.string());
}

MASE_ONNX_ENTRY_POINT void save_tensor(const std::filesystem::path& pb_file, const tensor& t, std::string_view name) {
  std::string bytes;
  if (!make_tensor_proto(t, name).SerializeToString(&bytes))
    throw error(fmt::format("{}: serializing the tensor failed", pb_file.string()));
  write_file_atomically(pb_file, bytes);
}

}  // namespace mase::onnx
