#pragma once
// torch.index_select(x, dim, index), generalised to any index rank as ONNX's Gather: the result is
// x.shape[:dim] + index.shape + x.shape[dim+1:], and result[i…, j…, k…] = x[i…, index[j…], k…].
// For a 1-D index this is torch.index_select; for an index of another shape it equals
// torch.index_select(x, dim, index.flatten()) reshaped. The index is a float tensor holding whole
// numbers; as in ONNX, a negative one counts from the end (-1 is the last), and one outside
// [-size, size) is an error naming the node (reported by the kernel, which sees the values).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct index_select {
  std::int64_t dim = 0;

  static constexpr std::string_view name = "index_select";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  // By constant indices along a dimension after the batch: a gather of each sample (the [CLS] row).
  static constexpr hardware_mapping hardware{"mase_permute", 1};
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr arity inputs{2, 2};
  static constexpr auto attributes() { return attribute_list{attribute("dim", &index_select::dim)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    const shape& index = in[1];
    if (x.empty()) return shape_error("index_select: a zero-dimensional input has no dimension to select from");
    const int d = shape_rules::normalize_dim(dim, x.size());
    if (d < 0) return shape_error("index_select: dim is out of range for the input");
    if (x.size() - 1 + index.size() > shape::max_rank)
      return shape_error("index_select: the result would have more than 8 dimensions");
    if (x[d] == 0 && index.numel() > 0)
      return shape_error("index_select: cannot select from an empty dimension");
    shape out;
    for (int i = 0; i < d; ++i) out.push_back(x[i]);
    for (std::int64_t n : index) out.push_back(n);
    for (int i = d + 1; i < x.size(); ++i) out.push_back(x[i]);
    return shape_ok(out);
  }
  constexpr bool operator==(const index_select&) const = default;
};

}  // namespace mase::op
