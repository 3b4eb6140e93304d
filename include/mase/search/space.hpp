#pragma once
// A mixed-precision search space: for each subject (a node, an op type or a name pattern, as the
// quantize pass resolves its keys), each MASE config key with the values it may take. This is
// MASE's `graph/quantize/mixed_precision_ptq` space: its seed holds, per subject, config lists
// such as weight_width = [2, 4, 8]; the space is the product of every list of every subject, and
// a point (one index per list) is a quantize config.
//
// A fraction width may be left to the data: "NA" (or no such key) next to a fixed-point width
// gives the fraction bits that just hold the largest magnitude the operand reached on the
// calibration data (measure_ranges), so a space can hold widths only.

#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/tensor.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/format/mase_config.hpp>
#include <mase/ir/graph.hpp>
#include <mase/pass/name_pattern.hpp>
#include <mase/pass/quantize.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

// One config key's values, in the order the user gave them.
using choice_list = std::vector<quant_config_value>;

// MASE's seed.<key>.config table: keys in the file's order.
struct seed_config {
  std::string key;  // a node name, an op type, a pattern, or "default"
  std::vector<std::pair<std::string, choice_list>> choices;
};

// What a user writes: MASE's [search.search_space] (setup.by and the seed tables).
struct space_spec {
  quantize_by by = quantize_by::name;
  std::vector<seed_config> seed;  // "default" applies to quantizable nodes no other entry names
  config_source source{};         // for messages: the TOML file and table, if any
  // Results the seeds leave float get the formats the hardware computes (quantize_config::
  // hardware_formats): what a search with hardware-cost objectives needs to cost every trial.
  bool hardware_formats = false;
};

// One decision of the search: a config key of one subject.
struct dimension {
  std::size_t subject = 0;  // index into search_space::subjects
  std::string key;          // e.g. weight_width
  choice_list choices;
};

// One index per dimension.
using point = std::vector<std::uint32_t>;

// The largest magnitude of each operand of a node, on the calibration data.
struct operand_ranges {
  std::optional<double> data_in, weight, bias, data_out;
};
using range_table = std::map<std::string, operand_ranges, std::less<>>;  // by node name

// The fraction width of a signed `width`-bit fixed-point format whose integer part just holds
// `magnitude`: 2^(width - 1 - frac) >= magnitude (a power of two saturates by one step).
inline int fraction_bits_for(int width, double magnitude) {
  if (!(magnitude > 0) || !std::isfinite(magnitude)) return width - 1;
  int exponent = 0;
  const double mantissa = std::frexp(magnitude, &exponent);  // magnitude = mantissa * 2^exponent
  const int integer_bits = mantissa == 0.5 ? exponent - 1 : exponent;
  return width - 1 - integer_bits;
}

class search_space {
public:
  quantize_by by = quantize_by::name;
  std::vector<std::string> subjects;  // node names (by name), op types (by type) or patterns then "default"
  std::vector<dimension> dimensions;
  config_source source{};
  bool hardware_formats = false;  // space_spec::hardware_formats

  // The number of points (saturating at the largest double).
  double size() const {
    double n = 1;
    for (const dimension& d : dimensions) n *= static_cast<double>(d.choices.size());
    return n;
  }

  // The quantize config at `p`: one by-name entry per quantizable node, each its subject's
  // chosen values, fraction widths left to the data taken from `ranges`.
  quantize_config config_at(const graph& g, const point& p, const range_table* ranges = nullptr) const;
  // The same, with only the nodes of `subjects` quantized (the rest left float32): what a
  // sensitivity measurement quantizes.
  quantize_config config_of_subjects(const graph& g, const point& p, std::span<const std::size_t> subjects,
                                     const range_table* ranges = nullptr) const {
    quantize_config c = config_at(g, p, ranges);
    std::erase_if(c.entries, [&](const auto& entry) {
      const std::optional<std::size_t> subject = subject_of(g.at(entry.first));
      return !subject || std::find(subjects.begin(), subjects.end(), *subject) == subjects.end();
    });
    return c;
  }

