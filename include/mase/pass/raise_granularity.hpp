#pragma once
// raise_granularity: rewrites the fine-grained graphs ONNX exporters write into the coarse ops
// the hardware has, in place, until no pattern is left (a fixed point). Patterns, as the ONNX
// importer maps them (one mase node per ONNX node; constants are op::constant nodes):
//
//   linear     matmul(x, constant W[K, N])                 → linear, weight Wᵀ [N, K], no bias
//              … then add(·, constant b) (either order)    → linear with bias b
//              (also a bias-less linear followed by such an add). b broadcasts over the last
//              dimension only: [N], [1, N], a scalar (expanded to [N]).
//   gelu       x·(1 + erf(x/√2))·½, its operand orders and associations: ((x·h)·½),
//              ((x·½)·h), (x·(h·½)), with x/√2 also written x·(1/√2) and ·½ also /2
//                                                          → gelu (erf form)
//   layer_norm m = mean(x, trailing dims, keepdim); d = x − m; v = mean(d² (pow 2 or d·d), same
//              dims, keepdim); y = d / sqrt(v + eps) [· gamma] [+ beta]
//                                                          → layer_norm over those dims, eps; the
//              gamma/beta constants broadcast into normalized_shape (a bias-less or non-affine
//              layer_norm followed by such a mul/add absorbs it too)
//   silu       x · sigmoid(x), either order                → silu
//   embedding  index_select(constant W [R, D], ids, dim 0)   → embedding(R, D), weight W (ids must
//              then be rows in [0, R), as nn.Embedding requires; ONNX's Gather also counts
//              negative ids from the end, which no nn.Embedding export produces)
//   attention  matmul(q, kᵀ) [scaled] → softmax(last dim) → matmul(·, v), kᵀ a permute or
//              transpose of k and the scale a scalar constant multiplying or dividing q or the
//              scores                                      → scaled_dot_product_attention(q, k, v)
//              with the product of the scales (1 when there is none). Its k is [..., S, E]: the
//              transpose that made kᵀ is dropped when it only swapped the last two dimensions,
//              otherwise its permutation is changed to leave them unswapped.
//
// A rewrite fires only when every intermediate result of the pattern is read by the pattern
// alone (the output node counts as a reader), its constants match, and the coarse op produces
// the shape the pattern produced: then nothing else can observe the difference. Scalar constants
// (√2, 1, ½, 2) match within a relative 1e-6: float32 rounding of the exact value is within
// 6e-8, and values computed in float (1/√2 as 1.0f / sqrtf(2)) within a few ulp, while
// truncations such as 1.4142 (1.5e-5 off) compute another function and are not matched.
//
// The new node takes the name of the pattern's first node in graph order (the matmul for a
// linear, the first mean for a layer_norm, …; for attention, the q·kᵀ matmul) and the place of
// its last node, whose readers it takes over. The pattern's nodes are erased, and so are the
// constants only they read. The info lists every rewrite, and the near misses (a pattern found
// but left alone) with the reason. Shapes come from the ops' rules from the placeholders'
// shapes, so the graph must be shape-consistent (a mase::error names the node where not).
//
// New nodes have no metadata: the pass invalidates every metadata fact; run it before
// init_metadata.

#include <mase/ir/graph.hpp>
#include <mase/ir/shape_inference.hpp>
#include <mase/pass/pipeline.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

struct raised_pattern {
  std::string pattern;                // "linear", "gelu", "layer_norm", "silu", "embedding", "scaled_dot_product_attention"
  std::string node;                   // the new node
  std::vector<std::string> replaced;  // the fine-grained nodes it replaced, in graph order
  std::string detail;                 // what was matched: bias, eps, scale, …
  friend bool operator==(const raised_pattern&, const raised_pattern&) = default;
};

struct raise_near_miss {
  std::string pattern;
  std::string node;    // where the pattern was found
  std::string reason;  // why it was left alone
  friend bool operator==(const raise_near_miss&, const raise_near_miss&) = default;
};

struct raise_granularity_info {
  std::vector<raised_pattern> raised;   // in the order rewritten
  std::vector<raise_near_miss> skipped;  // the near misses in the final graph
  std::size_t sweeps = 0;                // passes over the graph, the last one changing nothing

  std::size_t count(std::string_view pattern) const {
    return static_cast<std::size_t>(
        std::count_if(raised.begin(), raised.end(), [&](const raised_pattern& r) { return r.pattern == pattern; }));
  }
  friend bool operator==(const raise_granularity_info&, const raise_granularity_info&) = default;
};

