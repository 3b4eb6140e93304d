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
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

struct objective_info {
  std::string name;
  direction sense = direction::maximize;
};

struct study {
  search_space space;
  std::vector<objective_info> objectives;
  std::vector<trial> trials;  // by trial number: every trial of the journal, those this run did not reach included
  range_table ranges;         // what "NA" fraction widths were derived from
  graph base;                 // the searched graph with its common metadata: what every trial quantized
  double sampler_seconds = 0;  // time spent choosing points, this run
  std::size_t sampled = 0;     // points chosen this run
  std::size_t measurements = 0;  // evaluations that are not trials (the ILP's sensitivities)
  std::size_t reissued = 0;      // trials given to another MPI rank after theirs timed out

  // A trial's values with every objective minimized (maximized ones negated); a NaN (an
  // objective with nothing to measure) is the worst value, so orders and fronts stay defined.
  objective_vector minimized(const trial& t) const {
    objective_vector v(t.values.size());
    for (std::size_t k = 0; k < v.size(); ++k)
      v[k] = std::isnan(t.values[k])                     ? std::numeric_limits<double>::infinity()
             : objectives[k].sense == direction::maximize ? -t.values[k]
                                                          : t.values[k];
    return v;
  }

  // A point of the front: the first trial with its objective values, and the later ones with
  // the same values (indices into `trials`).
  struct front_point {
    std::size_t index = 0;
    std::vector<std::size_t> same{};
  };

  // The Pareto front, each objective vector once: of the successful trials no other trial
  // dominates, the first (by position in `trials`, trial order after run_search) of each set
  // with equal values stands for the others. Different configs often score the same (an
  // accuracy on a finite data set, bits averaged over few layers), so a long search's front
  // would otherwise repeat its points many times.
  std::vector<front_point> distinct_front() const {
    std::vector<std::size_t> ok;
    std::vector<objective_vector> values;
    for (std::size_t i = 0; i < trials.size(); ++i)
      if (trials[i].ok()) ok.push_back(i), values.push_back(minimized(trials[i]));
    std::vector<front_point> front;
    std::map<objective_vector, std::size_t> seen;  // values → position in `front`
    for (std::size_t k : search::pareto_front(values)) {
      const auto [at, first] = seen.try_emplace(values[k], front.size());
      if (first) front.push_back({ok[k], {}});
      else front[at->second].same.push_back(ok[k]);
    }
    return front;
  }

  // The first trial of each point of distinct_front(), in trial order.
  std::vector<std::size_t> pareto_front() const {
    std::vector<std::size_t> front;
    for (const front_point& p : distinct_front()) front.push_back(p.index);
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
  // The graph as the trial quantized it.
  graph quantized(const trial& t) const {
    return graph_with<fact::common_metadata>(base) | quantize(config_of(base, t));
  }
};

struct search_options {
  std::size_t trials = 100;      // in all, those resumed from the journal included (a journal holding more keeps them)
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
    if (!data.labels.empty() && !out.empty() && out[0].rank() == 2)  // [samples, classes], what accuracy reads
      check_labels(data.labels, out[0].shape()[0], out[0].shape()[1], "search: the labels");
    ranges_ = measure_ranges(base_, data.calibration.empty() ? data.inputs : data.calibration);
  }

  // Quantizes the graph at `p`, evaluates it and measures every objective; a failure (a config
  // the quantize pass refuses, an objective that throws) is recorded in the trial.
  trial run(std::size_t number, const point& p) const {
    trial t{.number = number, .choices = p, .values = {}, .seconds = 0, .failure = {}};
    const auto begin = std::chrono::steady_clock::now();
    try {
      t.values = measure(config_at(p));
    } catch (const std::exception& e) {
      t.values.clear();
      t.failure = e.what();
    }
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return t;
  }

  // Every objective's value (in its own sense) for the graph quantized by `config`.
  std::vector<double> measure(const quantize_config& config) const {
    auto [quantized, info] = mase::run(graph_with<fact::common_metadata>(base_), quantize(config));
    (void)info;
    evaluator model(quantized, mode_);
    const std::span<const tensor> out = model.run(data_->inputs);
    const trial_view view{quantized, out, float_outputs_, *data_};
    std::vector<double> values;
    for (const objective& o : objectives_) values.push_back(o.measure(view));
    return values;
  }

