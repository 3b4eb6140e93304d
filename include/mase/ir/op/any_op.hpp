#pragma once
// any_op: a graph node's op, of any type that satisfies mase::op_type: one of mase's built-in
// ops or a user's own. It holds the op by value (immutable, shared between copies of a graph)
// behind a small interface that the type fills in where the op is constructed, so a translation
// unit compiles the code of the ops it builds and no other (a std::variant of the whole
// vocabulary compiled every op's code in every unit).
//
// Facets that live above the IR (the evaluator's float kernel, …) are found two ways: for a
// built-in op, by overload on its type in the layer that defines them (eval/kernels/*.hpp); for a
// user's op, as members of its type, which the interface below reaches:
//
//   struct my_act {                       // the op_type contract (op/op_base.hpp), and
//     …
//     // optional: its float kernel (eval/kernel.hpp)
//     void evaluate(const mase::eval::kernel_args& args) const;
//     // optional: its integer rule for the bit-exact evaluator (eval/bit_exact.hpp), none when
//     // the node's formats have no integer semantics
//     std::optional<mase::eval::bit_exact_kernel> bit_exact(const mase::node& n) const;
//     // optional: the Verilog parameters of its hardware component beyond the streams' formats
//     // and lanes (pass/add_hardware_metadata.hpp)
//     void hardware_parameters(const mase::node& n, mase::hardware_meta& h) const;
//     // optional, for a unary function: its exact value in double; the bit-exact evaluator then
//     // tabulates it over every input code, as mase's own activations, and mase_lut serves it
//     double scalar_function(double x) const;
//     // optional, for an op that computes what op::linear computes (y = x·Wᵀ + b over the last
//     // dimension, from its "weight" [out, in] and "bias" [out] parameters): that layer; the
//     // bit-exact evaluator lowers it as a linear and mase_linear serves it
//     mase::op::linear linear_form() const;
//   };
//
// The facets declared in the IR (category, work, quantization, result format, hardware;
// op/op_base.hpp) are reached the same way for every op, through the interface.
//
// docs/extending.md shows a user's op end to end.

#include <mase/core/ordered_map.hpp>
#include <mase/ir/op/linear.hpp>
#include <mase/ir/op/op_base.hpp>

#include <memory>
#include <concepts>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

namespace mase {

// The facets' types, declared where they are defined (a user's op that has the facet includes it).
namespace eval {
struct kernel_args;
struct bit_exact_kernel;
}  // namespace eval
struct node;
struct hardware_meta;

// A value unique to each op type, equal across translation units (the address of an inline
// variable), so that telling types apart needs no RTTI.
using op_type_id = const void*;
namespace detail {
template <class Op>
struct op_identity {
  static constexpr char tag = 0;
};
template <class Op>
constexpr bool op_takes_all_results() {
  if constexpr (requires { Op::takes_all_results; }) return Op::takes_all_results;
  else return false;
}
}  // namespace detail
template <class Op>
constexpr op_type_id op_type_id_of() noexcept {
  return &detail::op_identity<Op>::tag;
}

// The position of Op in mase's built-in vocabulary (ir/ops.hpp), or -1 for a user's op; defined
// there, after the list.
template <class Op>
constexpr int builtin_op_index() noexcept;

template <class Op>
concept user_op_with_kernel = requires(const Op& op, const eval::kernel_args& args) { op.evaluate(args); };
template <class Op>
concept user_op_with_bit_exact = requires(const Op& op, const node& n) { op.bit_exact(n); };
template <class Op>
concept user_op_with_hardware_parameters = requires(const Op& op, const node& n, hardware_meta& h) {
  op.hardware_parameters(n, h);
};
template <class Op>
concept user_op_with_scalar_function = requires(const Op& op, double x) {
  { op.scalar_function(x) } -> std::convertible_to<double>;
};
template <class Op>
concept user_op_with_linear_form = requires(const Op& op) {
  { op.linear_form() } -> std::convertible_to<op::linear>;
};

class any_op {
  struct concept_base {
    virtual ~concept_base() = default;
    virtual op_type_id type() const noexcept = 0;
    virtual int builtin_index() const noexcept = 0;
    virtual std::string_view name() const noexcept = 0;
    virtual node_kind kind() const noexcept = 0;
    virtual arity inputs() const noexcept = 0;
    virtual bool takes_all_results() const noexcept = 0;
    virtual parameter_list parameters() const = 0;
    virtual shape_result infer_shapes(std::span<const shape> inputs) const = 0;
    virtual ordered_map<attribute_value> attributes() const = 0;
    virtual bool equals(const concept_base& other) const = 0;
    virtual bool evaluate(const eval::kernel_args& args) const = 0;
    virtual std::shared_ptr<const eval::bit_exact_kernel> bit_exact(const node& n) const = 0;
    virtual bool hardware_parameters(const node& n, hardware_meta& h) const = 0;
    virtual bool has_scalar_function() const noexcept = 0;
    virtual double scalar_function(double x) const = 0;
    virtual std::optional<op::linear> linear_form() const = 0;
    virtual op_category category() const noexcept = 0;
    virtual std::optional<op_work> work(std::span<const shape> inputs, std::span<const shape> results) const = 0;
    virtual const quantizable* quantization() const noexcept = 0;
    virtual result_format_rule result_format() const noexcept = 0;
    virtual const hardware_mapping* hardware() const noexcept = 0;
    virtual const void* address() const noexcept = 0;
  };

