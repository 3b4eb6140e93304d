#pragma once
// Table lookup (torch.nn.Embedding / F.embedding): integer indices of any shape pick rows of
// weight [num_embeddings, embedding_dim], so the result has the indices' shape plus
// [embedding_dim]. MASE types it implicit_func (data movement, no arithmetic). padding_idx is the
// row that gets no gradient, -1 for none; PyTorch's negative spelling (from the end) is
// normalised by nn.Embedding itself, so an importer stores the row number. max_norm (which
// rescales looked-up rows) is not represented.

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct embedding {
  std::int64_t num_embeddings = 0;
  std::int64_t embedding_dim = 0;
  std::int64_t padding_idx = -1;

  static constexpr std::string_view name = "embedding";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr arity inputs{1, 1};
  static constexpr quantizable quantization{.weight = operand_use::required, .data_in_0_is_row_index = true};
  static constexpr result_format_rule result_format = result_format_rule::same_as_weight;
  static constexpr hardware_mapping hardware{"mase_embedding"};
  static constexpr auto attributes() {
    return attribute_list{attribute("num_embeddings", &embedding::num_embeddings),
                      attribute("embedding_dim", &embedding::embedding_dim),
                      attribute("padding_idx", &embedding::padding_idx)};
  }

  constexpr parameter_list parameters() const { return {{"weight", {num_embeddings, embedding_dim}}}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (num_embeddings < 1 || embedding_dim < 1)
      return shape_error("embedding: num_embeddings and embedding_dim must be positive");
    if (padding_idx < -1 || padding_idx >= num_embeddings)
      return shape_error("embedding: padding_idx must be -1 (none) or a row index below num_embeddings");
    if (in[0].size() == shape::max_rank) return shape_error("embedding: the result would have too many dimensions");
    shape out = in[0];
    out.push_back(embedding_dim);
    return shape_ok(out);
  }
  constexpr bool operator==(const embedding&) const = default;
};

}  // namespace mase::op
