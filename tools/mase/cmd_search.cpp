// mase search: mixed-precision search with MASE's search TOML (docs/search.md). Writes into the
// output folder trials.jsonl (the journal: the same command resumes from it), pareto.csv,
// pareto.svg, best.toml and pareto/trial_<N>.toml (MASE quantize configs that mase quantize,
// mase run -c and mase emit-verilog take as they are); with --synth, each front trial's design
// under hardware/trial_<N> and pareto_synthesis.csv (the cost model beside yosys).
#include "cli.hpp"

#include <mase/core/project_folder.hpp>
#include <mase/core/temp_file.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/io/quant_config.hpp>
#include <mase/search.hpp>
#include <mase/verilog.hpp>
#if MASE_WITH_PAGMO
#include <mase/search/nsga2.hpp>
#endif
#if MASE_WITH_GLPK
#include <mase/search/ilp.hpp>
#endif
#if MASE_WITH_MPI
#include <mase/search/mpi.hpp>

#include <cstdlib>  // getenv
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <cmath>
#include <iostream>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace mase_cli {

namespace {

namespace search = mase::search;

// The first `count` samples (rows of the first dimension) of `t`.
mase::tensor first_samples(const mase::tensor& t, std::int64_t count) {
  if (t.rank() == 0 || t.shape()[0] <= count) return t;
  mase::shape s = t.shape();
  const std::size_t per_sample = t.size() / static_cast<std::size_t>(s[0]);
  s[0] = count;
  return mase::tensor(s, std::vector<float>(t.data(), t.data() + per_sample * static_cast<std::size_t>(count)));
}

// The labels file: one class per sample of --data, each a class of the model's first output.
std::vector<std::int64_t> read_labels(const fs::path& file, std::int64_t samples, std::int64_t classes) {
  const mase::tensor t = read_tensor_file(file);
  const std::string where = fmt::format("--labels {}", file.string());
  if (t.rank() != 1 && !(t.rank() == 2 && t.shape()[1] == 1))
    throw mase::error(fmt::format("{}: it has shape {}; labels are one class per sample, shape [{}]", where,
                                  mase::to_string(t.shape()), samples));
  std::vector<std::int64_t> labels;
  for (float v : t.values()) {
    if (v != std::floor(v) || v < 0)
      throw mase::error(fmt::format("{}: {} is not a class number (labels are integers from 0)", where, v));
    labels.push_back(static_cast<std::int64_t>(v));
  }
  search::check_labels(labels, samples, classes > 0 ? classes : std::numeric_limits<std::int64_t>::max(), where);
  return labels;
}

// The number of classes of the model's first output ([samples, classes]), from the ops' shape
// rules (the model was imported at the data's shapes; nothing is evaluated); 0 for another rank.
std::int64_t classes_of(const loaded_model& model) {
  const mase::graph g = model.graph | mase::init_metadata | mase::add_common_metadata;
  const auto id = g.find(model.outputs.front().node);
  if (!id) return 0;
  const auto& results = g[*id].meta.common.results;
  const auto out = results.find("data_out_0");
  return out == results.end() || out->second.shape.size() != 2 ? 0 : out->second.shape[1];
}

// What a search writes in its folder (the marker aside): no input may be one of these.
constexpr std::array<std::string_view, 7> search_outputs{"trials.jsonl", "pareto.csv", "pareto.svg", "best.toml",
                                                         "pareto_synthesis.csv", "pareto", "hardware"};

std::string values_text(const search::study& s, const search::trial& t) {
  std::string text;
  for (std::size_t k = 0; k < t.values.size(); ++k)
    text += fmt::format("{}{} {:.6g}", text.empty() ? "" : ", ", s.objectives[k].name, t.values[k]);
  return text;
}

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 5400) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

#if MASE_WITH_MPI
// MPI for the length of the command, when mpirun (or another launcher) started it: OpenMPI and
// MPICH set these variables in every rank they start.
class mpi_session {
public:
  mpi_session() {
    if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr && std::getenv("PMI_SIZE") == nullptr) return;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    started_ = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;
  ~mpi_session() {
    if (started_) MPI_Finalize();
  }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

private:
  bool started_ = false;
  int rank_ = 0, size_ = 1;
};
#endif