namespace detail::raise {

// Relative tolerance for the scalar constants of a pattern (see the top of the file).
inline constexpr double constant_tolerance = 1e-6;

inline bool matches_constant(double value, double expected) {
  return std::abs(value - expected) <= constant_tolerance * std::abs(expected);
}

inline std::string format_value(double v) { return fmt::format("{:.9g}", v); }

// The shapes and readers of every node, rebuilt after each rewrite.
class view {
public:
  explicit view(const graph& g) : g_(&g) { rebuild(); }

  void rebuild() {
    shapes_.assign(g_->id_bound(), shape_list{});
    readers_.assign(g_->id_bound(), {});
    const auto results_of = [&](node_id id) -> const shape_list& { return shapes_[id.index]; };
    for (node_id id : g_->order()) {
      shapes_[id.index] = infer_node_shapes(*g_, id, results_of);
      for (node_id in : (*g_)[id].inputs) {
        auto& r = readers_[in.index];
        if (std::find(r.begin(), r.end(), id) == r.end()) r.push_back(id);
      }
    }
  }

  const shape& shape_of(node_id id) const { return shapes_[id.index][0]; }
  const std::vector<node_id>& readers(node_id id) const { return readers_[id.index]; }
  // The one node reading `id`, if exactly one does.
  std::optional<node_id> sole_reader(node_id id) const {
    const auto& r = readers(id);
    return r.size() == 1 ? std::optional<node_id>(r[0]) : std::nullopt;
  }
  bool read_only_by(node_id id, node_id reader) const {
    const auto& r = readers(id);
    return r.size() == 1 && r[0] == reader;
  }

  // A constant's value, when the node is a constant whose value is set.
  const tensor* constant(node_id id) const {
    const node& n = (*g_)[id];
    if (!n.is<op::constant>()) return nullptr;
    const auto it = n.parameters.find("value");
    return it == n.parameters.end() ? nullptr : &it->second;
  }
  // A one-element constant's value.
  std::optional<double> scalar(node_id id) const {
    const tensor* t = constant(id);
    if (t == nullptr || t->size() != 1) return std::nullopt;
    return static_cast<double>(t->data()[0]);
  }

  // The operand of binary node `n` other than `known` (`known` itself for n(known, known)).
  static std::optional<node_id> other_operand(const node& n, node_id known) {
    if (n.inputs.size() != 2) return std::nullopt;
    if (n.inputs[0] == known) return n.inputs[1];
    if (n.inputs[1] == known) return n.inputs[0];
    return std::nullopt;
  }

  // For mul(a, c) / mul(c, a) with c a scalar constant: a and c.
  std::optional<std::pair<node_id, double>> scaled_by(const node& n) const {
    if (!n.is<op::mul>()) return std::nullopt;
    if (const auto c = scalar(n.inputs[1])) return std::pair{n.inputs[0], *c};
    if (const auto c = scalar(n.inputs[0])) return std::pair{n.inputs[1], *c};
    return std::nullopt;
  }
  // For div(a, c) with c a scalar constant: a and c.
  std::optional<std::pair<node_id, double>> divided_by(const node& n) const {
    if (!n.is<op::div>()) return std::nullopt;
    if (const auto c = scalar(n.inputs[1])) return std::pair{n.inputs[0], *c};
    return std::nullopt;
  }
  // a·f for mul by f or div by 1/f: a and the factor f.
  std::optional<std::pair<node_id, double>> times_factor(const node& n) const {
    if (const auto m = scaled_by(n)) return m;
    if (const auto d = divided_by(n)) return std::pair{d->first, 1.0 / d->second};
    return std::nullopt;
  }

private:
  const graph* g_;
  std::vector<shape_list> shapes_;
  std::vector<std::vector<node_id>> readers_;
};

// `c` expanded to `target` when it broadcasts into it without enlarging a result of rank
// `result_rank` (right-aligned; c's dimensions are target's or 1, its extra leading ones are 1).
inline std::optional<tensor> broadcast_into(const tensor& c, const shape& target, int result_rank) {
  const shape& s = c.shape();
  if (s.size() > result_rank) return std::nullopt;
  const int extra = s.size() - target.size();
  for (int i = 0; i < s.size(); ++i) {
    const int t = i - extra;
    if (t < 0 ? s[i] != 1 : (s[i] != 1 && s[i] != target[t])) return std::nullopt;
  }
  tensor out(target);
  const std::int64_t count = target.numel();
  // Strides of c over target's dimensions (0 where c has size 1 or lacks the dimension).
  std::array<std::int64_t, shape::max_rank> stride{};
  std::int64_t step = 1;
  for (int t = target.size() - 1; t >= 0; --t) {
    const int i = t + extra;
    const std::int64_t size = i >= 0 ? s[i] : 1;
    stride[static_cast<std::size_t>(t)] = size == 1 ? 0 : step;
    step *= size;
  }
  for (std::int64_t flat = 0; flat < count; ++flat) {
    std::int64_t rest = flat, source = 0;
    for (int t = target.size() - 1; t >= 0; --t) {
      source += (rest % target[t]) * stride[static_cast<std::size_t>(t)];
      rest /= target[t];
    }
    out.data()[flat] = c.data()[source];
  }
  return out;
}

inline std::string name_list(const graph& g, const std::vector<node_id>& ids) {
  std::string out;
  for (node_id id : ids) out += fmt::format("{}{}", out.empty() ? "" : ", ", g[id].name);
  return out;
}

// A match, ready to commit: the new op on `inputs`, replacing `pattern` (whose last node in
// graph order produces the result the new node takes over).
struct rewrite {
  std::string pattern_name;
  any_op op;
  std::vector<node_id> inputs;
  std::vector<std::pair<std::string, tensor>> parameters;
  std::vector<node_id> pattern;
  std::string detail;
  std::optional<node_id> named_after = std::nullopt;  // the node whose name the new one takes; else the first
};

class raiser {
public:
  explicit raiser(graph& g) : g_(g), v_(g) {}