  // "fc1.weight_width": a dimension's name in journals and tables.
  std::string dimension_name(std::size_t i) const {
    return fmt::format("{}.{}", subjects.at(dimensions.at(i).subject), dimensions.at(i).key);
  }

  // The subject whose choices apply to node `n`, if any.
  std::optional<std::size_t> subject_of(const node& n) const;

private:
  friend search_space build_search_space(const graph& g, const space_spec& spec);
  std::vector<name_pattern> patterns_;  // by regex_name: one per subject but the last ("default")
};

namespace detail {

inline std::string seed_location(const config_source& source, std::string_view key) {
  const std::string table = source.table.empty() ? std::string("seed") : source.table + ".seed";
  return fmt::format("{}[{}.{}.config]", source.file.empty() ? std::string() : source.file + ": ", table,
                     mase::detail::toml_key(key));
}

inline bool is_fraction_key(std::string_view key) {
  return key.size() > 11 && key.substr(key.size() - 11) == "_frac_width";
}

// Fills the fraction widths `c` leaves to the data ("NA" or absent beside a fixed-point width).
inline void derive_fraction_widths(quant_config& c, const node& n, const range_table* ranges) {
  const auto name = c.find("name");
  if (name == c.end()) return;
  const std::string* arithmetic = std::get_if<std::string>(&name->second);
  if (arithmetic == nullptr || (*arithmetic != "integer" && *arithmetic != "fixed")) return;
  for (std::string_view operand : {"data_in", "weight", "bias", "data_out"}) {
    const std::string width_key = fmt::format("{}_width", operand), frac_key = fmt::format("{}_frac_width", operand);
    const auto width = c.find(width_key);
    if (width == c.end()) continue;
    const auto frac = c.find(frac_key);
    const bool left_to_data = frac == c.end() || (std::holds_alternative<std::string>(frac->second) &&
                                                  mase::detail::is_none_name(std::get<std::string>(frac->second)));
    if (!left_to_data) continue;
    const std::int64_t* w = std::get_if<std::int64_t>(&width->second);
    if (w == nullptr) continue;  // the quantize pass names the bad value
    const operand_ranges* r = nullptr;
    if (ranges != nullptr)
      if (const auto it = ranges->find(n.name); it != ranges->end()) r = &it->second;
    const std::optional<double> operand_ranges::*member = operand == "data_in"  ? &operand_ranges::data_in
                                                          : operand == "weight" ? &operand_ranges::weight
                                                          : operand == "bias"   ? &operand_ranges::bias
                                                                                : &operand_ranges::data_out;
    if (r == nullptr || !(r->*member)) {
      if (operand == "bias" && !n.parameters.contains("bias")) continue;
      throw error(fmt::format("search: node {}: {} is \"NA\" (left to the data), but no range of its {} was "
                              "measured; give calibration data, or choose {} values",
                              n.name, frac_key, operand, frac_key));
    }
    c.insert_or_assign(frac_key, std::int64_t{fraction_bits_for(static_cast<int>(*w), *(r->*member))});
  }
}

}  // namespace detail