  template <class Op>
  struct model final : concept_base {
    Op op;
    explicit model(Op o) : op(std::move(o)) {}
    op_type_id type() const noexcept override { return op_type_id_of<Op>(); }
    int builtin_index() const noexcept override { return builtin_op_index<Op>(); }
    std::string_view name() const noexcept override { return Op::name; }
    node_kind kind() const noexcept override { return Op::kind::value; }
    arity inputs() const noexcept override { return Op::inputs; }
    bool takes_all_results() const noexcept override { return detail::op_takes_all_results<Op>(); }
    parameter_list parameters() const override { return parameters_of(op); }
    shape_result infer_shapes(std::span<const shape> in) const override { return op.infer_shapes(in); }
    ordered_map<attribute_value> attributes() const override {
      ordered_map<attribute_value> out;
      for_each_attribute(op, [&](std::string_view n, const auto& v) {
        out[n] = attribute_value(std::in_place_type<std::decay_t<decltype(v)>>, v);
      });
      return out;
    }
    bool equals(const concept_base& other) const override {
      return other.type() == type() && static_cast<const model&>(other).op == op;
    }
    bool evaluate(const eval::kernel_args& args) const override {
      if constexpr (user_op_with_kernel<Op>) {
        op.evaluate(args);
        return true;
      } else {
        (void)args;
        return false;
      }
    }
    std::shared_ptr<const eval::bit_exact_kernel> bit_exact(const node& n) const override {
      if constexpr (user_op_with_bit_exact<Op>) {
        auto kernel = op.bit_exact(n);  // an optional kernel, whose type the op's header completes
        if (!kernel) return nullptr;
        return std::make_shared<const std::remove_cvref_t<decltype(*kernel)>>(std::move(*kernel));
      } else {
        (void)n;
        return nullptr;
      }
    }
    bool hardware_parameters(const node& n, hardware_meta& h) const override {
      if constexpr (user_op_with_hardware_parameters<Op>) {
        op.hardware_parameters(n, h);
        return true;
      } else {
        (void)n, (void)h;
        return false;
      }
    }
    bool has_scalar_function() const noexcept override { return user_op_with_scalar_function<Op>; }
    double scalar_function(double x) const override {
      if constexpr (user_op_with_scalar_function<Op>) return static_cast<double>(op.scalar_function(x));
      else return (void)x, 0.0;
    }
    std::optional<op::linear> linear_form() const override {
      if constexpr (user_op_with_linear_form<Op>) return op.linear_form();
      else return std::nullopt;
    }
    op_category category() const noexcept override { return category_of<Op>(); }
    std::optional<op_work> work(std::span<const shape> in, std::span<const shape> results) const override {
      return work_of(op, in, results);
    }
    const quantizable* quantization() const noexcept override { return quantization_of<Op>(); }
    result_format_rule result_format() const noexcept override { return result_format_of<Op>(); }
    const hardware_mapping* hardware() const noexcept override { return hardware_of<Op>(); }
    const void* address() const noexcept override { return &op; }
  };

public:
  // An input placeholder, as a default-constructed std::variant of the vocabulary held.
  any_op();