  raise_granularity_info run() {
    raise_granularity_info info;
    for (bool changed = true; changed;) {
      changed = false;
      ++info.sweeps;
      skipped_.clear();
      const std::vector<node_id> order(g_.order().begin(), g_.order().end());
      for (node_id id : order) {
        if (!g_.contains(id)) continue;
        std::optional<rewrite> r = match(id);
        if (!r) continue;
        if (std::optional<raised_pattern> done = commit(std::move(*r))) {
          info.raised.push_back(std::move(*done));
          v_.rebuild();
          changed = true;
        }
      }
    }
    info.skipped = std::move(skipped_);
    return info;
  }

private:
  std::optional<rewrite> match(node_id id) {
    const node& n = g_[id];
    if (n.is<op::matmul>()) return match_linear(id);
    if (n.is<op::linear>()) return match_linear_bias(id);
    if (n.is<op::erf>()) return match_gelu(id);
    if (n.is<op::mean>()) return match_layer_norm(id);
    if (n.is<op::layer_norm>()) return match_norm_affine(id);
    if (n.is<op::sigmoid>()) return match_silu(id);
    if (n.is<op::softmax>()) return match_attention(id);
    if (n.is<op::index_select>()) return match_embedding(id);
    return std::nullopt;
  }

  std::nullopt_t miss(std::string_view pattern, node_id at, std::string reason) {
    skipped_.push_back({std::string(pattern), g_[at].name, std::move(reason)});
    return std::nullopt;
  }

  // --- linear ---------------------------------------------------------------------------------

  // The bias add after a linear-like node `producer` with N outputs: the add, and b as [N].
  struct bias_add {
    node_id add;
    tensor bias;
    std::string constant;
  };
  std::optional<bias_add> find_bias(node_id producer, std::int64_t out_features, std::string& why_not) {
    const auto& readers = v_.readers(producer);
    for (node_id r : readers) {
      const node& add = g_[r];
      if (!add.is<op::add>()) continue;
      const auto other = view::other_operand(add, producer);
      const tensor* b = other ? v_.constant(*other) : nullptr;
      if (b == nullptr) continue;
      if (readers.size() != 1) {
        why_not = fmt::format("bias add {} not folded: {}'s result has {} readers ({})", add.name, g_[producer].name,
                              readers.size(), name_list(g_, readers));
        return std::nullopt;
      }
      std::optional<tensor> expanded = broadcast_into(*b, shape{out_features}, v_.shape_of(producer).size());
      if (!expanded) {
        why_not = fmt::format("bias add {} not folded: its constant {} has shape {}, which does not broadcast over "
                              "the last dimension ({}) alone",
                              add.name, g_[*other].name, to_string(b->shape()), out_features);
        return std::nullopt;
      }
      return bias_add{r, std::move(*expanded), g_[*other].name};
    }
    return std::nullopt;
  }

