#pragma once
// The ONNX importer's machinery: the table of ONNX values, attribute access with type checks,
// node emission with constant folding, and the errors. The per-op converters that use it are in
// io/onnx/converters.hpp; the public entry points in io/onnx.hpp.
//
// Every ONNX value becomes a node of the mase graph: graph inputs become placeholders,
// initializers and Constant nodes become constant nodes, and each ONNX node becomes one or more
// ops of the vocabulary. A node whose inputs are all constants is evaluated at import (with the
// evaluator's float kernels) and replaced by a constant: this folds the Shape → Gather →
// Unsqueeze → Concat chains that exporters write around Reshape, so that Reshape gets a constant
// shape. Comparisons and logic on constants fold exactly (int64 where the operands are integers),
// so they never round shape arithmetic. Symbolic input
// dimensions take their sizes from import_options::input_shapes or data_shapes. Constants
// nothing reads are dropped at the end.

#include <mase/core/error.hpp>
#include <mase/io/onnx/api.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/tensor.hpp>
#include <mase/eval/kernels.hpp>
#include <mase/io/onnx/tensor_proto.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/op_traits.hpp>
#include <mase/ir/ops.hpp>
#include <mase/ir/shape_inference.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <onnx/onnx_pb.h>

namespace mase::onnx {

namespace detail {

// Folding stops above this many elements: such constants are rare and would cost memory twice.
inline constexpr std::size_t max_folded_elements = std::size_t{1} << 24;

// mase node names are identifiers; ONNX names may be any string ("/encoder/MatMul_output_0").
inline std::string identifier_from(std::string_view onnx_name) {
  std::string s;
  for (char c : onnx_name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (word) s += c;
    else if (!s.empty() && s.back() != '_') s += '_';
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  if (s.empty()) return "v";
  if (s[0] >= '0' && s[0] <= '9') s.insert(s.begin(), 'v');
  return s;
}

// One value of the ONNX graph: the node that computes it, and ONNX's element type for it (mase
// computes in float32; the type decides the integer semantics of Div and Cast).
struct value_ref {
  node_id node;
  int element_type = ::onnx::TensorProto::FLOAT;
};

using converter = void (*)(importer&);

// The converters by ONNX op type (io/onnx/converters.hpp).
const std::unordered_map<std::string_view, converter>& converters();

class importer {
public:
  importer(const ::onnx::ModelProto& model, std::string source, const import_options& options)
      : model_(model), source_(std::move(source)), options_(options) {}

  imported_model run() {
    imported_model out;
    out.producer = model_.producer_name();
    out.opset = default_opset();
    check_opset(out.opset);
    check_every_op_supported();
    check_input_names();
    if (options_.symbolic_placeholder < 0)
      throw error(fmt::format("{}: import_options::symbolic_placeholder is {}; give a positive size, or 0 to require "
                              "every symbolic dimension's size",
                              source_, options_.symbolic_placeholder));
    bind_symbolic_dimensions();
    add_graph_inputs(out);
    out.symbolic_dimensions = std::move(placeholders_);
    add_initializers();
    for (const ::onnx::NodeProto& n : model_.graph().node()) convert(n);
    add_graph_outputs(out);
    drop_unread_nodes();
    out.graph = std::move(graph_);
    return out;
  }

  // --- for converters ------------------------------------------------------------------------

  const ::onnx::NodeProto& node() const { return *node_; }
  std::int64_t opset() const { return opset_; }
  graph& target() { return graph_; }

  // Optional inputs may be omitted at the end or left as "".
  bool has_input(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }
  int input_count() const { return node_->input_size(); }

  node_id input(int i) const { return value(i).node; }
  int input_type(int i) const { return value(i).element_type; }
  // Shapes by value: emitting a node may move the table they live in.
  shape input_shape(int i) const { return shape_of(input(i)); }
  shape shape_of(node_id id) const { return shapes_[id.index][0]; }

  bool is_constant(node_id id) const { return graph_[id].is<op::constant>(); }
  bool input_is_constant(int i) const { return is_constant(input(i)); }

  // The value of constant input `i`; the caller's message says what the input is for. The
  // reference is valid until the next emit (which may move the graph's nodes).
  const tensor& constant_input(int i, std::string_view role) const {
    const node_id id = input(i);
    if (!is_constant(id)) throw_not_constant(i, role);
    return graph_[id].parameters.at("value");
  }
  // Its values as integers: exact when the file stored integers, else rounded from float.
  std::vector<std::int64_t> integer_input(int i, std::string_view role) const {
    const tensor& t = constant_input(i, role);
    if (const auto it = exact_integers_.find(input(i).index); it != exact_integers_.end()) return it->second;
    std::vector<std::int64_t> v;
    v.reserve(t.size());
    for (float x : t.values()) v.push_back(saturating_integer(x));
    return v;
  }
  double scalar_input(int i, std::string_view role) const {
    const tensor& t = constant_input(i, role);
    if (t.size() != 1) fail(fmt::format("input {} ({}) must hold one value, not shape {}", i, role, to_string(t.shape())));
    return t.values()[0];
  }

  // Attributes, type-checked: a wrong type is an error naming the attribute.
  const ::onnx::AttributeProto* attribute(std::string_view name) const {
    for (const ::onnx::AttributeProto& a : node_->attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  bool has_attribute(std::string_view name) const { return attribute(name) != nullptr; }
  std::int64_t int_attribute(std::string_view name, std::int64_t fallback) const {
    const auto* a = typed_attribute(name, ::onnx::AttributeProto::INT);
    return a == nullptr ? fallback : a->i();
  }
  std::int64_t required_int_attribute(std::string_view name) const {
    require_attribute(name);
    return int_attribute(name, 0);
  }
  double float_attribute(std::string_view name, double fallback) const {
    const auto* a = typed_attribute(name, ::onnx::AttributeProto::FLOAT);
    return a == nullptr ? fallback : a->f();
  }
  std::vector<std::int64_t> ints_attribute(std::string_view name, std::vector<std::int64_t> fallback = {}) const {
    const auto* a = typed_attribute(name, ::onnx::AttributeProto::INTS);
    if (a == nullptr) return fallback;
    return {a->ints().begin(), a->ints().end()};
  }
  std::vector<float> floats_attribute(std::string_view name) const {
    const auto* a = typed_attribute(name, ::onnx::AttributeProto::FLOATS);
    if (a == nullptr) return {};
    return {a->floats().begin(), a->floats().end()};
  }
  std::string string_attribute(std::string_view name, std::string fallback) const {
    const auto* a = typed_attribute(name, ::onnx::AttributeProto::STRING);
    return a == nullptr ? fallback : a->s();
  }
  const ::onnx::TensorProto* tensor_attribute(std::string_view name) const {
    const auto* a = typed_attribute(name, ::onnx::AttributeProto::TENSOR);
    return a == nullptr ? nullptr : &a->t();
  }
  void require_attribute(std::string_view name) const {
    if (!has_attribute(name)) fail(fmt::format("the required attribute {} is missing", name));
  }

  // Appends a node for `op` reading `inputs`, with `parameters` set; folds it to a constant when
  // every input is a constant.
  node_id emit(any_op op, std::vector<node_id> inputs, ordered_map<tensor> parameters = {}) {
    const bool foldable = !inputs.empty() && !op_takes_all_results(op) &&
                          std::all_of(inputs.begin(), inputs.end(), [&](node_id i) { return is_constant(i); });
    const node_id id = graph_.add(next_name(), std::move(op), std::move(inputs));
    for (auto& [role, value] : parameters) graph_.set_parameter(id, role, std::move(value));
    record_shapes(id);
    if (foldable && shapes_[id.index].size() == 1 && static_cast<std::size_t>(shapes_[id.index][0].numel()) <= max_folded_elements)
      return fold(id);
    return id;
  }
  node_id emit_constant(tensor value, std::optional<std::vector<std::int64_t>> exact = std::nullopt) {
    return add_constant(next_name(), std::move(value), std::move(exact));
  }
  node_id emit_scalar(float v) { return emit_constant(tensor(shape{}, {v})); }

  // Binds output `i` of the current node; its element type defaults to input 0's.
  void set_output(int i, node_id id, std::optional<int> element_type = std::nullopt) {
    if (i >= node_->output_size() || node_->output(i).empty()) return;  // an omitted optional output
    const int type = element_type ? *element_type : (has_input(0) ? input_type(0) : ::onnx::TensorProto::FLOAT);
    values_.insert_or_assign(node_->output(i), value_ref{id, type});
  }
  // Whether output `i` of the current node is read by a later node or a graph output.
  bool output_read(int i) const {
    return i < node_->output_size() && !node_->output(i).empty() && read_later_.contains(node_->output(i));
  }
  // Outputs beyond `count` must not be read by anything: mase does not compute them.
  void only_outputs(int count, std::string_view what) const {
    for (int i = count; i < node_->output_size(); ++i)
      if (!node_->output(i).empty() && read_later_.contains(node_->output(i)))
        throw unsupported(context(fmt::format("output {} ({}) is read, and mase does not compute it", i, what)));
  }

  [[noreturn]] void fail(const std::string& message) const { throw error(context(message)); }
  [[noreturn]] void not_supported(const std::string& message) const { throw unsupported(context(message)); }

  static std::int64_t saturating_integer(double x) {
    if (std::isnan(x)) return 0;
    if (x >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
    if (x <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(std::llround(x));
  }

private:
  std::string context(std::string_view message) const {
    if (node_ == nullptr) return fmt::format("{}: {}", source_, message);
    return fmt::format("{}: node {} ({}): {}", source_, node_label(*node_), node_->op_type(), message);
  }
  // PyTorch names a module's node "/fc1/Gemm": the module path is what MASE's node is called.
  static std::string_view node_base_name(const ::onnx::NodeProto& n) {
    std::string_view name = n.name();
    if (name.empty()) return n.output_size() > 0 ? std::string_view(n.output(0)) : std::string_view(n.op_type());
    const std::string suffix = "/" + n.op_type();
    if (name.size() > suffix.size() && name.ends_with(suffix)) name.remove_suffix(suffix.size());
    return name;
  }
  static std::string node_label(const ::onnx::NodeProto& n) {
    if (!n.name().empty()) return fmt::format("\"{}\"", n.name());
    return n.output_size() > 0 ? fmt::format("producing \"{}\"", n.output(0)) : std::string("(unnamed)");
  }

  const value_ref& value(int i) const {
    if (!has_input(i)) fail(fmt::format("input {} is required but missing", i));
    const auto it = values_.find(node_->input(i));
    if (it == values_.end())
      fail(fmt::format("input \"{}\" is not a graph input, an initializer or the output of an earlier node",
                       node_->input(i)));
    return it->second;
  }

  [[noreturn]] void throw_not_constant(int i, std::string_view role) const {
    const node_id id = input(i);
    const mase::node& n = graph_[id];
    if (n.is<op::placeholder>()) {
      const auto it = std::find_if(placeholder_names_.begin(), placeholder_names_.end(),
                                   [&](const auto& p) { return p.second == id; });
      const std::string onnx_name = it == placeholder_names_.end() ? n.name : it->first;
      throw needs_constant_inputs(
          context(fmt::format("input {} ({}) is the graph input \"{}\", but mase needs it as a constant; bind it "
                              "with import_options::constant_inputs, or store it in the model as an initializer",
                              i, role, onnx_name)),
          {onnx_name});
    }
    not_supported(fmt::format("input {} ({}) must be a constant, but it is computed at run time (by node {})", i, role,
                              n.name));
  }

  const ::onnx::AttributeProto* typed_attribute(std::string_view name, ::onnx::AttributeProto::AttributeType type) const {
    const ::onnx::AttributeProto* a = attribute(name);
    if (a == nullptr) return nullptr;
    // Old exporters leave `type` unset; then the field that is present says it.
    const bool matches = a->type() == type ||
                         (a->type() == ::onnx::AttributeProto::UNDEFINED &&
                          ((type == ::onnx::AttributeProto::INT && a->has_i()) ||
                           (type == ::onnx::AttributeProto::FLOAT && a->has_f()) ||
                           (type == ::onnx::AttributeProto::STRING && a->has_s()) ||
                           (type == ::onnx::AttributeProto::TENSOR && a->has_t()) ||
                           (type == ::onnx::AttributeProto::INTS && a->ints_size() > 0) ||
                           (type == ::onnx::AttributeProto::FLOATS && a->floats_size() > 0)));
    if (!matches)
      fail(fmt::format("attribute {} has type {}, but {} takes {}", name,
                       ::onnx::AttributeProto::AttributeType_Name(a->type()), node_->op_type(),
                       ::onnx::AttributeProto::AttributeType_Name(type)));
    return a;
  }

  std::int64_t default_opset() const {
    for (const auto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
    return 0;
  }
  // Opsets 1 to 6 are read too: the converters apply the older definitions where an op
  // changed (the broadcast attribute of element-wise ops, PRelu's slope, BatchNormalization's
  // spatial, Concat's default axis, Reshape's and Slice's attributes).
  void check_opset(std::int64_t version) {
    opset_ = version;
    if (version < 1 || version > max_opset)
      throw unsupported(fmt::format("{}: the model uses ONNX opset {}; mase imports opsets {} to {} (and reads "
                                    "older ones)",
                                    source_, version, min_opset, max_opset));
  }

  static bool in_default_domain(const ::onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }
  // The op's key in import_options::converters: its type, after its domain and '.' outside ONNX's.
  static std::string op_key(const ::onnx::NodeProto& n) {
    return in_default_domain(n) ? n.op_type() : fmt::format("{}.{}", n.domain(), n.op_type());
  }

  // Lists every unsupported op type at once, with the nodes that use it.
  void check_every_op_supported() {
    ordered_map<std::vector<std::string>> missing;
    for (const ::onnx::NodeProto& n : model_.graph().node()) {
      for (const std::string& input : n.input()) read_later_.insert(input);
      const std::string op = op_key(n);
      if (options_.converters.contains(op)) continue;
      if (in_default_domain(n) && converters().contains(n.op_type())) continue;
      missing[op].push_back(n.name().empty() ? (n.output_size() > 0 ? n.output(0) : std::string("?")) : n.name());
    }
    for (const auto& o : model_.graph().output()) read_later_.insert(o.name());
    if (missing.empty()) return;
    std::string list;
    for (const auto& [op, nodes] : missing) {
      std::string names;
      for (std::size_t i = 0; i < nodes.size() && i < 3; ++i) names += fmt::format("{}{}", i ? ", " : "", nodes[i]);
      if (nodes.size() > 3) names += fmt::format(" and {} more", nodes.size() - 3);
      list += fmt::format("{}{} (node{} {})", list.empty() ? "" : ", ", op, nodes.size() > 1 ? "s" : "", names);
    }
    throw unsupported(fmt::format("{}: {} op type{} not supported: {}. docs/onnx.md lists the supported ops", source_,
                                  missing.size(), missing.size() > 1 ? "s are" : " is", list));
  }

  void add_graph_inputs(imported_model& out) {
    std::unordered_set<std::string> initialized;
    for (const auto& t : model_.graph().initializer()) initialized.insert(t.name());
    for (const ::onnx::ValueInfoProto& in : model_.graph().input()) {
      if (initialized.contains(in.name())) continue;  // IR < 4 lists initializers as inputs too
      const std::string where = fmt::format("{}: graph input \"{}\"", source_, in.name());
      if (!in.type().has_tensor_type())
        throw unsupported(fmt::format("{} is not a tensor (sequences, maps and optionals are not supported)", where));
      const auto& tt = in.type().tensor_type();
      if (!is_numeric_element_type(tt.elem_type()))
        throw unsupported(fmt::format("{} has element type {}; mase reads numeric and bool tensors", where,
                                      element_type_name(tt.elem_type())));
      if (const auto bound = options_.constant_inputs.find(in.name()); bound != options_.constant_inputs.end()) {
        const node_id id = add_named_constant(in.name(), bound->second, std::nullopt);
        values_.insert_or_assign(in.name(), value_ref{id, tt.elem_type()});
        continue;
      }
      const shape s = input_shape(in, where);
      const std::string name = unique_name(identifier_from(in.name()));
      const node_id id = graph_.add(name, op::placeholder{.shape = s});
      record_shapes(id);
      values_.insert_or_assign(in.name(), value_ref{id, tt.elem_type()});
      placeholder_names_.emplace_back(in.name(), id);
      out.inputs.push_back({in.name(), name});
    }
  }

  // Every name in input_shapes and data_shapes is a graph input: checked first, so that a
  // misspelt name is reported as such, not as the symbolic dimension it leaves unsized.
  void check_input_names() const {
    std::unordered_set<std::string> initialized;
    for (const auto& t : model_.graph().initializer()) initialized.insert(t.name());
    std::vector<std::string> inputs;
    std::string listed;
    for (const ::onnx::ValueInfoProto& in : model_.graph().input())
      if (!initialized.contains(in.name())) {
        inputs.push_back(in.name());
        listed += fmt::format("{}{}", listed.empty() ? "" : ", ", in.name());
      }
    const auto check = [&](const auto& given, bool data) {
      for (const auto& entry : given)
        if (std::find(inputs.begin(), inputs.end(), entry.first) == inputs.end())
          throw unknown_input(fmt::format("{}: {} names \"{}\", which is not a graph input; the graph inputs are {}",
                                          source_, data ? "data_shapes" : "input_shapes", entry.first,
                                          listed.empty() ? std::string("(none)") : listed),
                              entry.first, inputs, data);
    };
    check(options_.input_shapes, false);
    check(options_.data_shapes, true);
  }

  // The graph inputs that take their shape from import_options::data_shapes: each checked against
  // the file's shape, and each named symbolic dimension bound to the size its data gives.
  void bind_symbolic_dimensions() {
    for (const ::onnx::ValueInfoProto& in : model_.graph().input()) {
      const auto data = options_.data_shapes.find(in.name());
      if (data == options_.data_shapes.end() || options_.input_shapes.contains(in.name()) ||
          options_.constant_inputs.contains(in.name()) || !in.type().has_tensor_type() ||
          !in.type().tensor_type().has_shape())
        continue;
      const shape& given = data->second;
      const auto& file_dims = in.type().tensor_type().shape().dim();
      const std::string declared = declared_shape(in);
      if (file_dims.size() != given.size())
        throw input_data_mismatch(fmt::format("{}: graph input \"{}\" has rank {} in the model ({}), but the data "
                                              "given for it has shape {}",
                                              source_, in.name(), file_dims.size(), declared, to_string(given)),
                                  {in.name()});
      for (int i = 0; i < file_dims.size(); ++i) {
        const auto& d = file_dims[i];
        if (d.has_dim_value() && d.dim_value() >= 0) {
          if (d.dim_value() != given[i])
            throw input_data_mismatch(fmt::format("{}: graph input \"{}\" has shape {} in the model, and the data "
                                                  "given for it has shape {}: dimension {} is fixed at {}",
                                                  source_, in.name(), declared, to_string(given), i, d.dim_value()),
                                      {in.name()});
          continue;
        }
        if (!d.has_dim_param() || d.dim_param().empty()) continue;  // unnamed: this input's own
        const auto [bound, inserted] = symbol_sizes_.try_emplace(d.dim_param(), given[i], in.name());
        if (!inserted && bound->second.first != given[i])
          throw input_data_mismatch(
              fmt::format("{}: the symbolic dimension \"{}\" is {} in the data given for graph input \"{}\" and {} "
                          "in the data given for graph input \"{}\"; give inputs whose \"{}\" agrees",
                          source_, d.dim_param(), bound->second.first, bound->second.second, given[i], in.name(),
                          d.dim_param()),
              {bound->second.second, in.name()});
      }
    }
  }

  // "[batch, 16]": the file's shape with symbolic dimensions by name, for messages.
  static std::string declared_shape(const ::onnx::ValueInfoProto& in) {
    std::string text;
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      if (!text.empty()) text += ", ";
      if (d.has_dim_value() && d.dim_value() >= 0) text += std::to_string(d.dim_value());
      else text += d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : std::string("?");
    }
    return "[" + text + "]";
  }

  shape input_shape(const ::onnx::ValueInfoProto& in, const std::string& where) {
    if (const auto given = options_.input_shapes.find(in.name()); given != options_.input_shapes.end()) {
      // A shape may replace the file's sizes, not its rank (the ops' rules read the rank).
      if (options_.input_shapes_keep_rank && in.type().tensor_type().has_shape() &&
          in.type().tensor_type().shape().dim_size() != static_cast<int>(given->second.size()))
        throw error(fmt::format("{}: the shape given for it, {}, has {} dimension{}, and the model declares {} ({}); "
                                "give all {}",
                                where, to_string(given->second), given->second.size(),
                                given->second.size() == 1 ? "" : "s", in.type().tensor_type().shape().dim_size(),
                                declared_shape(in), in.type().tensor_type().shape().dim_size()));
      return given->second;
    }
    // Checked against the file's shape by bind_symbolic_dimensions.
    if (const auto data = options_.data_shapes.find(in.name()); data != options_.data_shapes.end())
      return data->second;
    const auto& tt = in.type().tensor_type();
    if (!tt.has_shape())
      throw error(fmt::format("{} has no shape in the file; give one (import_options::input_shapes, mase "
                              "--input-shape {}=…)",
                              where, in.name()));
    if (tt.shape().dim_size() > shape::max_rank)
      throw unsupported(fmt::format("{} has {} dimensions; mase handles at most {}", where, tt.shape().dim_size(),
                                    shape::max_rank));
    shape s;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        s.push_back(d.dim_value());
        continue;
      }
      // A named symbolic dimension another input's data gave a size.
      if (const auto bound = symbol_sizes_.find(d.has_dim_param() ? d.dim_param() : std::string());
          bound != symbol_sizes_.end() && !bound->first.empty()) {
        s.push_back(bound->second.first);
        continue;
      }
      if (options_.symbolic_placeholder > 0) {
        const int axis = s.size();
        s.push_back(placeholder_for(d.has_dim_param() ? d.dim_param() : std::string(), in.name(), axis));
        continue;
      }
      throw unsized_input(fmt::format("{} has a symbolic dimension{}; give its shape (import_options::input_shapes "
                                      "or data_shapes)",
                                      where, d.has_dim_param() ? fmt::format(" \"{}\"", d.dim_param()) : std::string()),
                          in.name(), d.has_dim_param() ? d.dim_param() : std::string());
    }
    return s;
  }

  // The placeholder size of symbolic dimension `name` (unnamed: empty), declared by `input` at
  // `axis` (import_options::symbolic_placeholder).
  std::int64_t placeholder_for(const std::string& name, const std::string& input, int axis) {
    auto it = name.empty() ? placeholders_.end()
                           : std::find_if(placeholders_.begin(), placeholders_.end(),
                                          [&](const symbolic_dimension& d) { return d.name == name; });
    if (it == placeholders_.end()) {
      const auto k = static_cast<std::int64_t>(placeholders_.size());
      placeholders_.push_back({.name = name, .size = options_.symbolic_placeholder + k, .uses = {}});
      it = placeholders_.end() - 1;
    }
    it->uses.push_back({.input = input, .axis = axis});
    return it->size;
  }

  void add_initializers() {
    for (const ::onnx::TensorProto& t : model_.graph().initializer()) {
      if (options_.constant_inputs.contains(t.name())) continue;
      tensor_data data = read_tensor_proto(t, fmt::format("{}: initializer \"{}\"", source_, t.name()));
      const node_id id = add_named_constant(t.name(), tensor(data.shape, std::move(data.values)), std::move(data.integers));
      values_.insert_or_assign(t.name(), value_ref{id, data.element_type});
    }
  }

  node_id add_named_constant(const std::string& onnx_name, tensor value, std::optional<std::vector<std::int64_t>> exact) {
    return add_constant(unique_name(identifier_from(onnx_name)), std::move(value), std::move(exact));
  }
  node_id add_constant(std::string name, tensor value, std::optional<std::vector<std::int64_t>> exact) {
    const shape s = value.shape();
    const node_id id = graph_.add(std::move(name), op::constant{.shape = s});
    graph_.set_parameter(id, "value", std::move(value));
    record_shapes(id);
    if (exact) exact_integers_[id.index] = std::move(*exact);
    return id;
  }

  void convert(const ::onnx::NodeProto& n) {
    node_ = &n;
    base_name_ = identifier_from(node_base_name(n));
    names_used_ = 0;
    const auto users = options_.converters.find(op_key(n));
    const bool by_user = users != options_.converters.end();
    const auto general = by_user ? converters().end() : converters().find(n.op_type());
    try {
      if (by_user) {
        users->second(*this);
      } else {
        general->second(*this);
      }
    } catch (const unsupported&) {
      throw;  // already carries the node's context
    } catch (const error& e) {
      const std::string_view what = e.what();
      if (what.starts_with(source_)) throw;
      throw error(context(what));
    }
    for (int i = 0; i < n.output_size(); ++i)
      if (!n.output(i).empty() && !values_.contains(n.output(i)) && read_later_.contains(n.output(i)))
        fail(fmt::format("output {} (\"{}\") is read, and mase does not compute it", i, n.output(i)));
    node_ = nullptr;
  }

  void add_graph_outputs(imported_model& out) {
    std::vector<node_id> results;
    for (const ::onnx::ValueInfoProto& o : model_.graph().output()) {
      const auto it = values_.find(o.name());
      if (it == values_.end())
        throw error(fmt::format("{}: graph output \"{}\" is not computed by any node", source_, o.name()));
      results.push_back(it->second.node);
      out.outputs.push_back({o.name(), graph_[it->second.node].name});
    }
    if (results.empty()) throw error(fmt::format("{}: the graph has no outputs", source_));
    graph_.add(unique_name("output"), op::output{}, results);
  }

  // Removes what no output reads (folded shape arithmetic, unused initializers); graph inputs stay.
  void drop_unread_nodes() {
    std::vector<bool> live(graph_.id_bound(), false);
    const auto order = std::vector<node_id>(graph_.order().begin(), graph_.order().end());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const mase::node& n = graph_[*it];
      if (n.is<op::output>() || n.is<op::placeholder>()) live[it->index] = true;
      if (live[it->index])
        for (node_id i : n.inputs) live[i.index] = true;
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (!live[it->index]) graph_.erase(*it);
  }

  void record_shapes(node_id id) {
    if (shapes_.size() <= id.index) shapes_.resize(id.index + 1);
    shapes_[id.index] = infer_node_shapes(graph_, id, [&](node_id i) -> const shape_list& { return shapes_[i.index]; });
  }

  // Evaluates node `id` (every input a constant) and puts a constant of the same name in its place.
  node_id fold(node_id id) {
    mase::node& n = graph_[id];
    std::vector<const tensor*> inputs;
    for (node_id i : n.inputs) inputs.push_back(&graph_[i].parameters.at("value"));
    std::vector<tensor> results;
    results.emplace_back(shapes_[id.index][0]);
    std::vector<float> scratch;
    const eval::kernel_args args{inputs, &n.parameters, results, &scratch, n.name};
    visit_op<void>(
        n.op,
        [&](const auto& op) {
          using Op = std::decay_t<decltype(op)>;
          if constexpr (eval::has_float_kernel<Op>) eval::float_kernel(op, args);
          else throw error(fmt::format("node {}: {} cannot be evaluated at import", n.name, Op::name));
        },
        [&](const any_op& op) { eval::run_user_kernel(op, args); });
    const std::string name = n.name;
    graph_.erase(id);
    const node_id folded = graph_.add(name, op::constant{.shape = results[0].shape()});
    graph_.set_parameter(folded, "value", std::move(results[0]));
    record_shapes(folded);
    return folded;
  }

  std::string next_name() {
    const std::string base = names_used_ == 0 ? base_name_ : fmt::format("{}_{}", base_name_, names_used_);
    ++names_used_;
    return unique_name(base);
  }
  std::string unique_name(const std::string& base) const {
    if (!graph_.contains(base)) return base;
    for (int i = 1;; ++i) {
      std::string candidate = fmt::format("{}_{}", base, i);
      if (!graph_.contains(candidate)) return candidate;
    }
  }

  const ::onnx::ModelProto& model_;
  std::string source_;
  const import_options& options_;
  std::int64_t opset_ = 0;
  graph graph_;
  std::vector<shape_list> shapes_;                                           // by node_id index
  std::unordered_map<std::string, value_ref> values_;                        // by ONNX value name
  std::unordered_map<std::uint32_t, std::vector<std::int64_t>> exact_integers_;  // constants stored as integers
  std::vector<std::pair<std::string, node_id>> placeholder_names_;
  // Named symbolic dimensions ("batch") → the size the data gives and the input that gave it.
  std::unordered_map<std::string, std::pair<std::int64_t, std::string>> symbol_sizes_;
  std::vector<symbolic_dimension> placeholders_;  // import_options::symbolic_placeholder's
  std::unordered_set<std::string> read_later_;  // every value some node or graph output reads
  const ::onnx::NodeProto* node_ = nullptr;
  std::string base_name_;
  int names_used_ = 0;
};

}  // namespace detail
}  // namespace mase::onnx
