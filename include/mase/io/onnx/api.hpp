#pragma once
// The ONNX importer's public face without the protobuf classes: the options, the imported model,
// the errors, and the entry points (defined in io/onnx/entry_points.hpp). io/onnx.hpp includes
// the definitions as well, inline, unless the unit links mase::onnx, which defines
// MASE_ONNX_SEPARATE_COMPILATION and holds them, with every converter, compiled once: such a unit
// parses this header only (docs/architecture.md, "What including mase costs"). A user's
// converter also includes io/onnx/importer.hpp, its API.

#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/ir/graph.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#if defined(MASE_ONNX_SEPARATE_COMPILATION)
#define MASE_ONNX_ENTRY_POINT
#else
#define MASE_ONNX_ENTRY_POINT inline
#endif

namespace onnx {
class ModelProto;
}

namespace mase::onnx {

// The model uses something mase cannot represent (an op, an attribute value, an element type,
// an opset). The conformance runner counts these as skipped, not failed.
class unsupported : public error {
public:
  using error::error;
};

// Some graph inputs feed a slot mase needs as a constant (Conv's weight, Reshape's shape, …).
// Binding them with import_options::constant_inputs makes the model importable; the ONNX
// backend tests give such weights as inputs.
class needs_constant_inputs : public unsupported {
public:
  needs_constant_inputs(std::string message, std::vector<std::string> names)
      : unsupported(std::move(message)), inputs(std::move(names)) {}
  std::vector<std::string> inputs;
};

// The data given for graph inputs does not fit the model: its rank or a fixed dimension differs
// from the file's, or two inputs give one symbolic dimension different sizes. `inputs` names the
// graph inputs concerned, so a tool can say which files it read them from.
class input_data_mismatch : public error {
public:
  input_data_mismatch(std::string message, std::vector<std::string> names)
      : error(std::move(message)), inputs(std::move(names)) {}
  std::vector<std::string> inputs;
};

// An import_options::input_shapes or data_shapes entry names no graph input: `name` is the
// entry, `graph_inputs` the model's inputs, `in_data_shapes` which option named it.
class unknown_input : public error {
public:
  unknown_input(std::string message, std::string entry, std::vector<std::string> inputs, bool data)
      : error(std::move(message)), name(std::move(entry)), graph_inputs(std::move(inputs)), in_data_shapes(data) {}
  std::string name;
  std::vector<std::string> graph_inputs;
  bool in_data_shapes = false;
};

// A graph input has a symbolic dimension that neither input_shapes nor data_shapes sizes:
// `input` names the input, `dimension` the dimension (empty when the file leaves it unnamed), so
// that a tool can say how its own options size it.
class unsized_input : public error {
public:
  unsized_input(std::string message, std::string name, std::string dim)
      : error(std::move(message)), input(std::move(name)), dimension(std::move(dim)) {}
  std::string input;
  std::string dimension;
};

namespace detail {
class importer;
}
// The importer as converters see it (its public part is their API: inputs, attributes, emit).
using importer = detail::importer;
// A user's converter for one ONNX op type: reads the node through the importer and emits mase
// ops for it (io/onnx/converters.hpp's are the examples; docs/extending.md).
using user_converter = std::function<void(importer&)>;

struct import_options {
  // By ONNX input name: the shape to use, replacing the file's (which may be symbolic).
  ordered_map<shape> input_shapes{};
  // By ONNX input name: the shape of the data the model will be run on. Symbolic dimensions take
  // their sizes from it (a named one, such as "batch", gets one size across all inputs, so an
  // input given no data still gets it); fixed dimensions must agree with it
  // (input_data_mismatch). A name that is not a graph input is an error (unknown_input), as in
  // input_shapes.
  // input_shapes wins for an input named in both.
  ordered_map<shape> data_shapes{};
  // Whether an input_shapes entry must keep the rank the file declares (it replaces the sizes: a
  // rank the ops do not expect fails later, far from its cause). ONNX's own test data gives some
  // inputs another rank than their models declare; its runner turns this off.
  bool input_shapes_keep_rank = true;
  // By ONNX input name: graph inputs to treat as constants with these values.
  ordered_map<tensor> constant_inputs{};
  // The user's converters, by op type: "HardShrink" for ONNX's own domain, "com.example.MyOp"
  // (domain, '.', op type) for another. One for an op mase converts replaces mase's.
  ordered_map<user_converter> converters{};
  // For describing a model without its data (mase info, mase draw): a symbolic input dimension
  // that input_shapes and data_shapes leave unsized takes a placeholder size instead of failing
  // with unsized_input, and imported_model::symbolic_dimensions lists each. The k-th (in the
  // order the inputs declare them; a named one such as "batch" counted once and given one size
  // across all inputs, an unnamed one each on its own) gets symbolic_placeholder + k. The graph's
  // shapes are then those of one instance of the model: importing again with another
  // placeholder tells which dimensions follow a symbol. 0, the default, keeps the error: running
  // a model needs its real sizes.
  std::int64_t symbolic_placeholder = 0;
};

// A graph input's dimension that the file leaves symbolic and import_options::symbolic_placeholder
// sized.
struct symbolic_dimension {
  struct use {
    std::string input;  // the graph input's ONNX name
    int axis = 0;
  };
  std::string name;       // the file's dim_param ("batch"); empty when the file leaves it unnamed
  std::int64_t size = 0;  // the placeholder it was given
  std::vector<use> uses;  // where the graph inputs declare it, in the file's order
};

// A graph input or output: its ONNX name and the mase node that carries it.
struct port {
  std::string onnx_name;
  std::string node;
};

struct imported_model {
  mase::graph graph;
  std::vector<port> inputs;   // placeholders, in the file's order
  std::vector<port> outputs;  // the output node's inputs, in the file's order
  std::int64_t opset = 0;
  std::string producer;
  // The symbolic input dimensions given placeholder sizes (import_options::symbolic_placeholder).
  std::vector<symbolic_dimension> symbolic_dimensions;
};

// The ONNX opsets whose operator semantics the converters implement.
inline constexpr std::int64_t min_opset = 7;
inline constexpr std::int64_t max_opset = 17;

// Imports a parsed model; `source` names it in errors.
MASE_ONNX_ENTRY_POINT imported_model import_model(const ::onnx::ModelProto& model, std::string_view source,
                                                  const import_options& options = {});

// Imports a model from its serialized bytes; `source` names it in errors.
MASE_ONNX_ENTRY_POINT imported_model parse_model(std::span<const std::byte> bytes, std::string_view source,
                                                 const import_options& options = {});

// Imports a model file.
MASE_ONNX_ENTRY_POINT imported_model load_model(const std::filesystem::path& file, const import_options& options = {});

// A serialized TensorProto (a .pb file's bytes), read into float32; `source` names it in errors.
MASE_ONNX_ENTRY_POINT tensor parse_tensor(std::span<const std::byte> bytes, std::string_view source);

// A TensorProto file (as the ONNX backend tests store inputs and outputs), read into float32.
MASE_ONNX_ENTRY_POINT tensor load_tensor(const std::filesystem::path& pb_file);

// Writes `t` as a float32 TensorProto named `name`, atomically.
MASE_ONNX_ENTRY_POINT void save_tensor(const std::filesystem::path& pb_file, const tensor& t, std::string_view name);

}  // namespace mase::onnx
