#pragma once
// torch.mean(x, dim, keepdim): the average over the dimensions in `dim` (every dimension when
// `dim` is empty); keepdim keeps them as size 1.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct mean {
  dims dim{};
  bool keepdim = false;

  static constexpr std::string_view name = "mean";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::reduction;
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
  // How many values each result averages when `dim` names the trailing dimensions of an input of
  // shape `in`, the first excepted (global average pooling: [N, C, H, W] over {2, 3}); 0
  // otherwise. Each result's values are then consecutive, in memory and in a hardware stream,
  // which is what the bit-exact rule and the mase_mean component take.
  constexpr std::int64_t trailing_count(const shape& in) const noexcept {
    const int rank = in.size();
    const int reduced = dim.size();
    if (reduced == 0 || reduced >= rank) return 0;
    std::int64_t count = 1;
    for (int i = 0; i < reduced; ++i) {
      const std::int64_t d = dim[i] < 0 ? dim[i] + rank : dim[i];
      if (d < rank - reduced || d >= rank) return 0;  // the shape rule has refused repeats
      count *= in[static_cast<int>(d)];
    }
    return count;
  }
  constexpr bool operator==(const mean&) const = default;
};

}  // namespace mase::op
