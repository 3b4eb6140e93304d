// Fuzz target: the mase tool's own option strings (tools/mase/option_parsing.hpp). The input is
// a list of lines, each given both as an --input NAME=FILE and as an --input-shape NAME=DIMS.
// Each is either a usage_error or splits/parses consistently (NAME=VALUE joins back to the text;
// the dimensions print and parse back to themselves); --input-shape's shapes are then applied as
// `mase info` applies them, importing a small model (x + y → Relu, inputs of shape [batch, 3])
// and inferring its shapes, which may raise mase::error and nothing else.
// Built as a libFuzzer target with clang (tools/fuzz.sh) and, with any compiler, as a replay of
// tests/fuzz/corpus/cli_options (a CTest, run under ASan/UBSan by the sanitize preset).
#include "option_parsing.hpp"

#include <mase/io/onnx.hpp>
#include <mase/io/onnx/tensor_proto.hpp>  // the protobuf classes (io/onnx.hpp declares the entry points only)
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

[[noreturn]] void report(const char* what, std::string_view text) {
  std::fprintf(stderr, "fuzz_cli_options: %s: \"%.*s\"\n", what, static_cast<int>(text.size()), text.data());
  std::abort();
}

// x + y → Relu → z, with x and y of shape [batch, 3] ("batch" symbolic: --input-shape fills it).
::onnx::ModelProto make_model() {
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  ::onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(std::string("fuzz"));
  for (std::string name : {"x", "y"}) {
    ::onnx::ValueInfoProto& in = *g.add_input();
    in.set_name(std::move(name));
    ::onnx::TypeProto_Tensor& type = *in.mutable_type()->mutable_tensor_type();
    type.set_elem_type(::onnx::TensorProto::FLOAT);
    type.mutable_shape()->add_dim()->set_dim_param(std::string("batch"));
    type.mutable_shape()->add_dim()->set_dim_value(3);
  }
  // (Names as std::string rvalues: GCC 12 warns falsely (-Wrestrict) on protobuf's const char* setters.)
  const auto add_node = [&](std::string op, std::vector<std::string> inputs, std::string output) {
    ::onnx::NodeProto& node = *g.add_node();
    node.set_op_type(std::move(op));
    for (std::string& input : inputs) node.add_input(std::move(input));
    node.add_output(std::move(output));
  };
  add_node("Add", {"x", "y"}, "sum");
  add_node("Relu", {"sum"}, "z");
  ::onnx::ValueInfoProto& out = *g.add_output();
  out.set_name(std::string("z"));
  out.mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  return model;
}

void check_assignment(const std::string& text) {
  std::pair<std::string, std::string> parts;
  try {
    parts = mase_cli::split_assignment(text, "--input");
  } catch (const mase_cli::usage_error&) {
    return;
  }
  if (parts.first.empty() || parts.second.empty() || parts.first.find('=') != std::string::npos ||
      parts.first + "=" + parts.second != text)
    report("NAME=VALUE split inconsistently", text);
}

void check_dims(const std::string& text) {
  mase::shape dims;
  try {
    dims = mase_cli::parse_dims(text, text);
  } catch (const mase_cli::usage_error&) {
    return;
  }
  std::string printed;
  for (const std::int64_t d : dims) printed += fmt::format("{}{}", printed.empty() ? "" : ",", d);
  if (!(mase_cli::parse_dims(printed, printed) == dims)) report("dimensions do not print and parse back", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> options;
  for (std::size_t start = 0; start <= input.size();) {
    const std::size_t end = std::min(input.find('\n', start), input.size());
    options.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& text : options) {
    check_assignment(text);
    check_dims(text);
  }

  mase::onnx::import_options import;
  try {
    import.input_shapes = mase_cli::parse_input_shapes(options);
  } catch (const mase_cli::usage_error&) {
    return 0;
  }
  static const ::onnx::ModelProto model = make_model();
  try {
    const mase::onnx::imported_model imported = mase::onnx::import_model(model, "fuzz.onnx", import);
    const mase::graph with_shapes(imported.graph | mase::init_metadata | mase::add_common_metadata);
    (void)with_shapes;
  } catch (const mase::error&) {
    // A shape the model cannot take (x and y differ, a name that is no input): reported.
  }
  return 0;
}