  std::optional<rewrite> match_linear(node_id id) {
    const node& mm = g_[id];
    const tensor* w = v_.constant(mm.inputs[1]);
    if (w == nullptr) return std::nullopt;  // a product of two activations
    if (w->rank() != 2)
      return miss("linear", id, fmt::format("the constant right operand {} has shape {}; a linear weight is 2-D",
                                            g_[mm.inputs[1]].name, to_string(w->shape())));
    const std::int64_t in = w->shape()[0], out = w->shape()[1];
    const node_id x = mm.inputs[0];
    if (v_.shape_of(x).empty() || v_.shape_of(x).back() != in)
      return miss("linear", id, fmt::format("the input {} has shape {}, whose last dimension is not {}", g_[x].name,
                                            to_string(v_.shape_of(x)), in));
    tensor weight(shape{out, in});
    for (std::int64_t k = 0; k < in; ++k)
      for (std::int64_t n = 0; n < out; ++n) weight.data()[n * in + k] = w->data()[k * out + n];
    rewrite r{.pattern_name = "linear", .op = op::linear{.in_features = in, .out_features = out, .bias = false},
              .inputs = {x}, .parameters = {}, .pattern = {id},
              .detail = fmt::format("weight {} [{}, {}] transposed", g_[mm.inputs[1]].name, in, out)};
    std::string why_not;
    if (std::optional<bias_add> b = find_bias(id, out, why_not)) {
      r.op = op::linear{.in_features = in, .out_features = out, .bias = true};
      r.parameters.emplace_back("bias", std::move(b->bias));
      r.pattern.push_back(b->add);
      r.detail += fmt::format(", bias {}", b->constant);
    }
    // A bias that could not be folded is reported by match_linear_bias on the new linear.
    r.parameters.emplace_back("weight", std::move(weight));
    return r;
  }

  std::optional<rewrite> match_linear_bias(node_id id) {
    const node& lin = g_[id];
    const op::linear& op = lin.as<op::linear>();
    if (op.bias) return std::nullopt;
    std::string why_not;
    std::optional<bias_add> b = find_bias(id, op.out_features, why_not);
    if (!b) return why_not.empty() ? std::nullopt : miss("linear", id, std::move(why_not));
    op::linear with_bias = op;
    with_bias.bias = true;
    return rewrite{.pattern_name = "linear", .op = with_bias, .inputs = {lin.inputs[0]},
                   .parameters = {{"weight", lin.parameters.at("weight")}, {"bias", std::move(b->bias)}},
                   .pattern = {id, b->add}, .detail = fmt::format("bias {} folded into {}", b->constant, lin.name)};
  }

  // --- gelu -----------------------------------------------------------------------------------

  // x·½ as mul by 0.5 or div by 2: x.
  std::optional<node_id> halved(const node& n) const {
    if (const auto m = v_.scaled_by(n); m && matches_constant(m->second, 0.5)) return m->first;
    if (const auto d = v_.divided_by(n); d && matches_constant(d->second, 2.0)) return d->first;
    return std::nullopt;
  }

  std::optional<rewrite> match_gelu(node_id erf_id) {
    const node& u = g_[g_[erf_id].inputs[0]];
    const node_id u_id = g_[erf_id].inputs[0];
    node_id x{};
    if (const auto d = v_.divided_by(u)) {
      if (!matches_constant(d->second, std::sqrt(2.0)))
        return miss("gelu", erf_id, fmt::format("erf's argument {} divides by {}, not √2", u.name, format_value(d->second)));
      x = d->first;
    } else if (const auto m = v_.scaled_by(u)) {
      if (!matches_constant(m->second, 1.0 / std::sqrt(2.0)))
        return miss("gelu", erf_id, fmt::format("erf's argument {} multiplies by {}, not 1/√2", u.name,
                                                format_value(m->second)));
      x = m->first;
    } else {
      return std::nullopt;
    }
    if (!v_.read_only_by(u_id, erf_id)) return miss("gelu", erf_id, readers_message(u_id));
    const auto h_id = v_.sole_reader(erf_id);
    if (!h_id) return v_.readers(erf_id).empty() ? std::nullopt : miss("gelu", erf_id, readers_message(erf_id));
    const node& h = g_[*h_id];
    const auto one = h.is<op::add>() ? view::other_operand(h, erf_id) : std::nullopt;
    const auto one_value = one ? v_.scalar(*one) : std::nullopt;
    if (!one_value) return std::nullopt;
    if (!matches_constant(*one_value, 1.0))
      return miss("gelu", erf_id, fmt::format("{} adds {} to erf, not 1", h.name, format_value(*one_value)));
    const auto r1_id = v_.sole_reader(*h_id);
    if (!r1_id) return v_.readers(*h_id).empty() ? std::nullopt : miss("gelu", erf_id, readers_message(*h_id));
    const node& r1 = g_[*r1_id];
    if (!r1.is<op::mul>()) return std::nullopt;
    const node_id other = *view::other_operand(r1, *h_id);
    std::vector<node_id> pattern{u_id, erf_id, *h_id, *r1_id};
    node_id tail = *r1_id;
    if (other == x) {  // (x·h)·½
      const auto r2_id = v_.sole_reader(*r1_id);
      if (!r2_id || halved(g_[*r2_id]) != std::optional<node_id>(*r1_id))
        return miss("gelu", erf_id, fmt::format("{} = x·(1 + erf) is not halved by its only reader", r1.name));
      tail = *r2_id;
    } else if (halved(g_[other]) == std::optional<node_id>(x)) {  // (x·½)·h
      if (!v_.read_only_by(other, *r1_id)) return miss("gelu", erf_id, readers_message(other));
      pattern.push_back(other);
    } else if (const auto half = v_.scalar(other); half && matches_constant(*half, 0.5)) {  // x·(h·½)
      const auto r2_id = v_.sole_reader(*r1_id);
      if (!r2_id || !g_[*r2_id].is<op::mul>() || view::other_operand(g_[*r2_id], *r1_id) != std::optional<node_id>(x))
        return miss("gelu", erf_id, fmt::format("{} = ½(1 + erf) is not multiplied by x by its only reader", r1.name));
      tail = *r2_id;
    } else {
      return miss("gelu", erf_id, fmt::format("{} multiplies 1 + erf by {}, not by x or x·½", r1.name, g_[other].name));
    }
    if (tail != *r1_id) pattern.push_back(tail);
    return rewrite{.pattern_name = "gelu", .op = op::gelu{}, .inputs = {x}, .parameters = {},
                   .pattern = std::move(pattern), .detail = fmt::format("of {}", g_[x].name)};
  }

