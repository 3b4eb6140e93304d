// The search's figures (docs/search.md): on the bundled MLP and LeNet-5 with the bundled data,
// 100 bit-exact trials per search scored on accuracy and average weight bits, the hypervolume of
// each strategy's front over 5 seeds (random, qmc, TPE, NSGA-II, NSGA-III; the ILP once, it is
// deterministic), and trials per second on 1 and 2 threads. Not a Google Benchmark: a search is
// seconds long and its quality, not its time, is the figure; trials per second are measured
// within one run.
//
// usage: search_strategies [data_dir [seeds [trials]]]

#include <mase/io/onnx.hpp>
#include <mase/search.hpp>
#include <mase/search/ilp.hpp>
#include <mase/search/nsga2.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace mase;
namespace fs = std::filesystem;

struct model_case {
  std::string name, onnx, toml;
  shape sample_shape;
};

search::evaluation_data digits(const fs::path& dir, const shape& s) {
  std::ifstream images(dir / "synthetic_digits_test.u8", std::ios::binary), labels(dir / "synthetic_digits_test.labels", std::ios::binary);
  if (!images || !labels) throw error(fmt::format("search_strategies: no bundled digits in {}", dir.string()));
  tensor x(s);
  std::vector<char> bytes(x.size());
  images.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  for (std::size_t i = 0; i < bytes.size(); ++i) x.data()[i] = static_cast<float>(static_cast<unsigned char>(bytes[i])) / 255.0f;
  search::evaluation_data data{.inputs = {{"x", x}}, .labels = {}, .calibration = {}};
  for (char c; labels.get(c);) data.labels.push_back(static_cast<unsigned char>(c));
  shape calibration_shape = s;
  calibration_shape[0] = 200;
  data.calibration.insert_or_assign("x", tensor(calibration_shape, std::vector<float>(x.data(), x.data() + x.size() / 5)));
  return data;
}

double front_hypervolume(const search::study& s) {
  std::vector<search::objective_vector> values;
  for (std::size_t i : s.pareto_front()) values.push_back(s.minimized(s.trials[i]));
  return search::hypervolume(values, {0.0, 8.0});  // accuracy from 0, weight bits up to 8
}

std::string mean_spread(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double square = 0;
  for (double x : v) square += (x - mean) * (x - mean);
  const double sd = v.size() > 1 ? std::sqrt(square / static_cast<double>(v.size() - 1)) : 0.0;
  return fmt::format("{:.4f} ± {:.4f} (min {:.4f}, max {:.4f})", mean, sd, *std::min_element(v.begin(), v.end()),
                     *std::max_element(v.begin(), v.end()));
}

}  // namespace

int main(int argc, char** argv) try {
  const fs::path dir = argc > 1 ? argv[1] : "examples/data";
  const std::uint64_t seeds = argc > 2 ? std::stoull(argv[2]) : 5;
  const std::size_t trials = argc > 3 ? std::stoull(argv[3]) : 100;
  const std::vector<model_case> cases{{"MLP 784-256-64-10", "mlp_784_256_64_10.onnx", "mlp_search.toml", {1000, 784}},
                                      {"LeNet-5", "lenet5.onnx", "lenet_search.toml", {1000, 1, 28, 28}}};
  for (const model_case& m : cases) {
    const search::evaluation_data data = digits(dir, m.sample_shape);
    mase::onnx::import_options import;
    import.input_shapes.insert_or_assign("x", m.sample_shape);
    const graph model = mase::onnx::load_model(dir / m.onnx, import).graph;
    const search::search_config config = search::load_search_config(dir / m.toml);
    const search::search_space space = search::build_search_space(model, config.space);
    const std::vector<search::objective> objectives = search::objectives_of(config);
    search::search_options options = config.options;  // no enqueued points: the strategies alone
    options.trials = trials;
    options.jobs = 2;
    fmt::print("{}: {} dimensions, {:.3g} points, {} trials per search, bit-exact on 1000 images; hypervolume of "
               "the front in (accuracy from 0) x (weight bits up to 8), the best possible 8\n",
               m.name, space.dimensions.size(), space.size(), trials);
    double best_sampled = 0;
    for (const std::string name : {"random", "qmc", "tpe", "nsga2", "nsga3"}) {
      std::vector<double> volumes;
      double seconds = 0, sampler = 0;
      std::size_t sampled = 0;
      for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        options.seed = seed;
        std::unique_ptr<search::sampler> s =
            name == "nsga2" ? search::make_nsga2_sampler() : search::make_sampler(name);
        const auto begin = std::chrono::steady_clock::now();
        const search::study study = search::run_search(model, space, *s, objectives, data, options);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        sampler += study.sampler_seconds;
        sampled += study.sampled;
        volumes.push_back(front_hypervolume(study));
        best_sampled = std::max(best_sampled, volumes.back());
      }
      fmt::print("  {:<7} hypervolume {}; {:.1f} trials/s; sampler {:.3f} ms per trial\n", name, mean_spread(volumes),
                 static_cast<double>(seeds * trials) / seconds, sampled ? 1e3 * sampler / static_cast<double>(sampled) : 0.0);
    }
    search::ilp_sampler ilp;
    const search::study solved = search::run_search(model, space, ilp, objectives, data, options);
    fmt::print("  ilp     hypervolume {:.4f} from {} trials after {} sensitivity measurements (best sampled front: "
               "{:.4f})\n",
               front_hypervolume(solved), solved.trials.size(), ilp.measurements(), best_sampled);

    // Threads: the same random search on 1 and 2 threads (identical trials), trials per second.
    double rate[2] = {0, 0};
    for (std::size_t jobs : {1, 2}) {
      options.jobs = jobs;
      options.seed = 1;
      search::random_sampler random;
      const auto begin = std::chrono::steady_clock::now();
      const search::study study = search::run_search(model, space, random, objectives, data, options);
      rate[jobs - 1] = static_cast<double>(study.trials.size()) /
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    }
    fmt::print("  threads: {:.1f} trials/s on 1, {:.1f} on 2: {:.2f}x ({:.0f} % parallel efficiency)\n", rate[0], rate[1],
               rate[1] / rate[0], 50 * rate[1] / rate[0]);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "search_strategies: " << e.what() << "\n";
  return 1;
}