// The space `spec` describes over `g`'s quantizable nodes. MASE's rules: by name, every
// quantizable node is a subject, with its own seed entry or else a copy of "default"; by type,
// every op type among them; by regex_name (mase's addition), each pattern, then "default" for
// the nodes no pattern matches. A seed entry that matches nothing, an empty or unknown list, a
// non-list value: mase::error naming the entry.
inline search_space build_search_space(const graph& g, const space_spec& spec) {
  using mase::detail::find_quantizable;
  search_space space;
  space.by = spec.by;
  space.source = spec.source;
  space.hardware_formats = spec.hardware_formats;
  const seed_config* fallback = nullptr;
  for (const seed_config& s : spec.seed) {
    const std::string where = detail::seed_location(spec.source, s.key);
    if (std::count_if(spec.seed.begin(), spec.seed.end(), [&](const seed_config& o) { return o.key == s.key; }) > 1)
      throw error(fmt::format("{} appears twice; keep one", where));
    for (const auto& [key, list] : s.choices) {
      if (list.empty()) throw error(fmt::format("{}: {} is an empty list; give at least one value", where, key));
      if (list.size() > 4096)
        throw error(fmt::format("{}: {} has {} values; a list takes at most 4096", where, key, list.size()));
    }
    if (s.key == "default") fallback = &s;
  }
  const auto seed_named = [&](std::string_view key) -> const seed_config* {
    const auto it = std::find_if(spec.seed.begin(), spec.seed.end(), [&](const seed_config& s) { return s.key == key; });
    return it == spec.seed.end() ? nullptr : &*it;
  };
  std::vector<const node*> quantizable;
  for (node_id id : g.order())
    if (find_quantizable(g[id])) quantizable.push_back(&g[id]);

  std::vector<const seed_config*> subject_seeds;
  const auto add_subject = [&](std::string subject, const seed_config* seed) {
    space.subjects.push_back(std::move(subject));
    subject_seeds.push_back(seed);
  };
  if (spec.by == quantize_by::regex_name) {
    for (const seed_config& s : spec.seed) {
      if (s.key == "default") continue;
      const std::string where = detail::seed_location(spec.source, s.key);
      space.patterns_.emplace_back(s.key, where);
      if (std::none_of(quantizable.begin(), quantizable.end(),
                       [&](const node* n) { return space.patterns_.back().matches(n->name); }))
        throw error(fmt::format("{}: the pattern matches no quantizable node of the graph", where));
      add_subject(s.key, &s);
    }
    if (fallback != nullptr) add_subject("default", fallback);
  } else {
    for (const seed_config& s : spec.seed) {
      if (s.key == "default") continue;
      const bool found = std::any_of(quantizable.begin(), quantizable.end(), [&](const node* n) {
        return spec.by == quantize_by::name ? n->name == s.key : n->op_name() == s.key;
      });
      if (!found)
        throw error(fmt::format("{}: the graph has no quantizable node {} {}", detail::seed_location(spec.source, s.key),
                                spec.by == quantize_by::name ? "named" : "of type", s.key));
    }
    for (const node* n : quantizable) {
      const std::string subject = spec.by == quantize_by::name ? n->name : std::string(n->op_name());
      if (std::find(space.subjects.begin(), space.subjects.end(), subject) != space.subjects.end()) continue;
      const seed_config* seed = seed_named(subject);
      if (seed == nullptr) seed = fallback;
      if (seed != nullptr) add_subject(subject, seed);
    }
  }
  // A key is a dimension only if some node of its subject takes its operand: a relu, which has
  // no weight, does not choose a weight width from a shared default.
  std::vector<bool> takes_weight(space.subjects.size(), false), takes_bias(space.subjects.size(), false);
  for (const node* n : quantizable)
    if (const std::optional<std::size_t> i = space.subject_of(*n)) {
      const auto q = find_quantizable(*n);
      takes_weight[*i] = takes_weight[*i] || q->weight != operand_use::none;
      takes_bias[*i] = takes_bias[*i] || q->bias != operand_use::none;
    }
  for (std::size_t i = 0; i < space.subjects.size(); ++i)
    for (const auto& [key, list] : subject_seeds[i]->choices) {
      if ((key.starts_with("weight_") && !takes_weight[i]) || (key.starts_with("bias_") && !takes_bias[i])) continue;
      space.dimensions.push_back({i, key, list});
    }
  if (space.subjects.empty())
    throw error(fmt::format("{}the search space covers no node: give seed entries for the graph's quantizable nodes "
                            "or a default",
                            spec.source.file.empty() ? std::string() : spec.source.file + ": "));
  return space;
}

inline std::optional<std::size_t> search_space::subject_of(const node& n) const {
  std::string_view key = n.name;
  if (by == quantize_by::type) key = n.op_name();
  if (by == quantize_by::regex_name) {
    for (std::size_t i = 0; i < patterns_.size(); ++i)
      if (patterns_[i].matches(n.name)) return i;
    key = "default";
  }
  const auto it = std::find(subjects.begin(), subjects.end(), key);
  if (it == subjects.end()) return std::nullopt;
  return static_cast<std::size_t>(it - subjects.begin());
}