  std::string readers_message(node_id id) const {
    return fmt::format("{}'s result has {} readers ({}); the pattern must be its only reader", g_[id].name,
                       v_.readers(id).size(), name_list(g_, v_.readers(id)));
  }

  // --- layer_norm -----------------------------------------------------------------------------

  // The trailing dimensions a mean with keepdim reduces ({} when they are not trailing).
  static std::optional<int> trailing_reduction(const op::mean& m, int rank) {
    if (!m.keepdim || rank == 0) return std::nullopt;
    if (const int count = m.trailing_dims(rank); count > 0) return count;
    return std::nullopt;
  }

  // Folds the mul(·, gamma) and add(·, beta) that follow a normalisation ending at `tail` into
  // `norm` (which must not have them yet), extending `r`.
  void absorb_affine(node_id tail, op::layer_norm& norm, int rank, rewrite& r, node_id anchor) {
    const shape ns = norm.normalized_shape;
    std::optional<tensor> gamma, beta;
    std::string detail;
    const auto take = [&](auto is_op, std::optional<tensor>& into, std::string_view role) {
      const auto reader = v_.sole_reader(tail);
      if (!reader || !is_op(g_[*reader])) {
        for (node_id rd : v_.readers(tail))
          if (is_op(g_[rd]) && v_.constant(*view::other_operand(g_[rd], tail)) != nullptr)
            miss("layer_norm", anchor, fmt::format("{} {} not folded: {}", role, g_[rd].name, readers_message(tail)));
        return false;
      }
      const node_id c = *view::other_operand(g_[*reader], tail);
      const tensor* value = v_.constant(c);
      if (value == nullptr) return false;
      into = broadcast_into(*value, ns, rank);
      if (!into) {
        miss("layer_norm", anchor, fmt::format("{} {} not folded: constant {} of shape {} does not broadcast into "
                                               "normalized_shape {}",
                                               role, g_[*reader].name, g_[c].name, to_string(value->shape()),
                                               to_string(ns)));
        return false;
      }
      detail += fmt::format(", {} {}", role, g_[c].name);
      r.pattern.push_back(*reader);
      tail = *reader;
      return true;
    };
    const auto is_mul = [](const node& n) { return n.is<op::mul>(); };
    const auto is_add = [](const node& n) { return n.is<op::add>(); };
    if (!norm.elementwise_affine) take(is_mul, gamma, "weight");
    if (!norm.elementwise_affine || !norm.bias) take(is_add, beta, "bias");
    if (!gamma && !beta) return;
    r.detail += detail;
    if (!norm.elementwise_affine) {
      norm.elementwise_affine = true;
      if (!gamma) {
        gamma = tensor(ns);
        std::ranges::fill(gamma->values(), 1.0f);
      }
      r.parameters.emplace_back("weight", std::move(*gamma));
    }
    norm.bias = beta.has_value();
    if (beta) r.parameters.emplace_back("bias", std::move(*beta));
  }

