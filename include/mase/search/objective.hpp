#pragma once
// What a trial is scored on. An objective is a value: a name, a direction and a callable that
// measures a quantized graph and its outputs on the evaluation data, so a user adds their own
// as easily as the built-in ones below.

#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/tensor.hpp>
#include <mase/format/format.hpp>
#include <mase/ir/graph.hpp>
#include <mase/pass/flop_estimator.hpp>
#include <mase/pass/quantization_report.hpp>
#include <mase/quant/quantize.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

enum class direction : std::uint8_t { minimize, maximize };

constexpr std::string_view to_string(direction d) noexcept {
  return d == direction::minimize ? "minimize" : "maximize";
}

// The data every trial is evaluated on, loaded once.
struct evaluation_data {
  ordered_map<tensor> inputs;          // by placeholder name; the first dimension is the batch
  std::vector<std::int64_t> labels{};  // one class per sample, for accuracy; may be empty
  ordered_map<tensor> calibration{};   // for the ranges of "NA" fraction widths; empty: `inputs`
};

// What an objective sees of a finished trial.
struct trial_view {
  const graph& quantized;                  // after quantize (common metadata holds each format)
  std::span<const tensor> outputs;         // the quantized model's outputs on the data
  std::span<const tensor> float_outputs;   // the float32 model's, computed once
  const evaluation_data& data;
};

struct objective {
  std::string name;
  direction sense = direction::maximize;
  std::function<double(const trial_view&)> measure;
};

namespace detail {

// The class of each row of a [samples, classes] tensor (the first largest).
inline std::vector<std::int64_t> top1(const tensor& logits, std::string_view objective) {
  if (logits.rank() != 2)
    throw error(fmt::format("objective {}: the model's first output has shape {}; it needs [samples, classes]",
                            objective, to_string(logits.shape())));
  const std::int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  std::vector<std::int64_t> out(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = logits.data() + r * classes;
    out[static_cast<std::size_t>(r)] = std::max_element(row, row + classes) - row;
  }
  return out;
}

inline double fraction_equal(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return a.empty() ? 0.0 : static_cast<double>(same) / static_cast<double>(a.size());
}

// The multiply-accumulates of a linear or convolution node per sample (its op's work rule, as
// estimate_flops counts them), and its operands' bits.
struct mac_node {
  double macs_per_sample = 0;
  double data_bits = 32, weight_bits = 32;
};

inline std::vector<mac_node> mac_nodes(const graph& g) {
  std::vector<mac_node> out;
  for (node_id id : g.order()) {
    const node& n = g[id];
    const std::string& op = n.meta.common.mase_op;
    if (op != "linear" && op.rfind("conv", 0) != 0) continue;
    const auto entry = [&](std::string_view name) -> const tensor_meta* {
      const auto it = n.meta.common.args.find(name);
      return it == n.meta.common.args.end() ? nullptr : std::get_if<tensor_meta>(&it->second);
    };
    const tensor_meta *x = entry("data_in_0"), *w = entry("weight");
    if (x == nullptr || w == nullptr || n.meta.common.results.empty()) continue;
    const shape& y = n.meta.common.results.begin()->second.shape;
    if (y.size() < 1 || y[0] == 0) continue;
    out.push_back({.macs_per_sample = static_cast<double>(estimate_node_flops(n).computations) / static_cast<double>(y[0]),
                   .data_bits = bits_per_value(x->precision),
                   .weight_bits = bits_per_value(w->precision)});
  }
  return out;
}

}  // namespace detail

// Labels for accuracy and loss: one class per sample, each a class of the model's first output
// (an index into its last dimension). `where` names the labels in errors (a file, say).
inline void check_labels(std::span<const std::int64_t> labels, std::int64_t samples, std::int64_t classes,
                         std::string_view where) {
  if (static_cast<std::int64_t>(labels.size()) != samples)
    throw error(fmt::format("{}: {} labels for {} samples; give one label per sample", where, labels.size(), samples));
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      throw error(fmt::format("{}: label {} of sample {} is not a class of the model, whose first output has {} "
                              "classes (0 to {}); are these the labels of another data set?",
                              where, labels[i], i, classes, classes - 1));
}

