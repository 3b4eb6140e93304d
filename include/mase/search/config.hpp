#pragma once
// MASE's search TOML (configs/examples/search_*.toml), as MASE writes it:
//
//   [search.search_space]
//   name = "graph/quantize/mixed_precision_ptq"
//   [search.search_space.setup]
//   by = "name"                                   # or "type"; mase adds "regex_name"
//   [search.search_space.seed.default.config]
//   name = ["integer"]
//   data_in_width = [4, 8]
//   data_in_frac_width = ["NA"]                   # "NA": from the profiled range
//   weight_width = [2, 4, 8]
//   [search.search_space.seed.fc1.config]         # a node (by name) or an op (by type)
//   …
//   [search.strategy]
//   name = "optuna"                               # accepted; mase runs its own samplers
//   [search.strategy.sw_runner.basic_evaluation]  # accuracy and loss (num_samples: the first N)
//   [search.strategy.hw_runner.average_bitwidth]  # average_bitwidth (compare_to is accepted)
//   [search.strategy.setup]
//   n_trials = 20
//   n_jobs = 1
//   timeout = 20000                               # seconds
//   sampler = "tpe"                               # random, grid (brute-force), tpe, qmc, nsga2
//                                                 # (nsgaii), nsga3 (nsgaiii), ilp
//   sum_scaled_metrics = false                    # true: one objective, the scaled sum
//   direction = "maximize"                        # of that sum
//   [search.strategy.metrics]
//   accuracy.scale = 1.0
//   accuracy.direction = "maximize"
//   average_bitwidth.scale = 0.2
//   average_bitwidth.direction = "minimize"
//
// mase's additions, all optional: setup.seed, setup.batch_size, setup.eval ("fake-quant" or
// "bit-exact"), setup.enqueue ("uniform": the space's uniform points are the first trials),
// setup.population (nsga2's and nsga3's, default 20),
// the metrics agreement, output_mse (software runner), average_data_bitwidth, bops and
// model_size (each its own hw_runner table), and the hardware cost model's metrics
// cycles_per_sample, luts, flip_flops, dsps, block_rams and lut_rams, measured by
//   [search.strategy.hw_runner.hardware]
//   max_parallelism = [4, 4]                      # as mase emit-verilog -p (1 to 4 values)
// which also quantizes every trial's results for the hardware. Every key is checked; errors
// name the file, the line and the key.

#include <mase/core/error.hpp>
#include <mase/io/quant_config.hpp>
#include <mase/search/hardware_objective.hpp>
#include <mase/search/objective.hpp>
#include <mase/search/sampler.hpp>
#include <mase/search/space.hpp>
#include <mase/search/study.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

struct metric_spec {
  std::string name;
  double scale = 1.0;
  direction sense = direction::maximize;
};

struct search_config {
  space_spec space;
  std::string sampler = "tpe";
  search_options options;  // trials, jobs, seed, batch_size, mode, timeout
  std::vector<metric_spec> metrics;
  bool sum_scaled_metrics = false;
  direction sum_direction = direction::maximize;
  std::optional<std::int64_t> num_samples{};  // evaluate on the first N samples only
  bool enqueue_uniform = false;               // setup.enqueue = "uniform": the uniform points first
  std::size_t population = 20;                // setup.population: nsga2's and nsga3's population
  std::optional<hardware_options> hardware{};  // [search.strategy.hw_runner.hardware]
  std::string file;                           // for messages
};

// The objectives the config names: each metric, or their scaled sum ("scaled_sum").
inline std::vector<objective> objectives_of(const search_config& c) {
  std::vector<objective> list;
  for (const metric_spec& m : c.metrics) {
    objective o = is_hardware_metric(m.name) ? objectives::hardware(m.name, c.hardware.value_or(hardware_options{}))
                                             : objectives::by_name(m.name, fmt::format("{}: [search.strategy.metrics]", c.file));
    o.sense = m.sense;
    list.push_back(std::move(o));
  }
  if (!c.sum_scaled_metrics) return list;
  std::vector<double> scales;
  for (const metric_spec& m : c.metrics) scales.push_back(m.scale);
  return {{"scaled_sum", c.sum_direction, [list, scales](const trial_view& t) {
             double sum = 0;
             for (std::size_t i = 0; i < list.size(); ++i) sum += scales[i] * list[i].measure(t);
             return sum;
           }}};
}

