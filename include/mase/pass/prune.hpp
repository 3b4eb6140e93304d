#pragma once
// prune: MASE's prune_transform_pass (transforms/pruning, reference §2.6) for weights.
//
//   auto info = mase::run(g, mase::prune({.weight = {.scope = prune_scope::local,
//                                                    .method = prune_method::l1_norm,
//                                                    .sparsity = 0.5}}))
//                   .get<mase::prune_info>();
//
// Targets: every linear, conv1d and conv2d node (MASE: its PRUNEABLE_OPS). For each a mask is
// computed and applied to the weight at once, weight = mask · W (what MASE's FakeSparseWeight
// parametrization computes on every forward, and what prune_detach_hook makes permanent), so the
// evaluator, the quantizer and the Verilog emitter all see the pruned weights.
// - random: an element is pruned when a uniform draw in [0, 1) is below the sparsity (MASE:
//   `mask[rand(shape) < sparsity] = False`), so the achieved sparsity is near, not exactly, the
//   target. The draws come from splitmix64 seeded by options.seed and the node's name: the same
//   seed gives the same masks on every machine, and a node's mask does not depend on the others.
// - l1-norm, local: threshold = torch.quantile(|W|, sparsity) (linear interpolation, computed in
//   float32 as torch computes it for a float tensor), mask = |W| > threshold. So with n distinct
//   magnitudes, floor(sparsity·(n−1)) + 1 are pruned, and magnitudes equal to the threshold are
//   pruned too (a tensor of equal weights is pruned entirely).
// - l1-norm, global: one threshold over the magnitudes of every targeted weight together; random
//   with global scope is random with the one sparsity, as in MASE.
// - sparsity 0 keeps everything (MASE's ranking functions assume sparsity > 0 because that mask
//   is known beforehand; l1-norm at 0 would otherwise prune the smallest magnitude).
// - local scope may give per-node sparsities (`per_node`, by node name); nodes not listed use
//   `sparsity`. Global scope takes one sparsity (MASE: "Layer-wise budgets only possible with a
//   local scope").
// - granularity channel is an error, as in MASE, whose criteria maps hold only elementwise.
//
// Reporting: the info holds, per node, the mask, the threshold (l1-norm), the count pruned and
// the achieved sparsity (MASE's add_pruning_metadata: 1 − mask.sum / numel). The node's software
// metadata records it too, as software.args["weight"].stat["pruning"] = {sparsity, target}
// (MASE's software.args.weight.sparsity), so a saved graph still says how it was pruned.
//
// Activations are not pruned: MASE prunes them in a forward pre-hook that computes a new mask
// from each live input on every call (a fresh random draw or the input's own quantile), which is
// not a transformation of the graph and which the evaluator does not run. An activation config
// with a non-zero sparsity is therefore an error saying so, rather than silently ignored; its
// other fields are validated as MASE validates them.
//
// Pruning changes weights, so it invalidates profiled statistics; formats chosen by an earlier
// quantize stay valid (MASE's CompressionPipeline quantizes, then prunes).

#include <mase/core/compiled.hpp>
#include <mase/pass/pipeline.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

enum class prune_scope : std::uint8_t { local, global };
enum class prune_granularity : std::uint8_t { elementwise, channel };
enum class prune_method : std::uint8_t { random, l1_norm };

// MASE's spellings, as its configs write them.
inline constexpr std::array<std::string_view, 2> prune_scope_names{"local", "global"};
inline constexpr std::array<std::string_view, 2> prune_granularity_names{"elementwise", "channel"};
inline constexpr std::array<std::string_view, 2> prune_method_names{"random", "l1-norm"};

constexpr std::string_view to_string(prune_scope s) noexcept { return prune_scope_names[static_cast<std::size_t>(s)]; }
constexpr std::string_view to_string(prune_granularity g) noexcept {
  return prune_granularity_names[static_cast<std::size_t>(g)];
}
constexpr std::string_view to_string(prune_method m) noexcept { return prune_method_names[static_cast<std::size_t>(m)]; }

// MASE's spellings read back; an unknown one is an error that lists the choices.
MASE_COMPILED_INLINE prune_scope prune_scope_from_string(std::string_view text);
MASE_COMPILED_INLINE prune_granularity prune_granularity_from_string(std::string_view text);
MASE_COMPILED_INLINE prune_method prune_method_from_string(std::string_view text);

// One of MASE's two configs ("weight", "activation"), with MASE's defaults.
struct prune_config {
  prune_scope scope = prune_scope::local;
  prune_granularity granularity = prune_granularity::elementwise;
  prune_method method = prune_method::random;
  double sparsity = 0.0;          // the fraction to prune, in [0, 1]
  ordered_map<double> per_node{};  // local scope only: node name -> sparsity, overriding `sparsity`
};

struct prune_options {
  // Default member initializers let designated initializers leave fields out without GCC's
  // -Wmissing-field-initializers.
  prune_config weight{};
  prune_config activation{};  // must prune nothing (see the top of this file)
  std::uint64_t seed = 0;   // for method random
};

// What pruning did to one node's weight.
struct pruned_weight {
  std::string node;
  double target_sparsity = 0.0;
  std::int64_t pruned = 0;          // elements the mask zeroes
  std::int64_t numel = 0;
  std::optional<float> threshold;   // l1-norm: magnitudes at or below it were pruned
  tensor mask;                      // 1 kept, 0 pruned; the weight's shape

  // MASE's weight sparsity: 1 − mask.sum / numel.
  double sparsity() const noexcept { return numel == 0 ? 0.0 : static_cast<double>(pruned) / static_cast<double>(numel); }
};

struct prune_info {
  std::vector<pruned_weight> weights;  // every targeted node, in graph order

  const pruned_weight& at(std::string_view node) const {
    for (const pruned_weight& w : weights)
      if (w.node == node) return w;
    throw error(fmt::format("prune_info: node {} was not pruned (only linear, conv1d and conv2d nodes are)", node));
  }
  // Over every targeted weight together.
  double sparsity() const noexcept {
    std::int64_t pruned = 0;
    std::int64_t numel = 0;
    for (const pruned_weight& w : weights) {
      pruned += w.pruned;
      numel += w.numel;
    }
    return numel == 0 ? 0.0 : static_cast<double>(pruned) / static_cast<double>(numel);
  }
};

// Prunes the weights of every linear, conv1d and conv2d node (see the top of this file).
MASE_COMPILED_INLINE prune_info prune_weights(graph& g, const prune_options& options);

struct prune_pass {
  using needs = facts<>;
  using provides = facts<>;
  using invalidates = facts<fact::statistics>;

  prune_options options;

  prune_info run(graph& g) const { return prune_weights(g, options); }
};

// The pass with its options: g | prune({.weight = {…}, .seed = 1}).
inline prune_pass prune(prune_options options) { return prune_pass{std::move(options)}; }

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/prune_definitions.hpp>
#endif
