#pragma once
// A study's outputs: the front as CSV, the front drawn as SVG (the first objective against each
// other one), and the formats each node of a trial's quantized graph holds, as a table.

#include <mase/format/format.hpp>
#include <mase/ir/graph.hpp>
#include <mase/pass/report_tables.hpp>
#include <mase/search/study.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

namespace detail {

inline std::string csv_cell(std::string text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

inline std::string choice_text(const quant_config_value& v) {
  struct {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return fmt::format("{}", i); }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const std::vector<std::int64_t>& l) const {
      std::string text;
      for (std::int64_t i : l) text += fmt::format("{}{}", text.empty() ? "" : " ", i);
      return "[" + text + "]";
    }
  } text;
  return std::visit(text, v);
}

}  // namespace detail

// One row per point of the front (study::distinct_front, trial order): its first trial, how many
// later trials have the same objective values (same_objectives), the values, its choices.
inline std::string pareto_csv(const study& s) {
  std::string out = "trial,same_objectives";
  for (const objective_info& o : s.objectives) out += "," + detail::csv_cell(o.name);
  for (std::size_t i = 0; i < s.space.dimensions.size(); ++i) out += "," + detail::csv_cell(s.space.dimension_name(i));
  out += "\n";
  for (const study::front_point& p : s.distinct_front()) {
    const trial& t = s.trials[p.index];
    out += fmt::format("{},{}", t.number, p.same.size());
    for (double v : t.values) out += fmt::format(",{}", v);
    for (std::size_t i = 0; i < t.choices.size(); ++i)
      out += "," + detail::csv_cell(detail::choice_text(s.space.dimensions[i].choices[t.choices[i]]));
    out += "\n";
  }
  return out;
}

