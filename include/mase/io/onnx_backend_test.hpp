#pragma once
// The ONNX backend-test runner: a directory holding model.onnx and test_data_set_*/input_*.pb,
// output_*.pb is imported, evaluated in float32 on each data set, and compared with the
// expected outputs under ONNX's backend-test tolerance (|actual - expected| <= atol + rtol ·
// |expected|, NaN matching NaN). A model mase cannot represent (onnx::unsupported) is skipped;
// any other error, a wrong shape or a value out of tolerance fails.
//
// Graph inputs that a converter needs as constants (Conv's weight, Reshape's shape, …) are
// bound to the data set's values and the model re-imported: the backend tests pass weights as
// inputs, while mase's modules own their parameters.

#include <mase/eval/evaluator.hpp>
#include <mase/io/onnx.hpp>
#include <mase/io/onnx/tensor_proto.hpp>  // the ModelProto, read before importing

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mase::onnx {

struct backend_test_options {
  double rtol = 1e-3;
  double atol = 1e-7;
  // Runs a transform on the imported graph before evaluating (e.g. raise_granularity).
  void (*transform)(graph&) = nullptr;
  // Threads for the evaluator's products (0: one per core). Results do not depend on it.
  std::size_t threads = 1;
};

enum class test_status { passed, failed, skipped };

struct backend_test_result {
  test_status status = test_status::failed;
  std::string name;
  std::string detail;  // the worst error, the unsupported ops, or the error message
};

namespace detail {

inline std::vector<std::filesystem::path> numbered_files(const std::filesystem::path& dir, std::string_view stem) {
  std::vector<std::filesystem::path> files;
  for (int i = 0;; ++i) {
    const auto f = dir / fmt::format("{}_{}.pb", stem, i);
    if (!std::filesystem::exists(f)) break;
    files.push_back(f);
  }
  return files;
}

// "1, 2": the multi-index of flat element `flat` in a row-major tensor of shape `s`.
inline std::string multi_index(std::size_t flat, const shape& s) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(s.size()));
  for (int d = s.size() - 1; d >= 0; --d) {
    const auto extent = static_cast<std::size_t>(s[d]);
    index[static_cast<std::size_t>(d)] = static_cast<std::int64_t>(flat % extent);
    flat /= extent;
  }
  return fmt::format("{}", fmt::join(index, ", "));
}

// Where an output misses the tolerance, as a message: how many elements miss it, then the largest
// absolute and the largest relative error (|actual - expected| / |expected|) with where each is
// (flat index and multi-index) and both values, so that a reader can tell float noise (tiny
// errors, or relative ones only near zero) from a bug. Empty when every element is within.
inline std::string compare_outputs(const tensor& actual, const tensor& expected, const std::string& name, double rtol,
                                   double atol) {
  if (!(actual.shape() == expected.shape()))
    return fmt::format("output {} has shape {}, expected {}", name, to_string(actual.shape()),
                       to_string(expected.shape()));
  struct worst_element {
    double error = -1.0;
    std::size_t index = 0;
  };
  worst_element absolute;
  worst_element relative;
  std::size_t misses = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual.data()[i];
    const double e = expected.data()[i];
    if (std::isnan(e) && std::isnan(a)) continue;
    if (std::isinf(e) && a == e) continue;
    const bool nan_mismatch = std::isnan(a) || std::isnan(e);
    const double difference = nan_mismatch ? std::numeric_limits<double>::infinity() : std::abs(a - e);
    if (difference > atol + rtol * std::abs(e)) ++misses;
    const double ratio = difference == 0.0 ? 0.0
                         : e == 0.0        ? std::numeric_limits<double>::infinity()
                                           : difference / std::abs(e);
    if (difference > absolute.error) absolute = {difference, i};
    if (ratio > relative.error) relative = {ratio, i};
  }
  if (misses == 0) return {};
  const auto describe = [&](const worst_element& w) {
    return fmt::format("{:.6g} at {}[{}] (flat index {}): {} vs expected {}", w.error, name,
                       multi_index(w.index, actual.shape()), w.index, actual.data()[w.index], expected.data()[w.index]);
  };
  return fmt::format("output {}: {} of {} elements out of tolerance (atol {:g}, rtol {:g}); largest absolute error "
                     "{}; largest relative error {}",
                     name, misses, actual.size(), atol, rtol, describe(absolute), describe(relative));
}

}  // namespace detail