  quantize_config config_at(const point& p) const { return space_->config_at(base_, p, &ranges_); }
  quantize_config config_of_subjects(const point& p, std::span<const std::size_t> subjects) const {
    return space_->config_of_subjects(base_, p, subjects, &ranges_);
  }
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

namespace detail {

// Calls task(0), …, task(count - 1) on `jobs` threads (0: one per core); the first exception
// stops them and is rethrown.
template <class Task>
void run_on_threads(std::size_t jobs, std::size_t count, Task&& task) {
  std::mutex guard;
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  const auto worker = [&] {
    try {
      for (std::size_t i = next++; i < count; i = next++) task(i);
    } catch (...) {
      const std::lock_guard lock(guard);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (std::size_t j = 1; j < std::min(jobs, count); ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

// Where trials run: points[k] for each k in `pending` is trial first + k; `finished` is called
// with each trial as it ends, one call at a time. And where measurements run (in order).
using trial_executor = std::function<void(const trial_runner&, std::size_t first, const std::vector<point>& points,
                                          const std::vector<std::size_t>& pending,
                                          const std::function<void(trial)>& finished)>;
using measure_executor =
    std::function<std::vector<std::vector<double>>(const trial_runner&, const std::vector<subject_request>&)>;

inline trial_executor thread_executor(std::size_t jobs) {
  return [jobs](const trial_runner& runner, std::size_t first, const std::vector<point>& points,
                const std::vector<std::size_t>& pending, const std::function<void(trial)>& finished) {
    std::mutex guard;
    run_on_threads(jobs, pending.size(), [&](std::size_t i) {
      trial t = runner.run(first + pending[i], points[pending[i]]);
      const std::lock_guard lock(guard);
      finished(std::move(t));
    });
  };
}

inline measure_executor thread_measurer(std::size_t jobs) {
  return [jobs](const trial_runner& runner, const std::vector<subject_request>& requests) {
    std::vector<std::vector<double>> values(requests.size());
    run_on_threads(jobs, requests.size(), [&](std::size_t k) {
      values[k] = runner.measure(runner.config_of_subjects(requests[k].choices, requests[k].subjects));
    });
    return values;
  };
}

// run_search's trials: numbered in order, replayed from the journal when it holds them (so a
// resumed search gives its strategy the same history), else run by the executor and journaled
// as each finishes.
class journaled_batches final : public trial_batches {
public:
  journaled_batches(const trial_runner& runner, const search_space& space, const search_options& options, study& result,
                    std::optional<journal>& log, std::vector<std::string> names, trial_executor execute,
                    measure_executor measurer)
      : runner_(runner), space_(space), options_(options), result_(result), log_(log), names_(std::move(names)),
        execute_(std::move(execute)), measurer_(std::move(measurer)), started_(std::chrono::steady_clock::now()) {
    if (log_)
      for (const trial& t : log_->recovered()) recovered_.insert_or_assign(t.number, t);
  }

  std::size_t batch_size() const override { return options_.batch_size; }
  // The journal's trials this run did not reach (a resumed search given fewer trials than the
  // journal holds): they are still the search's, so its front and best follow the whole journal.
  void keep_unreached() {
    for (auto& [number, t] : recovered_)
      if (number >= next_) result_.trials.push_back(t);
  }
  std::size_t budget_left() const override {
    if (options_.timeout_seconds &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() > *options_.timeout_seconds)
      return 0;
    return options_.trials - std::min(options_.trials, next_);
  }
  std::uint64_t seed() const override { return options_.seed; }
  std::size_t objective_count() const override { return result_.objectives.size(); }
  std::span<const observation> history() const override { return history_; }
  std::vector<objective_vector> measure(const std::vector<subject_request>& requests) override {
    std::vector<objective_vector> values;
    for (const std::vector<double>& v : measurer_(runner_, requests))
      values.push_back(result_.minimized(trial{.number = 0, .choices = {}, .values = v, .seconds = 0, .failure = {}}));
    result_.measurements += requests.size();
    return values;
  }
  void add_sampling_time(double seconds, std::size_t points) override {
    result_.sampler_seconds += seconds;
    result_.sampled += points;
  }

  std::vector<objective_vector> evaluate(const std::vector<point>& points) override {
    if (points.empty()) return {};
    const std::size_t first = next_;
    next_ += points.size();
    std::vector<std::optional<trial>> done(points.size());
    std::vector<std::size_t> pending;
    for (std::size_t k = 0; k < points.size(); ++k) {
      if (points[k].size() != space_.dimensions.size())
        throw error(fmt::format("search: a point has {} indices; the space has {} dimensions", points[k].size(),
                                space_.dimensions.size()));
      const auto it = recovered_.find(first + k);
      if (it == recovered_.end()) {
        pending.push_back(k);
        continue;
      }
      if (it->second.choices != points[k])
        throw error(fmt::format("search journal {}: trial {} there chose other values than this search does (another "
                                "version of mase wrote it?); choose another output directory",
                                options_.journal.string(), first + k));
      done[k] = it->second;
    }
    execute_(runner_, first, points, pending, [&](trial t) {
      if (log_) log_->append(space_, names_, t);
      result_.trials.push_back(t);
      if (options_.on_trial) options_.on_trial(result_, result_.trials.back());
      const std::size_t k = t.number - first;
      done[k] = std::move(t);
    });

    std::vector<objective_vector> values;
    for (std::size_t k = 0; k < points.size(); ++k) {
      const trial& t = *done[k];
      if (recovered_.contains(t.number)) result_.trials.push_back(t);
      values.push_back(t.ok() ? result_.minimized(t) : objective_vector{});
      if (t.ok()) history_.push_back({t.number, t.choices, values.back()});
    }
    // Every trial of the first batch failing is a config error, not bad luck: say which.
    if (first == 0 && std::none_of(done.begin(), done.end(), [](const auto& t) { return t->ok(); }))
      throw error(fmt::format("search: every trial of the first batch failed; the first: {}", done.front()->failure));
    return values;
  }

private:
  const trial_runner& runner_;
  const search_space& space_;
  const search_options& options_;
  study& result_;
  std::optional<journal>& log_;
  std::vector<std::string> names_;
  trial_executor execute_;
  measure_executor measurer_;
  std::chrono::steady_clock::time_point started_;
  std::map<std::size_t, trial> recovered_;
  std::vector<observation> history_;
  std::size_t next_ = 0;
};

// run_search with the trials and measurements run where the executors say (threads, MPI ranks).
inline study run_search_with(const graph& g, const search_space& space, sampler& strategy,
                             const std::vector<objective>& objs, const evaluation_data& data,
                             const search_options& options, const trial_executor& execute,
                             const measure_executor& measurer) {
  if (options.batch_size == 0) throw error("search: batch_size must be at least 1");
  if (data.inputs.empty()) throw error("search: no evaluation data; give the model's inputs");
  const trial_runner runner(g, space, objs, data, options.mode);

  study result;
  result.space = space;
  for (const objective& o : objs) result.objectives.push_back({o.name, o.sense});
  result.ranges = runner.ranges();
  result.base = runner.base();
  std::vector<std::string> names;
  for (const objective& o : objs) names.push_back(o.name);
  std::optional<journal> log;
  if (!options.journal.empty()) log.emplace(options.journal, search_header(space, strategy, objs, options));

  journaled_batches batches(runner, space, options, result, log, names, execute, measurer);
  // Enqueued points (Optuna's enqueue_trial) in batches of their own, then the strategy.
  for (std::size_t at = 0; at < options.enqueued.size() && batches.budget_left() > 0;) {
    const std::size_t count = std::min({options.batch_size, options.enqueued.size() - at, batches.budget_left()});
    batches.evaluate(std::vector<point>(options.enqueued.begin() + static_cast<std::ptrdiff_t>(at),
                                        options.enqueued.begin() + static_cast<std::ptrdiff_t>(at + count)));
    at += count;
  }
  strategy.drive(space, batches);
  batches.keep_unreached();
  std::sort(result.trials.begin(), result.trials.end(),
            [](const trial& a, const trial& b) { return a.number < b.number; });
  return result;
}

}  // namespace detail

// Runs a search over `g` (a graph as imported or built: the metadata passes run here): the
// enqueued points first, then the strategy's, `options.trials` in all, on `options.jobs` threads.
inline study run_search(const graph& g, const search_space& space, sampler& strategy,
                        const std::vector<objective>& objs, const evaluation_data& data,
                        const search_options& options = {}) {
  return detail::run_search_with(g, space, strategy, objs, data, options, detail::thread_executor(options.jobs),
                                 detail::thread_measurer(options.jobs));
}

}  // namespace mase::search
