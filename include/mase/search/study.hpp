#pragma once
// The search: sample points of a space, quantize the graph at each, evaluate it on the data,
// score it on the objectives, keep every trial and the Pareto front.
//
// Trials go in batches of `batch_size` (fixed, so results do not depend on the number of
// threads); the trials of a batch run on `jobs` threads, each with its own copy of the graph and
// its own evaluator, and the data, its float32 outputs and the calibration ranges are computed
// once. With a journal, each finished trial is written before another starts, and a search given
// its own journal back resumes where it stopped.

#include <mase/core/error.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/ir/graph.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/search/journal.hpp>
#include <mase/search/objective.hpp>
#include <mase/search/pareto.hpp>
#include <mase/search/sampler.hpp>
#include <mase/search/space.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace mase::search {

struct objective_info {
  std::string name;
  direction sense = direction::maximize;
};

struct study {
  search_space space;
  std::vector<objective_info> objectives;
  std::vector<trial> trials;  // by trial number, those resumed from a journal included
  range_table ranges;         // what "NA" fraction widths were derived from
  double sampler_seconds = 0;  // time spent choosing points, this run
  std::size_t sampled = 0;     // points chosen this run

  // A trial's values with every objective minimized (maximized ones negated).
  objective_vector minimized(const trial& t) const {
    objective_vector v(t.values.size());
    for (std::size_t k = 0; k < v.size(); ++k)
      v[k] = objectives[k].sense == direction::maximize ? -t.values[k] : t.values[k];
    return v;
  }

  // The successful trials no other trial dominates (indices into `trials`), in trial order.
  std::vector<std::size_t> pareto_front() const {
    std::vector<std::size_t> ok;
    std::vector<objective_vector> values;
    for (std::size_t i = 0; i < trials.size(); ++i)
      if (trials[i].ok()) ok.push_back(i), values.push_back(minimized(trials[i]));
    std::vector<std::size_t> front;
    for (std::size_t i : search::pareto_front(values)) front.push_back(ok[i]);
    return front;
  }

  // The front's point best on the first objective, ties broken by the next ones.
  std::optional<std::size_t> best() const {
    std::optional<std::size_t> chosen;
    for (std::size_t i : pareto_front())
      if (!chosen || minimized(trials[i]) < minimized(trials[*chosen])) chosen = i;
    return chosen;
  }

  // The quantize config a trial used (by node name), for `graph`, the searched graph.
  quantize_config config_of(const graph& g, const trial& t) const { return space.config_at(g, t.choices, &ranges); }
};

struct search_options {
  std::size_t trials = 100;      // in all, those resumed from the journal included
  std::size_t jobs = 1;          // threads; 0: one per core
  std::size_t batch_size = 8;    // points asked for at once (results depend on it, not on jobs)
  std::uint64_t seed = 0;
  eval_mode mode = eval_mode::fake_quant;  // or bit_exact
  std::optional<double> timeout_seconds{};  // no new batch starts after it (MASE's setup.timeout)
  std::filesystem::path journal{};          // empty: none
  std::vector<point> enqueued{};            // evaluated first, as trials 0, 1, … (e.g. uniform_points)
  std::function<void(const study&, const trial&)> on_trial{};  // after each trial, one at a time
};

namespace detail {

inline nlohmann::json search_header(const search_space& space, const sampler& s, const std::vector<objective>& objs,
                                    const search_options& options) {
  nlohmann::json dims = nlohmann::json::array();
  for (std::size_t i = 0; i < space.dimensions.size(); ++i) {
    nlohmann::json choices = nlohmann::json::array();
    for (const quant_config_value& v : space.dimensions[i].choices) choices.push_back(choice_json(v));
    dims.push_back({{"name", space.dimension_name(i)}, {"choices", std::move(choices)}});
  }
  nlohmann::json list = nlohmann::json::array();
  for (const objective& o : objs) list.push_back({{"name", o.name}, {"direction", std::string(to_string(o.sense))}});
  return {{"mase_search", 1},
          {"by", std::string(to_string(space.by))},
          {"dimensions", std::move(dims)},
          {"sampler", std::string(s.name())},
          {"seed", options.seed},
          {"batch_size", options.batch_size},
          {"enqueued", options.enqueued},
          {"mode", std::string(to_string(options.mode))},
          {"objectives", std::move(list)}};
}

}  // namespace detail

