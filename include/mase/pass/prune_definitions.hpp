#pragma once
// prune's bodies (pass/prune.hpp declares them): inline in the header-only mode, compiled once
// in mase::mase (src/passes.cpp) otherwise.

#include <mase/core/suggest.hpp>
#include <mase/core/tensor_eigen.hpp>
#include <mase/pass/prune.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/prune.hpp> instead"
#endif

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

namespace detail {
template <class Enum, std::size_t N>
Enum parse_prune_choice(std::string_view field, std::string_view text, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<Enum>(i);
  std::string choices;
  for (std::string_view n : names) choices += fmt::format("{}\"{}\"", choices.empty() ? "" : ", ", n);
  std::string near = nearest_names(text, names);
  // MASE's docstring spells "l1" and "element": a prefix of a choice is a near miss too.
  for (std::string_view n : names)
    if (near.empty() && !text.empty() && n.starts_with(text)) near = std::string(n);
  throw error(fmt::format("prune: unknown {} \"{}\"{}; the choices are {}", field, text,
                          near.empty() ? std::string() : fmt::format(" (did you mean {}?)", near), choices));
}
}  // namespace detail

MASE_COMPILED_INLINE prune_scope prune_scope_from_string(std::string_view text) {
  return detail::parse_prune_choice<prune_scope>("scope", text, prune_scope_names);
}
MASE_COMPILED_INLINE prune_granularity prune_granularity_from_string(std::string_view text) {
  return detail::parse_prune_choice<prune_granularity>("granularity", text, prune_granularity_names);
}
MASE_COMPILED_INLINE prune_method prune_method_from_string(std::string_view text) {
  return detail::parse_prune_choice<prune_method>("method", text, prune_method_names);
}

namespace detail {

// torch.quantile(values, q) with linear interpolation, in float32 arithmetic as torch does it for
// a float tensor (rank = q·(n−1) in float, lerp as ATen's). Reorders `values`; none may be NaN.
inline float torch_quantile_inplace(std::span<float> values, double q) {
  if (values.empty()) return 0.0f;
  const float rank = static_cast<float>(q) * static_cast<float>(values.size() - 1);
  const auto below = static_cast<std::size_t>(rank);  // truncation, as toType(kLong)
  const auto above = static_cast<std::size_t>(std::ceil(rank));
  const float weight = rank - static_cast<float>(below);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(below), values.end());
  const float low = values[below];
  // After nth_element everything past `below` is at least `low`; the next order statistic is their minimum.
  const float high = above == below ? low : *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(below) + 1,
                                                              values.end());
  return std::abs(weight) < 0.5f ? low + weight * (high - low) : high - (high - low) * (1.0f - weight);
}

// splitmix64, identical on every platform (std's distributions are not).
struct prune_random {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 24 random bits (as torch.rand draws a float).
  float uniform() noexcept { return static_cast<float>(next() >> 40) * 0x1p-24f; }
};

// A node's own stream: FNV-1a of its name mixed with the seed.
inline prune_random prune_stream(std::uint64_t seed, std::string_view node_name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : node_name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  prune_random r{seed ^ h};
  r.next();
  return r;
}

inline bool is_prune_target(const node& n) { return n.is<op::linear>() || n.is<op::conv1d>() || n.is<op::conv2d>(); }

inline void check_sparsity(double s, std::string_view where) {
  require(s >= 0.0 && s <= 1.0, "prune: {} is {}; a sparsity is a fraction in [0, 1]", where, s);
}

inline void validate_prune_config(const prune_config& c, std::string_view which, const graph& g) {
  require(c.granularity == prune_granularity::elementwise,
          "prune: {}.granularity \"channel\" is not implemented (MASE implements only elementwise "
                      "pruning); use prune_granularity::elementwise",
                      which);
  check_sparsity(c.sparsity, fmt::format("{}.sparsity", which));
  if (c.per_node.empty()) return;
  require(c.scope == prune_scope::local,
          "prune: {}.per_node gives per-node sparsities, which only local scope can use; set "
                      "{}.scope to local or give one {}.sparsity",
                      which, which, which);
  for (const auto& [name, s] : c.per_node) {
    if (!g.contains(name)) {
      std::vector<std::string_view> targets;
      g.for_each_node([&](const node& n) {
        if (is_prune_target(n)) targets.push_back(n.name);
      });
      const std::string near = nearest_names(name, targets);
      throw error(fmt::format("prune: {}.per_node names node \"{}\", which is not in the graph{}", which, name,
                              near.empty() ? std::string() : fmt::format("; did you mean {}?", near)));
    }
    const node& n = g.at(name);
    require(is_prune_target(n), "prune: {}.per_node names node {}, a {}; only linear, conv1d and conv2d "
                                            "nodes are pruned",
                                            which, name, n.op_name());
    check_sparsity(s, fmt::format("{}.per_node[\"{}\"]", which, name));
  }
}

