#pragma once
// torch.mean(x, dim, keepdim): the average over the dimensions in `dim` (every dimension when
// `dim` is empty); keepdim keeps them as size 1.

#include <mase/ir/op/shape_rules.hpp>

#include <array>

namespace mase::op {

struct mean {
  dims dim{};
  bool keepdim = false;

  static constexpr std::string_view name = "mean";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::reduction;
  static constexpr lowering_kind integer_rule = lowering_kind::mean;
  // Not in MASE's QUANTIZEABLE_OP; quantizable here (data_in, data_out) for its integer rule
  // (eval/mean_rule.hpp). Hardware over trailing dimensions only (trailing_count); add_hardware_metadata
  // refuses the others.
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_mean"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("dim", &mean::dim), attribute("keepdim", &mean::keepdim)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    return shape_rules::reduction(in[0], dim, keepdim,
                                  {.out_of_range = "mean: a dim is out of range for the input",
                                   .repeated = "mean: a dim appears more than once"});
  }
  // How many trailing dimensions of a rank-`rank` input `dim` names: every one when `dim` is empty,
  // 0 when `dim` names a dimension outside the trailing block it spans (or repeats one). The one
  // rule for "a mean over the last k dimensions": layer norm's pattern and global average pooling.
  constexpr int trailing_dims(int rank) const noexcept {
    if (dim.empty()) return rank;
    const int reduced = dim.size();
    if (reduced > rank) return 0;
    std::array<bool, shape::max_rank> seen{};
    for (std::int64_t d : dim) {
      const int n = shape_rules::normalize_dim(d, rank);
      if (n < rank - reduced || seen[static_cast<std::size_t>(n)]) return 0;  // out of range is negative
      seen[static_cast<std::size_t>(n)] = true;
    }
    return reduced;
  }
  // How many values each result averages when `dim` names the trailing dimensions of an input of
  // shape `in`, the first excepted (global average pooling: [N, C, H, W] over {2, 3}); 0
  // otherwise. Each result's values are then consecutive, in memory and in a hardware stream,
  // which is what the bit-exact rule and the mase_mean component take.
  constexpr std::int64_t trailing_count(const shape& in) const noexcept {
    const int rank = in.size();
    const int reduced = trailing_dims(rank);
    if (reduced == 0 || reduced >= rank) return 0;
    std::int64_t count = 1;
    for (int d = rank - reduced; d < rank; ++d) count *= in[d];
    return count;
  }
  constexpr bool operator==(const mean&) const = default;
};

}  // namespace mase::op