  std::optional<rewrite> match_layer_norm(node_id m_id) {
    const node& m = g_[m_id];
    const node_id x = m.inputs[0];
    const int rank = v_.shape_of(x).size();
    const auto count = trailing_reduction(m.as<op::mean>(), rank);
    if (!count) return std::nullopt;
    // d = x − m
    node_id d{};
    bool found = false;
    for (node_id r : v_.readers(m_id))
      if (g_[r].is<op::sub>() && g_[r].inputs[0] == x && g_[r].inputs[1] == m_id) {
        d = r;
        found = true;
      }
    if (!found) return std::nullopt;
    if (!v_.read_only_by(m_id, d)) return miss("layer_norm", m_id, readers_message(m_id));
    // d² and d / s among d's readers
    std::optional<node_id> square, quotient;
    for (node_id r : v_.readers(d)) {
      const node& n = g_[r];
      if ((n.is<op::pow>() && n.inputs.size() == 1 && n.as<op::pow>().exponent == 2.0) || (n.is<op::mul>() && n.inputs[0] == d && n.inputs[1] == d))
        square = r;
      else if (n.is<op::div>() && n.inputs[0] == d)
        quotient = r;
    }
    if (!square || !quotient) return std::nullopt;
    if (v_.readers(d).size() != 2)
      return miss("layer_norm", m_id, fmt::format("{} = x − mean has {} readers ({}); only the square and the "
                                                  "division may read it",
                                                  g_[d].name, v_.readers(d).size(), name_list(g_, v_.readers(d))));
    const auto var = v_.sole_reader(*square);
    if (!var || !g_[*var].is<op::mean>() || trailing_reduction(g_[*var].as<op::mean>(), rank) != count)
      return miss("layer_norm", m_id, fmt::format("{} = (x − mean)² is not averaged over the same dimensions (with "
                                                  "keepdim) by its only reader",
                                                  g_[*square].name));
    const auto plus_eps = v_.sole_reader(*var);
    const auto eps_node = plus_eps && g_[*plus_eps].is<op::add>() ? view::other_operand(g_[*plus_eps], *var) : std::nullopt;
    const auto eps = eps_node ? v_.scalar(*eps_node) : std::nullopt;
    if (!eps) return miss("layer_norm", m_id, fmt::format("the variance {} is not read by one add of a scalar constant (eps)",
                                                          g_[*var].name));
    if (!(*eps >= 0.0) || !std::isfinite(*eps))
      return miss("layer_norm", m_id, fmt::format("eps {} is not a finite non-negative number", format_value(*eps)));
    const auto root = v_.sole_reader(*plus_eps);
    if (!root || !g_[*root].is<op::sqrt>())
      return miss("layer_norm", m_id, fmt::format("{} = var + eps is not read by one sqrt", g_[*plus_eps].name));
    if (!v_.read_only_by(*root, *quotient) || g_[*quotient].inputs[1] != *root)
      return miss("layer_norm", m_id, fmt::format("{} = x − mean is divided by {}, not by sqrt(var + eps) alone",
                                                  g_[d].name, g_[g_[*quotient].inputs[1]].name));
    dims normalized;
    for (int i = rank - *count; i < rank; ++i) normalized.push_back(v_.shape_of(x)[i]);
    op::layer_norm norm{.normalized_shape = normalized, .eps = *eps, .elementwise_affine = false, .bias = false};
    rewrite r{.pattern_name = "layer_norm", .op = norm, .inputs = {x}, .parameters = {},
              .pattern = {m_id, d, *square, *var, *plus_eps, *root, *quotient},
              .detail = fmt::format("over {}, eps {}", to_string(normalized), format_value(*eps))};
    absorb_affine(*quotient, norm, rank, r, m_id);
    r.op = norm;
    return r;
  }

  // A layer_norm without weight or bias followed by mul/add constants absorbs them.
  std::optional<rewrite> match_norm_affine(node_id id) {
    const node& n = g_[id];
    op::layer_norm norm = n.as<op::layer_norm>();
    if (norm.elementwise_affine && norm.bias) return std::nullopt;
    const auto weight = n.parameters.find("weight");
    if (norm.elementwise_affine && weight == n.parameters.end()) return std::nullopt;  // nothing to keep
    rewrite r{.pattern_name = "layer_norm", .op = norm, .inputs = {n.inputs[0]}, .parameters = {}, .pattern = {id},
              .detail = fmt::format("folded into {}", n.name)};
    if (norm.elementwise_affine) r.parameters.emplace_back("weight", weight->second);
    absorb_affine(id, norm, v_.shape_of(n.inputs[0]).size(), r, id);
    if (r.pattern.size() == 1) return std::nullopt;
    r.op = norm;
    return r;
  }

  // --- silu -----------------------------------------------------------------------------------

  std::optional<rewrite> match_silu(node_id s) {
    const node_id x = g_[s].inputs[0];
    for (node_id r : v_.readers(s)) {
      const node& m = g_[r];
      if (!m.is<op::mul>() || view::other_operand(m, s) != std::optional<node_id>(x)) continue;
      if (v_.readers(s).size() != 1) return miss("silu", s, readers_message(s));
      return rewrite{.pattern_name = "silu", .op = op::silu{}, .inputs = {x}, .parameters = {}, .pattern = {s, r},
                     .detail = fmt::format("of {}", g_[x].name)};
    }
    return std::nullopt;
  }