inline tensor& prune_weight_of(node& n) {
  const auto it = n.parameters.find("weight");
  if (it == n.parameters.end())
    throw error(fmt::format("prune: node {} ({}) has no weight set; set it with graph::set_parameter before pruning",
                            n.name, n.op_name()));
  return it->second;
}

inline void require_no_nan(const node& n, const tensor& w) {
  require(!w.array().isNaN().any(),
          "prune: node {}'s weight holds NaN, which l1-norm pruning cannot rank; fix the weights "
                      "(or use method random)",
                      n.name);
}

// The magnitudes of a weight, for the quantile (which reorders them).
inline std::vector<float> magnitudes(const tensor& w) {
  std::vector<float> m(w.size());
  Eigen::Map<Eigen::ArrayXf>(m.data(), static_cast<Eigen::Index>(m.size())) = w.array().abs();
  return m;
}

}  // namespace detail

// Prunes the weights of every linear, conv1d and conv2d node (see the top of this file).
MASE_COMPILED_INLINE prune_info prune_weights(graph& g, const prune_options& options) {
  detail::validate_prune_config(options.weight, "weight", g);
  detail::validate_prune_config(options.activation, "activation", g);
  const auto prunes = [](double s) { return s > 0.0; };
  bool activation_prunes = prunes(options.activation.sparsity);
  for (const auto& [name, s] : options.activation.per_node) activation_prunes = activation_prunes || prunes(s);
  require(!activation_prunes,
          "prune: activation pruning is not implemented: MASE masks each live input in a forward pre-hook on every "
          "call, which is not a graph transformation and which the evaluator does not run; set activation.sparsity "
          "(and any activation.per_node entry) to 0 to prune weights only");

  const prune_config& c = options.weight;
  const auto target_of = [&](const node& n) {
    const auto listed = c.per_node.find(n.name);
    return listed != c.per_node.end() ? listed->second : c.sparsity;
  };
  // Every check before any weight changes, so an error leaves the graph as it was.
  std::vector<node_id> targets;
  for (node_id id : g.order()) {
    node& n = g[id];
    if (!detail::is_prune_target(n)) continue;
    const tensor& w = detail::prune_weight_of(n);
    if (c.method == prune_method::l1_norm && target_of(n) > 0.0)
      detail::require_no_nan(n, w);
    targets.push_back(id);
  }

  std::optional<float> global_threshold;
  if (c.scope == prune_scope::global && c.method == prune_method::l1_norm && c.sparsity > 0.0) {
    std::vector<float> all;
    for (node_id id : targets) {
      const tensor& w = detail::prune_weight_of(g[id]);
      const std::size_t at = all.size();
      all.resize(at + w.size());
      Eigen::Map<Eigen::ArrayXf>(all.data() + at, static_cast<Eigen::Index>(w.size())) = w.array().abs();
    }
    global_threshold = detail::torch_quantile_inplace(all, c.sparsity);
  }

  prune_info info;
  for (node_id id : targets) {
    node& n = g[id];
    tensor& w = detail::prune_weight_of(n);
    const double target = target_of(n);

    pruned_weight record{.node = n.name,
                         .target_sparsity = target,
                         .pruned = 0,
                         .numel = static_cast<std::int64_t>(w.size()),
                         .threshold = std::nullopt,
                         .mask = tensor(w.shape())};
    float* mask = record.mask.data();
    if (target <= 0.0) {
      record.mask.array().setOnes();
    } else if (c.method == prune_method::random) {
      detail::prune_random stream = detail::prune_stream(options.seed, n.name);
      for (std::size_t i = 0; i < w.size(); ++i) mask[i] = static_cast<double>(stream.uniform()) < target ? 0.0f : 1.0f;
    } else {
      std::vector<float> m = global_threshold ? std::vector<float>{} : detail::magnitudes(w);
      const float threshold = global_threshold ? *global_threshold : detail::torch_quantile_inplace(m, target);
      record.threshold = threshold;
      record.mask.array() = (w.array().abs() > threshold).cast<float>();
    }
    record.pruned = static_cast<std::int64_t>((record.mask.array() == 0.0f).count());
    w.array() *= record.mask.array();  // mask · W, as torch: a pruned negative weight becomes -0

    // A recorded value must be the weight now held.
    if (const auto arg = n.meta.common.args.find("weight"); arg != n.meta.common.args.end())
      if (auto* t = std::get_if<tensor_meta>(&arg->second); t != nullptr && t->value) t->value = w;
    statistic pruning;
    pruning.insert_or_assign("sparsity", stat_value(record.sparsity()));
    pruning.insert_or_assign("target", stat_value(target));
    n.meta.software.args["weight"].stat.insert_or_assign("pruning", std::move(pruning));
    info.weights.push_back(std::move(record));
  }
  return info;
}

}  // namespace mase
