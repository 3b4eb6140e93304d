// Mixed-precision search on a bundled model, MASE's tutorials 6 and 10 in C++:
//
//   1. import the model (the MLP examples/data/mlp_784_256_64_10.onnx, or LeNet-5, lenet5.onnx)
//      and the 1000 bundled test images;
//   2. read the search space and strategy from MASE's search TOML (examples/data/mlp_search.toml
//      or lenet_search.toml): every convolution, linear and relu chooses its data and weight
//      widths, fraction widths come from the ranges measured on 200 calibration images;
//   3. run TPE for 100 trials on every core, each trial scored on its bit-exact accuracy and its
//      average weight bits (MASE's average_bitwidth), every trial journaled;
//   4. print the Pareto front, and check it against the uniform configs (one weight width and
//      one data width for every layer, the first trials): each must be matched or beaten by a
//      front point, and the example counts those a mixed-precision point matches or beats;
//   5. write the front's best config with at most 4 weight bits as a MASE quantize config, and
//      the data as .npy files, so that `mase search` can be run on the same model and data.
//
// usage: mixed_precision_search [data_dir [out_dir [mlp|lenet]]]

#include <mase/core/temp_file.hpp>
#include <mase/io/npy.hpp>
#include <mase/io/onnx.hpp>  // not in mase.hpp: it links the ONNX protobuf library
#include <mase/io/quant_config.hpp>
#include <mase/search.hpp>  // not in mase.hpp: the search compiles the evaluator and the journal

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#ifndef MASE_DEMO_DATA
#define MASE_DEMO_DATA "examples/data"
#endif

namespace {

using namespace mase;
namespace fs = std::filesystem;

constexpr std::int64_t pixels = 784, test_count = 1000, calibration_count = 200;

std::vector<unsigned char> read_bytes(const fs::path& path, std::size_t bytes) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw error(fmt::format("mixed_precision_search: cannot open {}; pass the data folder first", path.string()));
  std::vector<unsigned char> data(bytes);
  file.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes));
  if (file.gcount() != static_cast<std::streamsize>(bytes))
    throw error(fmt::format("mixed_precision_search: {} should hold {} bytes", path.string(), bytes));
  return data;
}

// The objective values of `t` as "accuracy 97.10 %, 3.84 weight bits".
std::string describe(const search::trial& t) {
  return fmt::format("accuracy {:.2f} %, {:.2f} weight bits", 100 * t.values[0], t.values[1]);
}

}  // namespace