  // --- embedding ------------------------------------------------------------------------------

  std::optional<rewrite> match_embedding(node_id id) {
    const node& select = g_[id];
    const tensor* table = v_.constant(select.inputs[0]);
    if (table == nullptr || select.as<op::index_select>().dim != 0) return std::nullopt;
    if (table->rank() != 2)
      return miss("embedding", id, fmt::format("the constant table {} has shape {}; an embedding's is 2-D",
                                               g_[select.inputs[0]].name, to_string(table->shape())));
    const std::int64_t rows = table->shape()[0], width = table->shape()[1];
    return rewrite{.pattern_name = "embedding",
                   .op = op::embedding{.num_embeddings = rows, .embedding_dim = width},
                   .inputs = {select.inputs[1]},
                   .parameters = {{"weight", *table}},
                   .pattern = {id},
                   .detail = fmt::format("table {} [{}, {}]", g_[select.inputs[0]].name, rows, width)};
  }

  // --- attention ------------------------------------------------------------------------------

  std::optional<rewrite> match_attention(node_id sm) {
    const node& softmax = g_[sm];
    const int rank = v_.shape_of(sm).size();
    if (rank < 2 || shape_rules::normalize_dim(softmax.as<op::softmax>().dim, rank) != rank - 1) return std::nullopt;
    // softmax → matmul(·, v)
    const auto out = v_.sole_reader(sm);
    if (!out || !g_[*out].is<op::matmul>() || g_[*out].inputs[0] != sm) {
      for (node_id r : v_.readers(sm))
        if (g_[r].is<op::matmul>() && g_[r].inputs[0] == sm && v_.readers(sm).size() > 1)
          return miss("scaled_dot_product_attention", sm, readers_message(sm));
      return std::nullopt;
    }
    std::vector<node_id> pattern{sm, *out};
    std::string detail;
    double scale = 1.0;
    // [scores · c | scores / c] → softmax
    node_id scores = softmax.inputs[0];
    node_id scores_reader = sm;
    if (const auto f = v_.times_factor(g_[scores]); f && g_[f->first].is<op::matmul>()) {
      if (!v_.read_only_by(scores, sm)) return miss("scaled_dot_product_attention", sm, readers_message(scores));
      scale *= f->second;
      detail += fmt::format(", scores scaled by {} in {}", format_value(f->second), g_[scores].name);
      pattern.push_back(scores);
      scores_reader = scores;
      scores = f->first;
    }
    if (!g_[scores].is<op::matmul>()) return std::nullopt;
    const node& qk = g_[scores];
    if (!v_.read_only_by(scores, scores_reader)) return miss("scaled_dot_product_attention", sm, readers_message(scores));
    pattern.push_back(scores);
    node_id q = qk.inputs[0];
    const node_id key_t = qk.inputs[1];
    const node_id value = g_[*out].inputs[1];
    // q · c or q / c just before the product is part of the scale.
    if (const auto f = v_.times_factor(g_[q]); f && v_.read_only_by(q, scores)) {
      scale *= f->second;
      detail += fmt::format(", query scaled by {} in {}", format_value(f->second), g_[q].name);
      pattern.push_back(q);
      q = f->first;
    }
    // kᵀ as a permutation of k: p; k itself is p with its last two entries swapped back.
    const node& kt = g_[key_t];
    const int k_rank = v_.shape_of(key_t).size();
    if (v_.shape_of(q).size() < 2 || k_rank < 2 || v_.shape_of(value).size() < 2) return std::nullopt;
    dims perm;
    if (kt.is<op::permute>()) {
      for (std::int64_t d : kt.as<op::permute>().dims) perm.push_back(shape_rules::normalize_dim(d, k_rank));
    } else if (kt.is<op::transpose>()) {
      for (int i = 0; i < k_rank; ++i) perm.push_back(i);
      const op::transpose& t = kt.as<op::transpose>();
      const int a = shape_rules::normalize_dim(t.dim0, k_rank), b = shape_rules::normalize_dim(t.dim1, k_rank);
      std::swap(perm[a], perm[b]);
    } else {
      return miss("scaled_dot_product_attention", sm,
                  fmt::format("the key operand {} of {} is a {}, not a permute or transpose of k", kt.name, qk.name,
                              kt.op_name()));
    }
    if (!v_.read_only_by(key_t, scores)) return miss("scaled_dot_product_attention", sm, readers_message(key_t));
    std::swap(perm[k_rank - 2], perm[k_rank - 1]);
    bool identity = true;
    for (int i = 0; i < k_rank; ++i) identity = identity && perm[i] == i;
    const node_id k = kt.inputs[0];
    if (!(scale != 0.0 && std::isfinite(scale)))
      return miss("scaled_dot_product_attention", sm,
                  fmt::format("the scale {} is not a finite non-zero number", format_value(scale)));
    rewrite r{.pattern_name = "scaled_dot_product_attention",
              .op = op::scaled_dot_product_attention{.dropout_p = 0.0, .is_causal = false, .scale = scale},
              .inputs = {q, identity ? k : key_t, value}, .parameters = {}, .pattern = std::move(pattern),
              .detail = fmt::format("q {}, k {}, v {}, scale {}{}", g_[q].name, g_[k].name, g_[value].name,
                                    format_value(scale), detail)};
    r.named_after = scores;
    if (identity) {
      r.pattern.push_back(key_t);
      r.detail += fmt::format(", key {} {} dropped", kt.op_name(), kt.name);
    } else {
      pending_permute_ = {key_t, op::permute{perm}};
      r.detail += fmt::format(", key {} now permute {}", kt.name, to_string(perm));
    }
    return r;
  }