namespace objectives {

// Top-1 accuracy of the first output against the labels.
inline objective accuracy() {
  return {"accuracy", direction::maximize, [](const trial_view& t) {
            if (t.data.labels.empty())
              throw error("objective accuracy needs labels; give them, or use agreement (top-1 agreement with the "
                          "float model) instead");
            const std::vector<std::int64_t> predicted = detail::top1(t.outputs[0], "accuracy");
            if (predicted.size() != t.data.labels.size())
              throw error(fmt::format("objective accuracy: {} labels for {} samples", t.data.labels.size(),
                                      predicted.size()));
            return detail::fraction_equal(predicted, t.data.labels);
          }};
}

// MASE's loss: the mean cross-entropy of the first output's softmax against the labels.
inline objective loss() {
  return {"loss", direction::minimize, [](const trial_view& t) {
            const tensor& logits = t.outputs[0];
            (void)detail::top1(logits, "loss");  // checks the shape
            const std::int64_t rows = logits.shape()[0], classes = logits.shape()[1];
            if (t.data.labels.size() != static_cast<std::size_t>(rows))
              throw error(fmt::format("objective loss: {} labels for {} samples; give one label per sample",
                                      t.data.labels.size(), rows));
            double total = 0;
            for (std::int64_t r = 0; r < rows; ++r) {
              const float* row = logits.data() + r * classes;
              const double top = *std::max_element(row, row + classes);
              double sum = 0;
              for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(row[c]) - top);
              const std::int64_t label = t.data.labels[static_cast<std::size_t>(r)];
              if (label < 0 || label >= classes)
                throw error(fmt::format("objective loss: label {} of sample {} is not a class of {}", label, r, classes));
              total += std::log(sum) + top - static_cast<double>(row[label]);
            }
            return total / static_cast<double>(rows);
          }};
}

// Top-1 agreement with the float32 model: accuracy without labels.
inline objective agreement() {
  return {"agreement", direction::maximize, [](const trial_view& t) {
            return detail::fraction_equal(detail::top1(t.outputs[0], "agreement"),
                                          detail::top1(t.float_outputs[0], "agreement"));
          }};
}

// Mean squared difference from the float32 model, over every output element.
inline objective output_mse() {
  return {"output_mse", direction::minimize, [](const trial_view& t) {
            double sum = 0;
            std::size_t count = 0;
            for (std::size_t k = 0; k < t.outputs.size(); ++k) {
              const std::span<const float> a = t.outputs[k].values(), b = t.float_outputs[k].values();
              for (std::size_t i = 0; i < a.size(); ++i) {
                const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
                sum += d * d;
              }
              count += a.size();
            }
            return count == 0 ? 0.0 : sum / static_cast<double>(count);
          }};
}

// MASE's average_bitwidth: the weights' bits, averaged over the weights of every linear and
// convolution (calculate_avg_bits' w_avg_bit).
inline objective average_bitwidth() {
  return {"average_bitwidth", direction::minimize,
          [](const trial_view& t) { return calculate_avg_bits(t.quantized).w_avg_bit; }};
}

// The data's bits, averaged over the inputs of every linear and convolution.
inline objective average_data_bitwidth() {
  return {"average_data_bitwidth", direction::minimize,
          [](const trial_view& t) { return calculate_avg_bits(t.quantized).data_avg_bit; }};
}

// Bit operations per sample: each multiply-accumulate of a linear or convolution counts its
// data bits times its weight bits (Baskin et al.; HAWQ-V3's BOPs).
inline objective bops() {
  return {"bops", direction::minimize, [](const trial_view& t) {
            double total = 0;
            for (const detail::mac_node& m : detail::mac_nodes(t.quantized))
              total += m.macs_per_sample * m.data_bits * m.weight_bits;
            return total;
          }};
}

// Every parameter's bits, in bytes: what the model's weights take in memory.
inline objective model_size() {
  return {"model_size", direction::minimize, [](const trial_view& t) {
            double bits = 0;
            for (node_id id : t.quantized.order()) {
              const node& n = t.quantized[id];
              for (const auto& [role, values] : n.parameters) {
                double width = 32;
                const auto it = n.meta.common.args.find(role);
                if (it != n.meta.common.args.end())
                  if (const auto* m = std::get_if<tensor_meta>(&it->second)) width = bits_per_value(m->precision);
                bits += width * static_cast<double>(values.size());
              }
            }
            return bits / 8;
          }};
}

// A built-in objective by name; mase::error naming `where` for another name.
inline objective by_name(std::string_view name, std::string_view where) {
  if (name == "accuracy") return accuracy();
  if (name == "loss") return loss();
  if (name == "agreement") return agreement();
  if (name == "output_mse") return output_mse();
  if (name == "average_bitwidth") return average_bitwidth();
  if (name == "average_data_bitwidth") return average_data_bitwidth();
  if (name == "bops") return bops();
  if (name == "model_size") return model_size();
  throw error(fmt::format("{}: no runner measures the metric \"{}\"; the metrics are accuracy, loss, agreement, output_mse, "
                          "average_bitwidth, average_data_bitwidth, bops and model_size, and with the hardware runner "
                          "cycles_per_sample, luts, flip_flops, dsps, block_rams and lut_rams",
                          where, name));
}

}  // namespace objectives

}  // namespace mase::search
