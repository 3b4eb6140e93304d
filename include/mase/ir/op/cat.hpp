#pragma once
// torch.cat(tensors, dim): joins the inputs along dim; every other dimension must agree. As in
// PyTorch, an input of shape [0] (the legacy empty tensor) is skipped whatever the others' rank,
// and when every input is one the result is [0] (dim is not checked then, as in PyTorch).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct cat {
  std::int64_t dim = 0;

  static constexpr std::string_view name = "cat";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  // Quantized, every input takes data_in's format and the result keeps it: hardware joins codes
  // of one format (a class token before the patch embeddings, branches joined along channels).
  static constexpr quantizable quantization{};
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr hardware_mapping hardware{.module = "mase_cat", .constant_operands = true};
  static constexpr arity inputs{1, arity::unbounded};
  static constexpr auto attributes() { return attribute_list{attribute("dim", &cat::dim)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    constexpr auto legacy_empty = [](const shape& s) { return s.size() == 1 && s[0] == 0; };
    const shape* first = nullptr;
    for (const shape& s : in)
      if (!legacy_empty(s)) {
        first = &s;
        break;
      }
    if (first == nullptr) return shape_ok(shape{0});
    const int rank = first->size();
    if (rank == 0) return shape_error("cat: zero-dimensional inputs cannot be concatenated");
    const int d = shape_rules::normalize_dim(dim, rank);
    if (d < 0) return shape_error("cat: dim is out of range for the inputs");
    shape out = *first;
    out[d] = 0;
    for (const shape& s : in) {
      if (legacy_empty(s)) continue;
      if (s.size() != rank) return shape_error("cat: the inputs differ in rank");
      for (int i = 0; i < rank; ++i)
        if (i != d && s[i] != out[i]) return shape_error("cat: the inputs differ in a dimension other than dim");
      if (__builtin_add_overflow(out[d], s[d], &out[d]))
        return shape_error("cat: the joined dimension overflows 64 bits");
    }
    return shape_ok(out);
  }
  constexpr bool operator==(const cat&) const = default;
};

}  // namespace mase::op