inline backend_test_result run_backend_test(const std::filesystem::path& dir, const backend_test_options& options = {}) {
  namespace fs = std::filesystem;
  backend_test_result result;
  result.name = dir.filename().string();
  if (result.name.empty()) result.name = dir.parent_path().filename().string();
  try {
    const fs::path model_file = dir / "model.onnx";
    const std::string bytes = detail::read_file(model_file, "ONNX model");
    ::onnx::ModelProto proto;
    if (!proto.ParseFromString(bytes)) throw error(fmt::format("{}: not an ONNX model", model_file.string()));
    std::vector<std::string> input_names;
    {
      std::vector<std::string> initialized;
      for (const auto& t : proto.graph().initializer()) initialized.push_back(t.name());
      for (const auto& in : proto.graph().input())
        if (std::find(initialized.begin(), initialized.end(), in.name()) == initialized.end())
          input_names.push_back(in.name());
    }
    for (const auto* list : {&proto.graph().input(), &proto.graph().output()})
      for (const auto& v : *list)
        if (!v.type().has_tensor_type())
          throw unsupported(fmt::format("{}: graph input or output \"{}\" is not a tensor (sequences, maps and "
                                        "optionals are not supported)",
                                        model_file.string(), v.name()));
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_"))
        sets.push_back(entry.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) throw error(fmt::format("{}: no test_data_set_* directories", dir.string()));

    for (const fs::path& set : sets) {
      const auto input_files = detail::numbered_files(set, "input");
      const auto output_files = detail::numbered_files(set, "output");
      if (input_files.size() > input_names.size())
        throw error(fmt::format("{}: {} inputs for a model with {}", set.string(), input_files.size(),
                                input_names.size()));
      import_options io;
      io.input_shapes_keep_rank = false;  // the data is the truth here, whatever the model declares
      ordered_map<tensor> given;
      for (std::size_t i = 0; i < input_files.size(); ++i) {
        tensor t = load_tensor(input_files[i]);
        io.input_shapes.insert_or_assign(input_names[i], t.shape());
        given.insert_or_assign(input_names[i], std::move(t));
      }
      std::optional<imported_model> model;
      while (!model) {
        try {
          model = import_model(proto, model_file.string(), io);
        } catch (const needs_constant_inputs& e) {
          bool bound = false;
          for (const std::string& name : e.inputs)
            if (const auto it = given.find(name); it != given.end() && !io.constant_inputs.contains(name)) {
              io.constant_inputs.insert_or_assign(name, it->second);
              io.input_shapes.erase(name);
              bound = true;
            }
          if (!bound) throw;
        }
      }
      if (options.transform != nullptr) options.transform(model->graph);
      ordered_map<tensor> inputs;
      for (const port& p : model->inputs) {
        const auto it = given.find(p.onnx_name);
        if (it == given.end()) throw error(fmt::format("{}: no data for input {}", set.string(), p.onnx_name));
        inputs.insert_or_assign(p.node, it->second);
      }
      evaluator ev(model->graph);
      ev.set_threads(options.threads);
      const auto outputs = ev.run(inputs);
      if (output_files.size() != model->outputs.size())
        throw error(fmt::format("{}: {} expected outputs for a model with {}", set.string(), output_files.size(),
                                model->outputs.size()));
      for (std::size_t i = 0; i < output_files.size(); ++i) {
        const std::string mismatch = detail::compare_outputs(outputs[i], load_tensor(output_files[i]),
                                                             model->outputs[i].onnx_name, options.rtol, options.atol);
        if (!mismatch.empty()) {
          result.status = test_status::failed;
          result.detail = fmt::format("{}: {}", set.filename().string(), mismatch);
          return result;
        }
      }
    }
    result.status = test_status::passed;
  } catch (const unsupported& e) {
    result.status = test_status::skipped;
    result.detail = e.what();
  } catch (const std::exception& e) {
    result.status = test_status::failed;
    result.detail = e.what();
  }
  return result;
}

// Runs the backend tests in `dirs` on `jobs` threads (0: one per core), each test on one thread,
// and calls on_result(index, const backend_test_result&) on the calling thread for every test in
// the order of `dirs`, as soon as that test and those before it are done. An error outside a
// test's evaluation (an unreadable folder) is that test's failure. If on_result throws, no
// further test starts and the exception propagates once the running ones end.
template <class OnResult>
void run_backend_tests(std::span<const std::filesystem::path> dirs, const backend_test_options& options,
                       std::size_t jobs, OnResult&& on_result) {
  const auto run_one = [](const std::filesystem::path& dir, const backend_test_options& o) {
    try {
      return run_backend_test(dir, o);
    } catch (const std::exception& e) {
      return backend_test_result{test_status::failed, dir.filename().string(), e.what()};
    }
  };
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min(jobs, dirs.size());
  if (jobs <= 1) {
    for (std::size_t i = 0; i < dirs.size(); ++i) on_result(i, run_one(dirs[i], options));
    return;
  }
  // The tests share the cores; each evaluates on one thread.
  backend_test_options each = options;
  each.threads = 1;
  std::vector<std::optional<backend_test_result>> results(dirs.size());
  std::mutex mutex;
  std::condition_variable finished;
  std::atomic<std::size_t> next{0};
  std::vector<std::jthread> workers;
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < dirs.size();) {
      backend_test_result r = run_one(dirs[i], each);
      {
        const std::lock_guard lock(mutex);
        results[i] = std::move(r);
      }
      finished.notify_all();
    }
  };
  try {
    for (std::size_t j = 0; j < jobs; ++j) workers.emplace_back(work);
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      std::unique_lock lock(mutex);
      finished.wait(lock, [&] { return results[i].has_value(); });
      const backend_test_result r = std::move(*results[i]);
      lock.unlock();
      on_result(i, r);
    }
  } catch (...) {
    next = dirs.size();  // no new test starts; the workers are joined on the way out
    throw;
  }
}

}  // namespace mase::onnx
