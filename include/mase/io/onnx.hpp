#pragma once
// ONNX import: a ModelProto (opsets 7 to 17) becomes a mase::graph. Initializers and Constant
// nodes become constant nodes, graph inputs placeholders, and each ONNX node one or more ops of
// the vocabulary (docs/onnx.md lists the mapping). Shape arithmetic on constants is folded at
// import. An op mase does not support is an onnx::unsupported error that lists every such op of
// the model at once; a damaged file, a missing initializer or a wrong attribute is a mase::error
// naming the file, node and op.
//
// Not part of mase.hpp: it needs the ONNX protobuf library (link mase::onnx, which brings
// ONNX::onnx_proto from Debian's libonnx-dev).

#include <mase/core/temp_file.hpp>
#include <mase/io/onnx/converters.hpp>
#include <mase/io/onnx/importer.hpp>
#include <mase/io/onnx/tensor_proto.hpp>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace mase::onnx {

namespace detail {

inline std::string read_file(const std::filesystem::path& file, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw error(fmt::format("{}: no such {} (not a regular file)", file.string(), what));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw error(fmt::format("{}: cannot open the {}", file.string(), what));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw error(fmt::format("{}: reading the {} failed", file.string(), what));
  return bytes;
}

}  // namespace detail

// Imports a parsed model; `source` names it in errors.
inline imported_model import_model(const ::onnx::ModelProto& model, std::string_view source,
                                   const import_options& options = {}) {
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw error(fmt::format("{}: the model has no graph nodes", source));
  return detail::importer(model, std::string(source), options).run();
}

// Imports a model from its serialized bytes; `source` names it in errors.
inline imported_model parse_model(std::span<const std::byte> bytes, std::string_view source,
                                  const import_options& options = {}) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw error(fmt::format("{}: {} bytes is larger than protobuf reads (2 GiB)", source, bytes.size()));
  ::onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw error(fmt::format("{}: not an ONNX model (the protobuf ModelProto does not parse; is the file damaged "
                            "or truncated?)",
                            source));
  return import_model(model, source, options);
}

inline imported_model load_model(const std::filesystem::path& file, const import_options& options = {}) {
  const std::string bytes = detail::read_file(file, "ONNX model");
  return parse_model(std::as_bytes(std::span(bytes.data(), bytes.size())), file.string(), options);
}

// A serialized TensorProto (a .pb file's bytes), read into float32; `source` names it in errors.
inline tensor parse_tensor(std::span<const std::byte> bytes, std::string_view source) {
  ::onnx::TensorProto proto;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw error(fmt::format("{}: not an ONNX TensorProto (the protobuf does not parse)", source));
  tensor_data d = read_tensor_proto(proto, source);
  return tensor(d.shape, std::move(d.values));
}

// A TensorProto file (as the ONNX backend tests store inputs and outputs), read into float32.
inline tensor load_tensor(const std::filesystem::path& pb_file) {
  const std::string bytes = detail::read_file(pb_file, "TensorProto file");
  return parse_tensor(std::as_bytes(std::span(bytes.data(), bytes.size())), pb_file.string());
}

// Writes `t` as a float32 TensorProto named `name`, atomically.
inline void save_tensor(const std::filesystem::path& pb_file, const tensor& t, std::string_view name) {
  std::string bytes;
  if (!make_tensor_proto(t, name).SerializeToString(&bytes))
    throw error(fmt::format("{}: serializing the tensor failed", pb_file.string()));
  write_file_atomically(pb_file, bytes);
}

}  // namespace mase::onnx