inline quantize_config search_space::config_at(const graph& g, const point& p, const range_table* ranges) const {
  if (p.size() != dimensions.size())
    throw error(fmt::format("search: a point has {} indices; the space has {} dimensions", p.size(), dimensions.size()));
  std::vector<quant_config> chosen(subjects.size());
  for (std::size_t i = 0; i < dimensions.size(); ++i) {
    const dimension& d = dimensions[i];
    if (p[i] >= d.choices.size())
      throw error(fmt::format("search: index {} of {} is out of range (it has {} values)", p[i], dimension_name(i),
                              d.choices.size()));
    chosen[d.subject].insert_or_assign(d.key, d.choices[p[i]]);
  }
  quantize_config config{.by = quantize_by::name};
  config.source = source;
  config.hardware_formats = hardware_formats;
  for (node_id id : g.order()) {
    const node& n = g[id];
    const auto quantizable = mase::detail::find_quantizable(n);
    if (!quantizable) continue;
    const std::optional<std::size_t> subject = subject_of(n);
    if (!subject) continue;
    quant_config c = chosen[*subject];
    // A seed shared by several ops (default, a type, a pattern) may give operands a node's op
    // does not take (a relu has no weight): MASE ignores them, and so does the config.
    std::erase_if(c, [&](const auto& entry) {
      return (quantizable->weight == operand_use::none && entry.first.starts_with("weight_")) ||
             (quantizable->bias == operand_use::none && entry.first.starts_with("bias_"));
    });
    detail::derive_fraction_widths(c, n, ranges);
    config.entries.emplace_back(n.name, std::move(c));
  }
  return config;
}

// The uniform points of a space: every subject takes the same value for each key (one data
// width and one weight width for the whole network, say), over every combination of values.
// Keys whose subjects' lists differ take each value of the first subject's list that every
// other list holds, at its index there.
inline std::vector<point> uniform_points(const search_space& space) {
  std::vector<std::string> keys;
  for (const dimension& d : space.dimensions)
    if (std::find(keys.begin(), keys.end(), d.key) == keys.end()) keys.push_back(d.key);
  std::vector<point> points{point(space.dimensions.size(), 0)};
  for (const std::string& key : keys) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < space.dimensions.size(); ++i)
      if (space.dimensions[i].key == key) members.push_back(i);
    std::vector<point> next;
    for (const quant_config_value& value : space.dimensions[members[0]].choices) {
      point indices(members.size());
      bool everywhere = true;
      for (std::size_t m = 0; m < members.size() && everywhere; ++m) {
        const choice_list& list = space.dimensions[members[m]].choices;
        const auto it = std::find(list.begin(), list.end(), value);
        everywhere = it != list.end();
        if (everywhere) indices[m] = static_cast<std::uint32_t>(it - list.begin());
      }
      if (!everywhere) continue;
      for (point p : points) {
        for (std::size_t m = 0; m < members.size(); ++m) p[members[m]] = indices[m];
        next.push_back(std::move(p));
      }
    }
    points = std::move(next);
  }
  return points;
}

// The largest magnitude of every quantizable node's operands, over one float32 run of `inputs`.
inline range_table measure_ranges(const graph& g, const ordered_map<tensor>& inputs) {
  range_table table;
  const auto max_abs = [](const tensor& t) {
    float m = 0;
    for (float v : t.values()) m = std::max(m, std::fabs(v));
    return static_cast<double>(m);
  };
  const auto widen = [](std::optional<double>& slot, double v) { slot = std::max(slot.value_or(0.0), v); };
  evaluator float_model(g);
  float_model.run_with(inputs, [&](const node_run& r) {
    if (!mase::detail::find_quantizable(r.n)) return;
    operand_ranges& entry = table[r.n.name];
    if (!r.inputs.empty() && r.inputs[0] != nullptr) widen(entry.data_in, max_abs(*r.inputs[0]));
    if (!r.results.empty() && r.results[0] != nullptr) widen(entry.data_out, max_abs(*r.results[0]));
    if (const auto w = r.n.parameters.find("weight"); w != r.n.parameters.end()) widen(entry.weight, max_abs(w->second));
    if (const auto b = r.n.parameters.find("bias"); b != r.n.parameters.end()) widen(entry.bias, max_abs(b->second));
  });
  return table;
}

}  // namespace mase::search