// --synth: each front trial emitted and synthesized, the cost model's estimate beside yosys's.
void synthesize_front(const search::study& result, const std::vector<std::size_t>& front,
                      const mase::hardware_options& options, mase::output_folder& out) {
  std::string csv =
      "trial,model_cycles_per_sample,model_luts,yosys_luts,model_flip_flops,yosys_flip_flops,model_dsps,yosys_dsps,"
      "model_block_rams_18k,yosys_block_rams_18k\n";
  fmt::print("yosys synth_xilinx on the front (cost model / yosys):\n{:>7} {:>8} {:>15} {:>15} {:>11} {:>11}\n", "trial",
             "cycles", "LUTs", "flip-flops", "DSPs", "BRAM18");
  std::fflush(stdout);
  const fs::path hardware_dir = out.claim_folder("hardware");
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < front.size(); ++k) {
    const search::trial& t = result.trials[front[k]];
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "mase search: synthesizing trial {} ({} of {}, {:.0f} s so far)\n", t.number, k + 1, front.size(),
               elapsed);
    const auto hardware = mase::graph_with<mase::fact::common_metadata, mase::fact::quantized>(result.quantized(t)) |
                          mase::add_hardware_metadata(options);
    const mase::verilog::hardware_cost model = mase::verilog::estimate_hardware_cost(hardware);
    const fs::path dir = hardware_dir / fmt::format("trial_{}", t.number);
    (void)mase::run(hardware, mase::emit_verilog({.project_dir = dir, .samples = 1}));
    const mase::verilog::synthesis_report yosys = mase::verilog::synthesize(dir);
    const mase::verilog::resource_estimate& r = model.resources;
    fmt::print("{:>7} {:>8} {:>7.0f} / {:<5} {:>7.0f} / {:<5} {:>3.0f} / {:<5} {:>3.0f} / {:<5}\n", t.number,
               model.cycles_per_sample, r.luts, yosys.luts, r.flip_flops, yosys.flip_flops, r.dsps, yosys.multipliers,
               r.block_rams, yosys.block_rams_18k);
    std::fflush(stdout);
    csv += fmt::format("{},{},{:.0f},{},{:.0f},{},{:.0f},{},{:.0f},{}\n", t.number, model.cycles_per_sample, r.luts,
                       yosys.luts, r.flip_flops, yosys.flip_flops, r.dsps, yosys.multipliers, r.block_rams,
                       yosys.block_rams_18k);
  }
  out.write("pareto_synthesis.csv", csv);
}

// Refuses an input that lies where the search writes (its folder's outputs).
void refuse_inputs_in_outputs(const search_command_options& o) {
  std::vector<fs::path> inputs = assigned_files(o.data, "--data");
  const std::vector<fs::path> calibration = assigned_files(o.calibration, "--calibration");
  inputs.insert(inputs.end(), calibration.begin(), calibration.end());
  inputs.push_back(o.model);
  inputs.push_back(o.config);
  if (o.labels) inputs.push_back(*o.labels);
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(fs::absolute(o.out), ec);
  if (ec) return;  // the folder's own check names the problem
  for (const fs::path& input : inputs) {
    const fs::path file = fs::weakly_canonical(fs::absolute(input), ec);
    if (ec) continue;
    const fs::path relative = file.lexically_relative(out);
    if (relative.empty() || *relative.begin() == "..") continue;
    const std::string first = relative.begin()->string();
    if (first == mase::project_marker_name ||
        std::find(search_outputs.begin(), search_outputs.end(), first) != search_outputs.end())
      throw mase::error(fmt::format("{} is one of mase search's inputs, and the search writes {} in --out {}; copy it "
                                    "elsewhere, or give another output folder",
                                    input.string(), (out / first).string(), o.out.string()));
  }
}

}  // namespace