// The trials drawn in one panel per objective after the first: that objective across, the first
// up; every successful trial grey, the front red (each of its points once, its title naming the
// first trial and counting those with the same values, which are not drawn again), and each
// panel's own two-objective front joined by a step line. With one objective, the first against
// the trial number.
inline std::string pareto_svg(const study& s) {
  constexpr double panel_width = 360, panel_height = 280, margin = 52;
  const std::size_t panels = std::max<std::size_t>(1, s.objectives.size() - 1);
  const double width = static_cast<double>(panels) * (panel_width + margin) + margin;
  const double height = panel_height + 2 * margin;
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < s.trials.size(); ++i)
    if (s.trials[i].ok()) ok.push_back(i);
  const std::vector<study::front_point> front = s.distinct_front();
  std::map<std::size_t, std::size_t> on_front;  // trial index → how many others have its values
  std::set<std::size_t> repeats;                // front trials drawn as their first one
  for (const study::front_point& p : front) {
    on_front.emplace(p.index, p.same.size());
    repeats.insert(p.same.begin(), p.same.end());
  }

  std::ostringstream svg;
  svg << fmt::format(R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )svg"
                     R"svg(font-family="sans-serif" font-size="11">)svg"
                     "\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                     width, height);
  for (std::size_t p = 0; p < panels; ++p) {
    const bool against_trial = s.objectives.size() == 1;
    const std::size_t across = against_trial ? 0 : p + 1;
    const auto x_of = [&](const trial& t) { return against_trial ? static_cast<double>(t.number) : t.values[across]; };
    const auto y_of = [&](const trial& t) { return t.values[0]; };
    double x_low = std::numeric_limits<double>::infinity(), x_high = -x_low, y_low = x_low, y_high = -x_low;
    for (std::size_t i : ok) {
      const double x = x_of(s.trials[i]), y = y_of(s.trials[i]);
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      x_low = std::min(x_low, x), x_high = std::max(x_high, x), y_low = std::min(y_low, y), y_high = std::max(y_high, y);
    }
    if (!(x_high >= x_low)) x_low = 0, x_high = 1, y_low = 0, y_high = 1;
    if (x_high == x_low) x_low -= 0.5, x_high += 0.5;
    if (y_high == y_low) y_low -= 0.5, y_high += 0.5;
    const double left = margin + static_cast<double>(p) * (panel_width + margin), top = margin;
    const auto px = [&](double x) { return left + (x - x_low) / (x_high - x_low) * panel_width; };
    const auto py = [&](double y) { return top + panel_height - (y - y_low) / (y_high - y_low) * panel_height; };
    svg << fmt::format(R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#444"/>)svg", left, top,
                       panel_width, panel_height)
        << "\n";
    const std::string x_name = against_trial ? std::string("trial") : s.objectives[across].name;
    svg << fmt::format(R"svg(<text x="{}" y="{}" text-anchor="middle">{} ({})</text>)svg", left + panel_width / 2,
                       top + panel_height + 34, x_name,
                       against_trial ? std::string("number") : std::string(to_string(s.objectives[across].sense)))
        << "\n";
    svg << fmt::format(R"svg(<text x="{}" y="{}" text-anchor="middle" transform="rotate(-90 {} {})">{} ({})</text>)svg",
                       left - 38, top + panel_height / 2, left - 38, top + panel_height / 2, s.objectives[0].name,
                       to_string(s.objectives[0].sense))
        << "\n";
    for (const auto& [value, x, y, anchor] :
         {std::tuple{x_low, px(x_low), top + panel_height + 14, "start"},
          std::tuple{x_high, px(x_high), top + panel_height + 14, "end"}})
      svg << fmt::format(R"svg(<text x="{}" y="{}" text-anchor="{}">{:.4g}</text>)svg", x, y, anchor, value) << "\n";
    svg << fmt::format(R"svg(<text x="{}" y="{}" text-anchor="end">{:.4g}</text>)svg", left - 4, top + panel_height, y_low)
        << "\n";
    svg << fmt::format(R"svg(<text x="{}" y="{}" text-anchor="end">{:.4g}</text>)svg", left - 4, top + 10, y_high) << "\n";

    // This panel's two-objective front, as a step line.
    if (!against_trial) {
      std::vector<objective_vector> pair;
      std::vector<std::size_t> pair_index;
      for (std::size_t i : ok) {
        const trial& t = s.trials[i];
        if (!std::isfinite(x_of(t)) || !std::isfinite(y_of(t))) continue;
        pair.push_back({s.objectives[across].sense == direction::maximize ? -x_of(t) : x_of(t),
                        s.objectives[0].sense == direction::maximize ? -y_of(t) : y_of(t)});
        pair_index.push_back(i);
      }
      std::vector<std::pair<double, double>> steps;
      for (std::size_t k : search::pareto_front(pair)) steps.emplace_back(x_of(s.trials[pair_index[k]]), y_of(s.trials[pair_index[k]]));
      std::sort(steps.begin(), steps.end());
      std::string path;
      for (std::size_t k = 0; k < steps.size(); ++k) {
        if (k > 0) path += fmt::format(" L{:.2f},{:.2f}", px(steps[k].first), py(steps[k - 1].second));
        path += fmt::format("{}{:.2f},{:.2f}", k == 0 ? "M" : " L", px(steps[k].first), py(steps[k].second));
      }
      if (!path.empty()) svg << fmt::format(R"svg(<path d="{}" fill="none" stroke="#d62728" stroke-width="1.2"/>)svg", path) << "\n";
    }
    // The grey trials first, so that no grey point covers a red one.
    for (const bool red : {false, true})
      for (std::size_t i : ok) {
        const trial& t = s.trials[i];
        const auto point = on_front.find(i);
        if ((point != on_front.end()) != red || repeats.contains(i)) continue;
        if (!std::isfinite(x_of(t)) || !std::isfinite(y_of(t))) continue;
        const std::string title =
            red && point->second > 0 ? fmt::format("trial {} (+{} with the same objectives)", t.number, point->second)
                                     : fmt::format("trial {}", t.number);
        svg << fmt::format(R"svg(<circle cx="{:.2f}" cy="{:.2f}" r="{}" fill="{}"><title>{}</title></circle>)svg",
                           px(x_of(t)), py(y_of(t)), red ? 3.5 : 2.5, red ? "#d62728" : "#9a9a9a", title)
            << "\n";
      }
  }
  svg << fmt::format(R"svg(<text x="{}" y="20" font-size="13">{} trials, {} distinct points on the front (red){}</text>)svg",
                     margin, ok.size(), front.size(),
                     repeats.empty() ? std::string() : fmt::format(", {} more trials with the same objectives", repeats.size()))
      << "\n</svg>\n";
  return svg.str();
}

// Each quantized node's formats in `g` (after quantize): name, op and its operands' formats.
inline std::string node_format_table(const graph& g) {
  mase::detail::text_table table({"Node", "Op", "data_in", "weight", "bias", "data_out"});
  for (node_id id : g.order()) {
    const node& n = g[id];
    if (!mase::detail::find_quantizable(n)) continue;
    const auto arg = [&](std::string_view entry) -> std::string {
      const auto it = n.meta.common.args.find(entry);
      if (it == n.meta.common.args.end()) return "-";
      const tensor_meta* m = std::get_if<tensor_meta>(&it->second);
      return m == nullptr ? std::string("-") : to_string(m->precision);
    };
    const std::string out = n.meta.common.results.empty() ? std::string("-")
                                                           : to_string(n.meta.common.results.begin()->second.precision);
    table.add_row({n.name, std::string(n.op_name()), arg("data_in_0"), arg("weight"), arg("bias"), out});
  }
  std::ostringstream text;
  table.write(text);
  return text.str();
}

}  // namespace mase::search