// The sampler the config names, with the config's options (nsga3's population). nsga2 and ilp
// need their libraries: programs that link them make those (make_nsga2_sampler, make_ilp_sampler).
inline std::unique_ptr<sampler> make_sampler(const search_config& c) {
  const std::string where = fmt::format("{}: search.strategy.setup.sampler", c.file);
  if (canonical_sampler_name(c.sampler, where) == "nsga3")
    return std::make_unique<nsga3_sampler>(nsga3_sampler::options{.population = c.population});
  return make_sampler(c.sampler, where);
}

// The run's options: the config's, with the uniform points enqueued when it asks for them.
inline search_options options_for(const search_config& c, const search_space& space) {
  search_options options = c.options;
  if (c.enqueue_uniform) options.enqueued = uniform_points(space);
  return options;
}

namespace detail {

struct toml_reader {
  std::string file;

  std::string at(const toml::node& n) const {
    const toml::source_position p = n.source().begin;
    return p.line > 0 ? fmt::format("{}:{}", file, p.line) : file;
  }
  const toml::table& table(const toml::table& parent, std::string_view key, std::string_view path) const {
    const toml::node* n = parent.get(key);
    if (n == nullptr) throw error(fmt::format("{}: there is no [{}] table; add it", file, path));
    const toml::table* t = n->as_table();
    if (t == nullptr) throw error(fmt::format("{}: {} must be a table, [{}]", at(*n), path, path));
    return *t;
  }
  void only(const toml::table& t, std::initializer_list<std::string_view> keys, std::string_view path) const {
    for (const auto& [k, v] : t)
      if (std::find(keys.begin(), keys.end(), k.str()) == keys.end()) {
        std::string list;
        for (std::string_view key : keys) list += fmt::format("{}{}", list.empty() ? "" : ", ", key);
        throw error(fmt::format("{}: [{}]: unknown key \"{}\"; the keys are {}", at(v), path, k.str(), list));
      }
  }
  std::string text(const toml::node& n, std::string_view path) const {
    if (const auto* s = n.as_string()) return s->get();
    throw error(fmt::format("{}: {} must be a string", at(n), path));
  }
  std::int64_t integer(const toml::node& n, std::string_view path, std::int64_t low) const {
    const auto* i = n.as_integer();
    if (i == nullptr || i->get() < low)
      throw error(fmt::format("{}: {} must be an integer of at least {}", at(n), path, low));
    return i->get();
  }
  double number(const toml::node& n, std::string_view path) const {
    if (const auto* d = n.as_floating_point()) return d->get();
    if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
    throw error(fmt::format("{}: {} must be a number", at(n), path));
  }
  bool flag(const toml::node& n, std::string_view path) const {
    if (const auto* b = n.as_boolean()) return b->get();
    throw error(fmt::format("{}: {} must be true or false", at(n), path));
  }
  direction sense(const toml::node& n, std::string_view path) const {
    const std::string d = text(n, path);
    if (d == "maximize") return direction::maximize;
    if (d == "minimize") return direction::minimize;
    throw error(fmt::format("{}: {} must be \"maximize\" or \"minimize\", not \"{}\"", at(n), path, d));
  }
};

using seed_keys = std::vector<std::pair<toml::source_position, std::pair<std::string, choice_list>>>;

// A seed entry's keys and values, checked as the quantize pass will read them, while the file's
// lines are still known: a key no listed arithmetic takes (with the nearest names), and each
// value in turn with the other keys at their first values. A fraction width left to the data
// ("NA", or absent beside a fixed-point width) is checked as 0.
inline void check_seed_choices(const seed_keys& keys, const toml_reader& r, const std::string& path) {
  const auto named = std::find_if(keys.begin(), keys.end(), [](const auto& k) { return k.second.first == "name"; });
  if (named == keys.end()) return;  // nothing to read the keys by; the quantize pass says so
  const auto at = [&](const toml::source_position& p) {
    return p.line > 0 ? fmt::format("{}:{}: [{}]", r.file, p.line, path) : fmt::format("{}: [{}]", r.file, path);
  };
  quant_config first;
  for (const auto& [position, key] : keys) first.insert_or_assign(key.first, key.second.front());
  const auto with_fractions = [](quant_config c) {
    const auto name = c.find("name");
    const std::string* arithmetic = name == c.end() ? nullptr : std::get_if<std::string>(&name->second);
    if (arithmetic == nullptr || (*arithmetic != "integer" && *arithmetic != "fixed")) return c;
    for (std::string_view operand : {"data_in", "weight", "bias", "data_out"}) {
      if (!c.contains(fmt::format("{}_width", operand))) continue;
      const std::string frac = fmt::format("{}_frac_width", operand);
      const auto f = c.find(frac);
      if (f == c.end() || (std::holds_alternative<std::string>(f->second) &&
                           mase::detail::is_none_name(std::get<std::string>(f->second))))
        c.insert_or_assign(frac, std::int64_t{0});
    }
    return c;
  };
  // Keys: each must be one that some listed arithmetic takes.
  for (const auto& [position, key] : keys) {
    if (key.first == "name" || key.first == "bypass") continue;
    std::optional<error> unknown;
    bool known = false;
    for (const quant_config_value& arithmetic : named->second.second) {
      quant_config probe{{"name", arithmetic}, {key.first, key.second.front()}};
      try {
        (void)mase::detail::check_quant_config(probe, at(position));
        known = true;
      } catch (const error& e) {
        if (!unknown) unknown = e;
      }
    }
    if (!known && unknown) throw *unknown;
  }
  // Values: each in turn, for every listed arithmetic that takes all the keys.
  for (const quant_config_value& arithmetic : named->second.second) {
    quant_config base = first;
    base.insert_or_assign("name", arithmetic);
    try {
      (void)mase::detail::check_quant_config(base, at(named->first));
    } catch (const error&) {
      continue;  // this arithmetic does not take every key: the trials that pick it fail, and say why
    }
    for (const auto& [position, key] : keys)
      for (const quant_config_value& value : key.second) {
        if (key.first == "name") continue;
        quant_config c = base;
        c.insert_or_assign(key.first, value);
        try {
          (void)mase::detail::formats_of_config(with_fractions(c), at(position));
        } catch (const error& e) {
          std::string why = e.what();
          if (const std::string prefix = at(position) + ": "; why.starts_with(prefix)) why.erase(0, prefix.size());
          throw error(fmt::format("{}: {} = {} is refused: {}", at(position), key.first, detail::choice_json(value).dump(),
                                  why));
        }
      }
  }
}

inline choice_list choices_from_toml(const toml::node& v, const toml_reader& r, const std::string& path) {
  choice_list list;
  const std::string where = r.at(v) + ": " + path;
  // A list's items are the choices; an item may itself be a list value (block_size = [[1, 16]]).
  const auto add = [&](const toml::node& item) { list.push_back(mase::detail::quant_value_from_toml(item, where, path)); };
  if (const toml::array* a = v.as_array()) {
    for (const toml::node& item : *a) add(item);
    if (list.empty()) throw error(fmt::format("{} is an empty list; give at least one value", where));
  } else {
    add(v);  // a single value: one choice
  }
  return list;
}

inline search_config search_config_from_toml(const toml::table& root, const std::string& file) {
  const toml_reader r{file};
  search_config c;
  c.file = file;
  const toml::table& search = r.table(root, "search", "search");
  r.only(search, {"search_space", "strategy"}, "search");
  const toml::table& space = r.table(search, "search_space", "search.search_space");
  r.only(space, {"name", "setup", "seed"}, "search.search_space");
  if (const toml::node* name = space.get("name")) {
    const std::string n = r.text(*name, "search.search_space.name");
    if (n != "graph/quantize/mixed_precision_ptq")
      throw error(fmt::format("{}: search.search_space.name is \"{}\"; mase searches "
                              "\"graph/quantize/mixed_precision_ptq\"",
                              r.at(*name), n));
  }
  const toml::table& setup = r.table(space, "setup", "search.search_space.setup");
  r.only(setup, {"by"}, "search.search_space.setup");
  const std::string by = setup.get("by") ? r.text(*setup.get("by"), "search.search_space.setup.by") : "name";
  if (by == "name") c.space.by = quantize_by::name;
  else if (by == "type") c.space.by = quantize_by::type;
  else if (by == "regex_name") c.space.by = quantize_by::regex_name;
  else
    throw error(fmt::format("{}: search.search_space.setup.by must be \"name\", \"type\" or \"regex_name\", not \"{}\"",
                            r.at(*setup.get("by")), by));
  c.space.source = {.file = file, .table = "search.search_space"};
  const toml::table& seed = r.table(space, "seed", "search.search_space.seed");
  std::vector<std::pair<toml::source_position, seed_config>> entries;
  for (const auto& [key, value] : seed) {
    const std::string path = fmt::format("search.search_space.seed.{}", mase::detail::toml_key(key.str()));
    const toml::table* entry = value.as_table();
    if (entry == nullptr) throw error(fmt::format("{}: {} must be a table holding a config table", r.at(value), path));
    r.only(*entry, {"config"}, path);
    const toml::table& config = r.table(*entry, "config", path + ".config");
    seed_config s{.key = std::string(key.str()), .choices = {}};
    std::vector<std::pair<toml::source_position, std::pair<std::string, choice_list>>> keys;
    for (const auto& [k, v] : config)
      keys.push_back({v.source().begin, {std::string(k.str()), choices_from_toml(v, r, path + ".config." + std::string(k.str()))}});
    std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
      return a.first.line != b.first.line ? a.first.line < b.first.line : a.first.column < b.first.column;
    });
    check_seed_choices(keys, r, path + ".config");
    for (auto& k : keys) s.choices.push_back(std::move(k.second));
    entries.push_back({config.source().begin, std::move(s)});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.first.line != b.first.line ? a.first.line < b.first.line : a.first.column < b.first.column;
  });
  for (auto& e : entries) c.space.seed.push_back(std::move(e.second));

  const toml::table& strategy = r.table(search, "strategy", "search.strategy");
  r.only(strategy, {"name", "eval_mode", "setup", "metrics", "sw_runner", "hw_runner"}, "search.strategy");
  if (const toml::node* name = strategy.get("name")) {
    const std::string n = r.text(*name, "search.strategy.name");
    if (n != "optuna" && n != "mase")
      throw error(fmt::format("{}: search.strategy.name is \"{}\"; give \"optuna\" (MASE's) or \"mase\"", r.at(*name), n));
  }
  if (const toml::node* e = strategy.get("eval_mode")) r.flag(*e, "search.strategy.eval_mode");
  const toml::table& s = r.table(strategy, "setup", "search.strategy.setup");
  r.only(s, {"n_trials", "n_jobs", "timeout", "sampler", "sum_scaled_metrics", "direction", "seed", "batch_size", "eval", "enqueue",
          "population"},
         "search.strategy.setup");
  if (const toml::node* v = s.get("n_trials")) c.options.trials = static_cast<std::size_t>(r.integer(*v, "search.strategy.setup.n_trials", 1));
  if (const toml::node* v = s.get("n_jobs")) c.options.jobs = static_cast<std::size_t>(r.integer(*v, "search.strategy.setup.n_jobs", 0));
  if (const toml::node* v = s.get("timeout")) c.options.timeout_seconds = r.number(*v, "search.strategy.setup.timeout");
  if (const toml::node* v = s.get("seed")) c.options.seed = static_cast<std::uint64_t>(r.integer(*v, "search.strategy.setup.seed", 0));
  if (const toml::node* v = s.get("batch_size")) c.options.batch_size = static_cast<std::size_t>(r.integer(*v, "search.strategy.setup.batch_size", 1));
  if (const toml::node* v = s.get("sampler")) {
    c.sampler = r.text(*v, "search.strategy.setup.sampler");
    check_sampler_name(c.sampler, r.at(*v) + ": search.strategy.setup.sampler");
  }
  if (const toml::node* v = s.get("sum_scaled_metrics")) c.sum_scaled_metrics = r.flag(*v, "search.strategy.setup.sum_scaled_metrics");
  if (const toml::node* v = s.get("direction")) c.sum_direction = r.sense(*v, "search.strategy.setup.direction");
  if (const toml::node* v = s.get("population"))
    c.population = static_cast<std::size_t>(r.integer(*v, "search.strategy.setup.population", 8));
  if (const toml::node* v = s.get("enqueue")) {
    const std::string what = r.text(*v, "search.strategy.setup.enqueue");
    if (what != "uniform" && what != "none")
      throw error(fmt::format("{}: search.strategy.setup.enqueue must be \"uniform\" (the space's uniform points are "
                              "the first trials) or \"none\", not \"{}\"",
                              r.at(*v), what));
    c.enqueue_uniform = what == "uniform";
  }
  if (const toml::node* v = s.get("eval")) {
    const std::string mode = r.text(*v, "search.strategy.setup.eval");
    if (mode == "fake-quant" || mode == "fake_quant") c.options.mode = eval_mode::fake_quant;
    else if (mode == "bit-exact" || mode == "bit_exact") c.options.mode = eval_mode::bit_exact;
    else throw error(fmt::format("{}: search.strategy.setup.eval must be \"fake-quant\" or \"bit-exact\", not \"{}\"", r.at(*v), mode));
  }

  std::vector<std::string> software, hardware;
  if (const toml::node* sw = strategy.get("sw_runner")) {
    const toml::table* t = sw->as_table();
    if (t == nullptr) throw error(fmt::format("{}: search.strategy.sw_runner must be a table", r.at(*sw)));
    r.only(*t, {"basic_evaluation"}, "search.strategy.sw_runner");
    const toml::table& basic = r.table(*t, "basic_evaluation", "search.strategy.sw_runner.basic_evaluation");
    r.only(basic, {"data_loader", "num_samples"}, "search.strategy.sw_runner.basic_evaluation");
    if (const toml::node* n = basic.get("num_samples"))
      c.num_samples = r.integer(*n, "search.strategy.sw_runner.basic_evaluation.num_samples", 1);
    software = {"accuracy", "loss", "agreement", "output_mse"};
  }
  if (const toml::node* hw = strategy.get("hw_runner")) {
    const toml::table* t = hw->as_table();
    if (t == nullptr) throw error(fmt::format("{}: search.strategy.hw_runner must be a table", r.at(*hw)));
    r.only(*t, {"average_bitwidth", "average_data_bitwidth", "bops", "model_size", "hardware"}, "search.strategy.hw_runner");
    for (const auto& [k, v] : *t) {
      const toml::table* runner = v.as_table();
      if (runner == nullptr) throw error(fmt::format("{}: search.strategy.hw_runner.{} must be a table", r.at(v), k.str()));
      if (k.str() == "hardware") {
        r.only(*runner, {"max_parallelism"}, "search.strategy.hw_runner.hardware");
        hardware_options options;
        if (const toml::node* p = runner->get("max_parallelism")) {
          const toml::array* list = p->as_array();
          const std::string key = "search.strategy.hw_runner.hardware.max_parallelism";
          if (list == nullptr || list->empty() || list->size() > options.max_parallelism.size())
            throw error(fmt::format("{}: {} must be a list of 1 to 4 lane counts, e.g. [4, 4]", r.at(*p), key));
          for (std::size_t i = 0; i < options.max_parallelism.size(); ++i)
            options.max_parallelism[i] = static_cast<int>(r.integer(*list->get(std::min(i, list->size() - 1)), key, 1));
        }
        c.hardware = options;
        c.space.hardware_formats = true;
        hardware.insert(hardware.end(), hardware_metrics.begin(), hardware_metrics.end());
        continue;
      }
      r.only(*runner, {"compare_to"}, fmt::format("search.strategy.hw_runner.{}", k.str()));
      hardware.emplace_back(k.str());
    }
  }
  const toml::table& metrics = r.table(strategy, "metrics", "search.strategy.metrics");
  std::vector<std::pair<toml::source_position, metric_spec>> listed;
  for (const auto& [k, v] : metrics) {
    const std::string name(k.str()), path = fmt::format("search.strategy.metrics.{}", name);
    const toml::table* m = v.as_table();
    if (m == nullptr) throw error(fmt::format("{}: {} must be a table with scale and direction", r.at(v), path));
    r.only(*m, {"scale", "direction"}, path);
    metric_spec spec{.name = name, .scale = 1.0, .sense = direction::maximize};
    if (const toml::node* x = m->get("scale")) spec.scale = r.number(*x, path + ".scale");
    if (const toml::node* x = m->get("direction")) spec.sense = r.sense(*x, path + ".direction");
    if (!is_hardware_metric(name)) (void)objectives::by_name(name, r.at(v) + ": " + path);  // a metric mase measures
    const bool measured = std::find(software.begin(), software.end(), name) != software.end() ||
                          std::find(hardware.begin(), hardware.end(), name) != hardware.end();
    if (!measured) {
      const bool is_software = name == "accuracy" || name == "loss" || name == "agreement" || name == "output_mse";
      throw error(fmt::format("{}: {}: no runner measures it; add [search.strategy.{}]", r.at(v), path,
                              is_software                ? std::string("sw_runner.basic_evaluation")
                              : is_hardware_metric(name) ? std::string("hw_runner.hardware")
                                                         : "hw_runner." + name));
    }
    listed.push_back({v.source().begin, std::move(spec)});
  }
  if (listed.empty()) throw error(fmt::format("{}: [search.strategy.metrics] names no metric; add e.g. accuracy.direction = \"maximize\"", file));
  std::stable_sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) {
    return a.first.line != b.first.line ? a.first.line < b.first.line : a.first.column < b.first.column;
  });
  for (auto& m : listed) c.metrics.push_back(std::move(m.second));
  return c;
}

}  // namespace detail

inline search_config parse_search_config(std::string_view text, std::string_view file = "<string>") {
  return detail::search_config_from_toml(mase::detail::parse_toml(text, file), std::string(file));
}

inline search_config load_search_config(const std::filesystem::path& path) {
  return parse_search_config(mase::detail::read_config_text(path, "search config"), path.string());
}

}  // namespace mase::search