// Evaluates points of a space: the graph's metadata, its float32 outputs on the data and the
// calibration ranges are computed once; run() may be called from several threads at once.
class trial_runner {
public:
  trial_runner(const graph& g, const search_space& space, std::vector<objective> objs, const evaluation_data& data,
               eval_mode mode)
      : space_(&space), objectives_(std::move(objs)), data_(&data), mode_(mode),
        base_(g | init_metadata | add_common_metadata(data.inputs, {.add_value = false})) {
    if (objectives_.empty()) throw error("search: no objective; give at least one (objectives::accuracy(), …)");
    for (std::size_t i = 0; i < objectives_.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (objectives_[i].name == objectives_[j].name)
          throw error(fmt::format("search: objective {} is given twice", objectives_[i].name));
    if (mode == eval_mode::float32) throw error("search: evaluate trials fake-quant or bit-exact, not float32");
    evaluator float_model(base_);
    const std::span<const tensor> out = float_model.run(data.inputs);
    float_outputs_.assign(out.begin(), out.end());
    ranges_ = measure_ranges(base_, data.calibration.empty() ? data.inputs : data.calibration);
  }

  // Quantizes the graph at `p`, evaluates it and measures every objective; a failure (a config
  // the quantize pass refuses, an objective that throws) is recorded in the trial.
  trial run(std::size_t number, const point& p) const {
    trial t{.number = number, .choices = p, .values = {}, .seconds = 0, .failure = {}};
    const auto begin = std::chrono::steady_clock::now();
    try {
      auto [quantized, info] = mase::run(graph_with<fact::common_metadata>(base_), quantize(config_at(p)));
      (void)info;
      evaluator model(quantized, mode_);
      const std::span<const tensor> out = model.run(data_->inputs);
      const trial_view view{quantized, out, float_outputs_, *data_};
      for (const objective& o : objectives_) t.values.push_back(o.measure(view));
    } catch (const std::exception& e) {
      t.values.clear();
      t.failure = e.what();
    }
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return t;
  }

  quantize_config config_at(const point& p) const { return space_->config_at(base_, p, &ranges_); }
  const graph& base() const noexcept { return base_; }
  const range_table& ranges() const noexcept { return ranges_; }
  const std::vector<objective>& objectives() const noexcept { return objectives_; }
  std::span<const tensor> float_outputs() const noexcept { return float_outputs_; }

private:
  const search_space* space_;
  std::vector<objective> objectives_;
  const evaluation_data* data_;
  eval_mode mode_;
  graph base_;
  std::vector<tensor> float_outputs_;
  range_table ranges_;
};

// Runs a search over `g` (a graph as imported or built: the metadata passes run here).
inline study run_search(const graph& g, const search_space& space, sampler& strategy,
                        const std::vector<objective>& objs, const evaluation_data& data,
                        const search_options& options = {}) {
  if (options.batch_size == 0) throw error("search: batch_size must be at least 1");
  if (data.inputs.empty()) throw error("search: no evaluation data; give the model's inputs");
  const trial_runner runner(g, space, objs, data, options.mode);

  study result;
  result.space = space;
  for (const objective& o : objs) result.objectives.push_back({o.name, o.sense});
  result.ranges = runner.ranges();
  std::vector<std::string> names;
  for (const objective& o : objs) names.push_back(o.name);

  std::optional<journal> log;
  if (!options.journal.empty()) {
    log.emplace(options.journal, detail::search_header(space, strategy, objs, options));
    for (const trial& t : log->recovered())
      if (t.choices.size() == space.dimensions.size()) result.trials.push_back(t);
  }
  const auto has_trial = [&](std::size_t number) {
    return std::any_of(result.trials.begin(), result.trials.end(), [&](const trial& t) { return t.number == number; });
  };

  const std::size_t jobs = options.jobs != 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  const auto started = std::chrono::steady_clock::now();
  std::mutex guard;

  const auto run_trial = [&](std::size_t number, const point& p) {
    trial t = runner.run(number, p);
    const std::lock_guard lock(guard);
    if (log) log->append(space, names, t);
    result.trials.push_back(std::move(t));
    if (options.on_trial) options.on_trial(result, result.trials.back());
  };

  for (std::size_t batch = 0; batch * options.batch_size < options.trials; ++batch) {
    if (options.timeout_seconds &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > *options.timeout_seconds)
      break;
    const std::size_t first = batch * options.batch_size;
    const std::size_t count = std::min(options.batch_size, options.trials - first);
    bool all_done = true;
    for (std::size_t n = first; n < first + count; ++n) all_done = all_done && has_trial(n);
    if (all_done) continue;

    // The batch sees the successful trials of earlier batches, in trial order.
    std::sort(result.trials.begin(), result.trials.end(),
              [](const trial& a, const trial& b) { return a.number < b.number; });
    std::vector<observation> history;
    for (const trial& t : result.trials)
      if (t.number < first && t.ok()) history.push_back({t.number, &t.choices, result.minimized(t)});
    // Enqueued points first (Optuna's enqueue_trial), then the sampler's, numbered after them.
    std::vector<point> points;
    for (std::size_t n = first; n < first + count && n < options.enqueued.size(); ++n) {
      if (options.enqueued[n].size() != space.dimensions.size())
        throw error(fmt::format("search: enqueued point {} has {} indices; the space has {} dimensions", n,
                                options.enqueued[n].size(), space.dimensions.size()));
      points.push_back(options.enqueued[n]);
    }
    if (points.size() < count) {
      random_stream random = batch_stream(options.seed, batch);
      const std::size_t sampler_first = first + points.size() - std::min(first + points.size(), options.enqueued.size());
      const auto ask_begin = std::chrono::steady_clock::now();
      const std::vector<point> asked = strategy.ask(space, history, sampler_first, count - points.size(), random);
      result.sampler_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - ask_begin).count();
      result.sampled += asked.size();
      points.insert(points.end(), asked.begin(), asked.end());
    }

    std::vector<std::size_t> pending;
    for (std::size_t k = 0; k < points.size(); ++k)
      if (!has_trial(first + k)) pending.push_back(k);
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    const auto worker = [&] {
      try {
        for (std::size_t i = next++; i < pending.size(); i = next++) run_trial(first + pending[i], points[pending[i]]);
      } catch (...) {  // the journal could not be written: stop, and say so
        const std::lock_guard lock(guard);
        if (!failure) failure = std::current_exception();
      }
    };
    std::vector<std::thread> threads;
    for (std::size_t j = 1; j < std::min(jobs, pending.size()); ++j) threads.emplace_back(worker);
    worker();
    for (std::thread& t : threads) t.join();
    if (failure) std::rethrow_exception(failure);

    // Every trial of the first batch failing is a config error, not bad luck: say which.
    if (first == 0 && std::none_of(result.trials.begin(), result.trials.end(), [](const trial& t) { return t.ok(); }))
      throw error(fmt::format("search: every trial of the first batch failed; the first: {}",
                              result.trials.front().failure));
    if (points.size() < count) break;  // the sampler has no more points (grid at its end)
  }
  std::sort(result.trials.begin(), result.trials.end(),
            [](const trial& a, const trial& b) { return a.number < b.number; });
  return result;
}

}  // namespace mase::search