  // --- committing -----------------------------------------------------------------------------

  // Applies a match, unless the coarse op would produce another shape than the pattern did
  // (scalar constants of a higher rank broadcast the pattern's result up, say): a near miss.
  std::optional<raised_pattern> commit(rewrite r) {
    std::sort(r.pattern.begin(), r.pattern.end(), [&](node_id a, node_id b) { return position(a) < position(b); });
    const node_id head = r.named_after.value_or(r.pattern.front());
    const node_id tail = r.pattern.back();
    std::optional<std::pair<node_id, op::permute>> new_key = std::exchange(pending_permute_, std::nullopt);
    std::vector<shape> in;
    for (node_id i : r.inputs) in.push_back(v_.shape_of(i));
    if (new_key) in[1] = permuted(v_.shape_of(g_[new_key->first].inputs[0]), new_key->second.dims);
    const shape_result s = op_infer_shapes(r.op, in);
    if (!s.ok() || !(s.shapes[0] == v_.shape_of(tail))) {
      miss(r.pattern_name, head,
           fmt::format("{} gives shape {}, but the pattern's result {} has shape {}", op_name(r.op),
                       s.ok() ? to_string(s.shapes[0]) : std::string(s.error), g_[tail].name,
                       to_string(v_.shape_of(tail))));
      return std::nullopt;
    }
    raised_pattern done{r.pattern_name, g_[head].name, {}, std::move(r.detail)};
    for (node_id id : r.pattern) done.replaced.push_back(g_[id].name);
    if (new_key) g_.replace_op(new_key->first, new_key->second);
    std::vector<node_id> constants;
    for (node_id id : r.pattern)
      for (node_id i : g_[id].inputs)
        if (g_[i].is<op::constant>() && std::find(constants.begin(), constants.end(), i) == constants.end())
          constants.push_back(i);
    // Every input precedes the tail (the tail reads it, perhaps through the pattern).
    std::string temporary = done.node + "_raised";
    while (g_.contains(temporary)) temporary += "_";
    const node_id fresh = g_.insert_before(tail, temporary, std::move(r.op), std::move(r.inputs));
    for (auto& [role, value] : r.parameters) g_.set_parameter(fresh, role, std::move(value));
    g_.replace_all_uses_with(tail, fresh);
    for (auto it = r.pattern.rbegin(); it != r.pattern.rend(); ++it) g_.erase(*it);
    for (node_id c : constants)
      if (g_.users(c).empty()) g_.erase(c);
    g_.rename(fresh, done.node);
    return done;
  }

  static shape permuted(const shape& s, const dims& perm) {
    shape out;
    for (std::int64_t d : perm) out.push_back(s[static_cast<int>(d)]);
    return out;
  }

  std::size_t position(node_id id) const {
    const auto order = g_.order();
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), id) - order.begin());
  }

  graph& g_;
  view v_;
  std::vector<raise_near_miss> skipped_;
  std::optional<std::pair<node_id, op::permute>> pending_permute_;
};

}  // namespace detail::raise

// Rewrites every fine-grained pattern of `g` into its coarse op, to a fixed point.
inline raise_granularity_info raise_granularity_of(graph& g) { return detail::raise::raiser(g).run(); }

struct raise_granularity_pass {
  using needs = facts<>;
  using provides = facts<>;
  using invalidates = facts<fact::metadata_initialised, fact::common_metadata, fact::software_metadata,
                            fact::statistics, fact::quantized, fact::hardware_metadata>;

  raise_granularity_info run(graph& g) const { return raise_granularity_of(g); }
};

inline constexpr raise_granularity_pass raise_granularity{};

}  // namespace mase