int run_search(const search_command_options& o) {
#if MASE_WITH_MPI
  const mpi_session mpi;
  const bool master = mpi.rank() == 0;  // the only rank that writes and prints
#else
  const bool master = true;
#endif
  if (master) refuse_inputs_in_outputs(o);  // before reading them: the message is about the files
  search::search_config config = search::load_search_config(o.config);
  if (o.jobs) config.options.jobs = *o.jobs;
  if (o.seed) config.options.seed = *o.seed;
  if (o.trials) config.options.trials = *o.trials;
  if (o.synth && !config.hardware)
    throw mase::error(fmt::format("{}: --synth emits the front's designs with the hardware runner's parallelism; add "
                                  "[search.strategy.hw_runner.hardware] (max_parallelism = [4, 4])",
                                  o.config.string()));

  const loaded_model model = load_model(o.model, o.input_shapes, o.raise, o.data, false, "--data");
  const input_batches data_files(model, o.data, "--data");
  if (data_files.size() != 1) throw usage_error("mase search takes each --data input once (one batch of samples)");
  search::evaluation_data data{.inputs = data_files.load(0), .labels = {}, .calibration = {}};
  const std::int64_t given = data.inputs.begin()->second.rank() > 0 ? data.inputs.begin()->second.shape()[0] : 1;
  std::int64_t samples = given;
  const std::int64_t classes = o.labels ? classes_of(model) : 0;
  if (config.num_samples && *config.num_samples < samples) {
    samples = *config.num_samples;
    for (auto& [name, t] : data.inputs) t = first_samples(t, samples);
  }
  if (o.labels) {
    data.labels = read_labels(*o.labels, given, classes);
    data.labels.resize(static_cast<std::size_t>(samples));  // setup.num_samples keeps the first
  }
  if (!o.calibration.empty()) {
    const input_batches calibration(model, o.calibration, "--calibration");
    if (calibration.size() != 1) throw usage_error("mase search takes each --calibration input once");
    data.calibration = calibration.load(0);
  }
  for (const search::metric_spec& m : config.metrics)
    if ((m.name == "accuracy" || m.name == "loss") && !o.labels)
      throw usage_error(fmt::format("{}: [search.strategy.metrics.{}] needs labels; give --labels FILE.npy, or use the "
                                    "metric agreement (top-1 agreement with the float model)",
                                    o.config.string(), m.name));

  const search::search_space space = search::build_search_space(model.graph, config.space);
  std::unique_ptr<search::sampler> sampler;
  // MASE's spellings (nsgaii, nsgaiii, brute-force) name the same samplers as mase's.
  [[maybe_unused]] const std::string_view kind = search::canonical_sampler_name(config.sampler, o.config.string());
#if MASE_WITH_PAGMO
  if (kind == "nsga2") sampler = search::make_nsga2_sampler({.population = config.population});
#endif
#if MASE_WITH_GLPK
  if (kind == "ilp") sampler = search::make_ilp_sampler();
#endif
  if (!sampler) sampler = search::make_sampler(config);
  const std::vector<search::objective> objectives = search::objectives_of(config);

  config.options = search::options_for(config, space);
  // The folder is new, empty, or a search mase wrote: claimed before the first trial runs.
  std::optional<mase::output_folder> out;
  if (master) {
    out.emplace(o.out, "search", "mase search");
    config.options.journal = out->claim_file("trials.jsonl");
  }
  if (master) fmt::print("search: {} dimensions over {} subjects ({:.3g} points), sampler {}, {} trials in batches of {}, "
             "jobs: {}, seed {}, evaluated {} on {} samples\n",
             space.dimensions.size(), space.subjects.size(), space.size(), sampler->name(), config.options.trials,
             config.options.batch_size, config.options.jobs == 0 ? fmt::format("{} (all cores)", std::max(1u, std::thread::hardware_concurrency()))
                                       : fmt::format("{}", config.options.jobs),
             config.options.seed, mase::to_string(config.options.mode), samples);
  std::fflush(stdout);

  progress_bar bar("trials", master ? config.options.trials : 0);
  const auto start = std::chrono::steady_clock::now();
  std::size_t ran = 0;
  config.options.on_trial = [&](const search::study& s, const search::trial&) {
    ++ran;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double rate = static_cast<double>(ran) / std::max(elapsed, 1e-9);
    std::optional<double> best;
    for (const search::trial& t : s.trials)
      if (t.ok() && std::isfinite(t.values[0]))
        best = !best ? t.values[0]
                     : (s.objectives[0].sense == search::direction::maximize ? std::max(*best, t.values[0])
                                                                             : std::min(*best, t.values[0]));
    const double left = static_cast<double>(config.options.trials - std::min(config.options.trials, s.trials.size())) / rate;
    bar.update(s.trials.size(), fmt::format("{:.1f} trials/s, best {} {}, {} left", rate, s.objectives[0].name,
                                            best ? fmt::format("{:.4g}", *best) : std::string("-"), duration_text(left)));
  };
#if MASE_WITH_MPI
  // Under mpirun: rank 0 runs the search and writes everything; the other ranks evaluate trials.
  if (mpi.size() > 1 && mpi.rank() != 0) {
    config.options.journal.clear();
    (void)search::run_search_mpi(model.graph, space, *sampler, objectives, data, config.options);
    return 0;
  }
  const search::study result =
      mpi.size() > 1 ? search::run_search_mpi(model.graph, space, *sampler, objectives, data, config.options)
                     : search::run_search(model.graph, space, *sampler, objectives, data, config.options);
  if (mpi.size() > 1) fmt::print("MPI: {} ranks; {} trials re-issued after a rank timed out\n", mpi.size(), result.reissued);
#else
  const search::study result = search::run_search(model.graph, space, *sampler, objectives, data, config.options);
#endif
  bar.clear();

  const std::size_t failed = static_cast<std::size_t>(
      std::count_if(result.trials.begin(), result.trials.end(), [](const search::trial& t) { return !t.ok(); }));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{} trials ({} run now in {:.1f} s, {:.2f} trials/s; {} resumed from {}), {} failed; sampler {:.3f} ms "
             "per trial\n",
             result.trials.size(), ran, elapsed, static_cast<double>(ran) / std::max(elapsed, 1e-9),
             result.trials.size() - ran, config.options.journal.string(), failed,
             result.sampled == 0 ? 0.0 : 1e3 * result.sampler_seconds / static_cast<double>(result.sampled));
  for (const search::trial& t : result.trials)
    if (!t.ok()) {
      fmt::print("  trial {} failed: {}\n", t.number, t.failure);
      break;  // the first says what the rest say
    }

  // Every file below follows the whole journal (study::trials), not only this run's trials, and
  // the front's distinct points: the first trial of each objective vector.
  const std::vector<search::study::front_point> points = result.distinct_front();
  std::vector<std::size_t> front;
  std::size_t repeats = 0;
  for (const search::study::front_point& p : points) front.push_back(p.index), repeats += p.same.size();
  out->write("pareto.csv", search::pareto_csv(result));
  out->write("pareto.svg", search::pareto_svg(result));
  // The front's configs; configs of trials that left the front (a resumed search) are removed,
  // but only those mase wrote.
  out->claim_folder("pareto");
  std::vector<std::string> written;
  for (std::size_t index : front) {
    const search::trial& t = result.trials[index];
    const std::string entry = fmt::format("pareto/trial_{}.toml", t.number);
    out->write(entry, mase::quantize_config_to_toml(result.config_of(model.graph, t),
                                                    fmt::format("mase search: trial {} of {} ({})", t.number,
                                                                o.model.filename().string(), values_text(result, t))));
    written.push_back(entry);
  }
  for (const std::string& entry : std::vector<std::string>(out->manifest().files.begin(), out->manifest().files.end()))
    if (entry.starts_with("pareto/trial_") && std::find(written.begin(), written.end(), entry) == written.end())
      out->remove(entry);

  fmt::print("Pareto front: {} of {} trials{} (pareto.csv, pareto.svg):\n", front.size(), result.trials.size(),
             repeats == 0 ? std::string()
                          : fmt::format(", and {} more with the same objectives as one of them", repeats));
  for (const search::study::front_point& p : points)
    fmt::print("  trial {:>4}: {}{}\n", result.trials[p.index].number, values_text(result, result.trials[p.index]),
               p.same.empty() ? std::string() : fmt::format(" (+{} with the same objectives)", p.same.size()));
  const std::optional<std::size_t> best = result.best();
  if (!best) throw mase::error("search: no trial succeeded, so there is no best config");
  const search::trial& chosen = result.trials[*best];
  const mase::quantize_config best_config = result.config_of(model.graph, chosen);
  out->write("best.toml", mase::quantize_config_to_toml(best_config, fmt::format("mase search: trial {} of {} ({})",
                                                                                chosen.number, o.model.filename().string(),
                                                                                values_text(result, chosen))));
  fmt::print("best: trial {} ({}), the front's best {}; best.toml:\n{}", chosen.number, values_text(result, chosen),
             result.objectives[0].name, search::node_format_table(result.quantized(chosen)));
  if (o.synth) synthesize_front(result, front, *config.hardware, *out);
  return 0;
}

}  // namespace mase_cli