int main(int argc, char** argv) try {
  const fs::path data_dir = argc > 1 ? argv[1] : MASE_DEMO_DATA;
  const fs::path out_dir = argc > 2 ? argv[2] : "mixed_precision_search_out";
  const std::string which = argc > 3 ? argv[3] : "mlp";
  if (which != "mlp" && which != "lenet")
    throw error(fmt::format("mixed_precision_search: the model is mlp or lenet, not \"{}\"", which));
  const bool lenet = which == "lenet";
  const shape sample_shape = lenet ? shape{test_count, 1, 28, 28} : shape{test_count, pixels};
  fs::create_directories(out_dir);

  // 1. model and data
  const std::vector<unsigned char> image_bytes = read_bytes(data_dir / "synthetic_digits_test.u8", test_count * pixels);
  const std::vector<unsigned char> label_bytes = read_bytes(data_dir / "synthetic_digits_test.labels", test_count);
  tensor images(sample_shape);
  for (std::size_t i = 0; i < image_bytes.size(); ++i) images.data()[i] = static_cast<float>(image_bytes[i]) / 255.0f;
  search::evaluation_data data{.inputs = {{"x", images}}, .labels = {}, .calibration = {}};
  for (unsigned char l : label_bytes) data.labels.push_back(l);
  shape calibration_shape = sample_shape;
  calibration_shape[0] = calibration_count;
  data.calibration.insert_or_assign(
      "x", tensor(calibration_shape, std::vector<float>(images.data(), images.data() + calibration_count * pixels)));
  mase::onnx::import_options import;
  import.input_shapes.insert_or_assign("x", sample_shape);
  const graph model =
      mase::onnx::load_model(data_dir / (lenet ? "lenet5.onnx" : "mlp_784_256_64_10.onnx"), import).graph;

  // 2. the space and the strategy, from MASE's TOML
  search::search_config config = search::load_search_config(data_dir / (which + "_search.toml"));
  const search::search_space space = search::build_search_space(model, config.space);
  fmt::print("{}\n1. search space: {} choices over {} nodes ({}), {:.3g} points\n",
             lenet ? "LeNet-5 (lenet5.onnx)" : "MLP 784-256-64-10 (mlp_784_256_64_10.onnx)", space.dimensions.size(),
             space.subjects.size(), fmt::join(space.subjects, ", "), space.size());

  // 3. the search
  const std::unique_ptr<search::sampler> sampler = search::make_sampler(config);
  const std::vector<search::objective> objectives = search::objectives_of(config);
  search::search_options options = search::options_for(config, space);
  options.journal = out_dir / "trials.jsonl";
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const search::study study = search::run_search(model, space, *sampler, objectives, data, options);
  double busy = 0;
  for (const search::trial& t : study.trials) busy += t.seconds;
  fmt::print("2. {} trials of {} ({} evaluation, {} threads): {:.2f} s of evaluation per trial; sampler {:.3f} ms per "
             "trial\n",
             study.trials.size(), sampler->name(), to_string(options.mode), cores,
             busy / static_cast<double>(study.trials.size()),
             study.sampled ? 1e3 * study.sampler_seconds / static_cast<double>(study.sampled) : 0.0);

  // The float model's accuracy, for reference.
  evaluator float_model(model);
  const tensor& logits = float_model.run(data.inputs)[0];
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < test_count; ++i) {
    const float* row = logits.data() + i * 10;
    correct += std::max_element(row, row + 10) - row == data.labels[static_cast<std::size_t>(i)];
  }
  const double float_accuracy = static_cast<double>(correct) / test_count;

  // 4. the front, against the uniform configs
  // Each point of the front once (its first trial); `every` also holds the trials with the same
  // values, one of which may be the mixed-precision match of a uniform config.
  const std::vector<std::size_t> front = study.pareto_front();
  std::vector<std::size_t> every;
  for (const search::study::front_point& p : study.distinct_front()) {
    every.push_back(p.index);
    every.insert(every.end(), p.same.begin(), p.same.end());
  }
  fmt::print("3. Pareto front ({} points; float32 accuracy {:.2f} %):\n", front.size(), 100 * float_accuracy);
  for (std::size_t i : front) fmt::print("   trial {:>3}: {}\n", study.trials[i].number, describe(study.trials[i]));

  // The uniform configs were the first trials (setup.enqueue = "uniform"), so the front covers
  // them; the figure of interest is how many a mixed-precision point matches or beats.
  const std::vector<search::point> uniform = config.enqueue_uniform ? search::uniform_points(space) : std::vector<search::point>{};
  const auto is_uniform = [&](const search::point& p) { return std::find(uniform.begin(), uniform.end(), p) != uniform.end(); };
  std::size_t covered = 0, by_mixed = 0;
  for (const search::trial& u : study.trials) {
    if (!is_uniform(u.choices) || !u.ok()) continue;
    const auto matches = [&](std::size_t i) {
      const search::trial& f = study.trials[i];
      return f.values[0] >= u.values[0] && f.values[1] <= u.values[1];
    };
    covered += std::any_of(front.begin(), front.end(), matches);
    by_mixed += std::any_of(every.begin(), every.end(),
                            [&](std::size_t i) { return !is_uniform(study.trials[i].choices) && matches(i); });
  }
  fmt::print("4. uniform configs (one data width and one weight width for every layer): {} of {} matched or beaten by "
             "the front, {} by a mixed-precision point\n",
             covered, uniform.size(), by_mixed);

  // 5. the best config with at most 4 weight bits
  std::optional<std::size_t> chosen;
  for (std::size_t i : front)
    if (study.trials[i].values[1] <= 4 && (!chosen || study.trials[i].values[0] > study.trials[*chosen].values[0]))
      chosen = i;
  if (!chosen) throw error("no front point has at most 4 average weight bits");
  const search::trial& best = study.trials[*chosen];
  const double drop = 100 * (float_accuracy - best.values[0]);
  fmt::print("5. at most 4 weight bits: trial {}: {} ({:.2f} points below float32) -> {}\n", best.number,
             describe(best), drop, drop <= 1.0 ? "within 1 point" : "MORE than 1 point below");
  const quantize_config best_config = study.config_of(model, best);
  write_file_atomically(out_dir / "best_4bit.toml",
                        quantize_config_to_toml(best_config, fmt::format("mixed_precision_search: trial {} ({})",
                                                                         best.number, describe(best))));
  std::cout << search::node_format_table(study.quantized(best));

  // The data as .npy, for `mase search MODEL --data x=…/digits_x.npy --labels …/digits_labels.npy`.
  tensor labels({test_count});
  for (std::int64_t i = 0; i < test_count; ++i) labels.data()[i] = static_cast<float>(data.labels[static_cast<std::size_t>(i)]);
  npy::save(out_dir / "digits_x.npy", images);
  npy::save(out_dir / "digits_labels.npy", labels);
  fmt::print("wrote {}: trials.jsonl, best_4bit.toml, digits_x.npy, digits_labels.npy\n", out_dir.string());
  return covered == uniform.size() && drop <= 1.0 ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "mixed_precision_search: " << e.what() << "\n";
  return 1;
}