  template <op_type Op>
    requires(!std::is_same_v<std::remove_cvref_t<Op>, any_op>)
  any_op(Op op) : self_(std::make_shared<const model<Op>>(std::move(op))) {}  // NOLINT: implicit on purpose

  std::string_view name() const noexcept { return self_->name(); }
  node_kind kind() const noexcept { return self_->kind(); }
  arity inputs() const noexcept { return self_->inputs(); }
  // Whether the op reads every result of its input (getitem) rather than the first.
  bool takes_all_results() const noexcept { return self_->takes_all_results(); }
  parameter_list parameters() const { return self_->parameters(); }
  shape_result infer_shapes(std::span<const shape> in) const { return self_->infer_shapes(in); }
  // The attributes by name, in declaration order.
  ordered_map<attribute_value> attributes() const { return self_->attributes(); }
  // Runs the op's own float kernel (a user's op with an evaluate member); false if it has none.
  bool evaluate(const eval::kernel_args& args) const { return self_->evaluate(args); }
  // The op's own bit-exact kernel for the node (a user's op with a bit_exact member); nullptr
  // when it has no rule, or none for the node's formats.
  std::shared_ptr<const eval::bit_exact_kernel> bit_exact(const node& n) const { return self_->bit_exact(n); }
  // Adds the op's own component parameters (a user's op with a hardware_parameters member) to
  // `h`; false if it has none.
  bool hardware_parameters(const node& n, hardware_meta& h) const { return self_->hardware_parameters(n, h); }
  // Whether the op is a user's unary function with a scalar_function member, and its value.
  bool has_scalar_function() const noexcept { return self_->has_scalar_function(); }
  double scalar_function(double x) const { return self_->scalar_function(x); }
  // The linear layer a user's op with a linear_form member computes; none for any other op.
  std::optional<op::linear> linear_form() const { return self_->linear_form(); }
  op_category category() const noexcept { return self_->category(); }
  // The arithmetic of one forward and one backward pass: the op's own rule or its category's
  // default; nothing when the op has neither.
  std::optional<op_work> work(std::span<const shape> inputs, std::span<const shape> results) const {
    return self_->work(inputs, results);
  }
  // How the quantize pass quantizes it; nullptr when it leaves the op alone.
  const quantizable* quantization() const noexcept { return self_->quantization(); }
  // How its exact fixed-point result format follows from its operands' (none: it has none).
  result_format_rule result_format() const noexcept { return self_->result_format(); }
  // Its hardware component; nullptr when it has none.
  const hardware_mapping* hardware() const noexcept { return self_->hardware(); }

  op_type_id type() const noexcept { return self_->type(); }
  // The op's position in mase's built-in vocabulary, -1 for a user's op.
  int builtin_index() const noexcept { return self_->builtin_index(); }
  template <class Op>
  bool is() const noexcept {
    return self_->type() == op_type_id_of<Op>();
  }
  template <class Op>
  const Op* get_if() const noexcept {
    return is<Op>() ? static_cast<const Op*>(self_->address()) : nullptr;
  }

  friend bool operator==(const any_op& a, const any_op& b) { return a.self_ == b.self_ || a.self_->equals(*b.self_); }

private:
  std::shared_ptr<const concept_base> self_;
};

// The linear layer an op computes: op::linear itself, or a user's op's linear_form.
inline std::optional<op::linear> linear_form_of(const any_op& op) {
  if (const op::linear* l = op.get_if<op::linear>()) return *l;
  return op.linear_form();
}

// The former name of the node's op type.
using op_variant = any_op;

}  // namespace mase
