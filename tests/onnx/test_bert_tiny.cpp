// bert-tiny (tests/fixtures/bert_tiny, make_bert_tiny.py): imported at opsets 13 and 17 it
// computes PyTorch's logits; with its dropouts kept they import as dropout nodes; quantized to
// 8-bit fixed point (fixed8.toml) the bit-exact model picks float's class on at least 99% of
// random sequences.

#include <mase/io/npy.hpp>
#include <mase/io/onnx.hpp>
#include <mase/io/quant_config.hpp>
#include <mase/mase.hpp>
#include <mase/pass/raise_granularity.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

const std::filesystem::path bert_dir = std::filesystem::path(MASE_FIXTURE_DIR) / "bert_tiny";
constexpr std::int64_t sequence_length = 32, vocabulary = 512;

constexpr std::int64_t agreement_sequences = 1000;
#if defined(__SANITIZE_ADDRESS__)
// At -O0 under the sanitizers, one opset (2 minutes): both raise to the same graph (first test case).
const char* const agreement_models[] = {"bert_tiny_opset17.onnx"};
#else
const char* const agreement_models[] = {"bert_tiny_opset13.onnx", "bert_tiny_opset17.onnx"};
#endif

mase::graph load_bert(const std::string& file, std::int64_t batch, bool raise = true) {
  mase::onnx::import_options options;
  options.data_shapes = {{"input_ids", {batch, sequence_length}}, {"attention_mask", {batch, sequence_length}}};
  mase::graph g = mase::onnx::load_model(bert_dir / file, options).graph;
  if (raise) (void)mase::raise_granularity_of(g);
  return g;
}

mase::ordered_map<mase::tensor> reference_inputs() {
  return {{"input_ids", mase::npy::load(bert_dir / "reference_input_ids.npy")},
          {"attention_mask", mase::npy::load(bert_dir / "reference_attention_mask.npy")}};
}

double largest_difference(const mase::tensor& a, const mase::tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double largest = 0;
  for (std::size_t i = 0; i < a.values().size(); ++i)
    largest = std::max(largest, std::abs(static_cast<double>(a.values()[i]) - b.values()[i]));
  return largest;
}

// The training data's distribution (make_bert_tiny.py's keyword_batch): uniform ids, lengths 8 to 32.
mase::ordered_map<mase::tensor> random_sequences(std::int64_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> id(0, vocabulary - 1), length(8, sequence_length);
  mase::tensor ids(mase::shape{count, sequence_length}), mask(mase::shape{count, sequence_length});
  for (std::int64_t row = 0; row < count; ++row) {
    const int valid = length(random);
    for (std::int64_t t = 0; t < sequence_length; ++t) {
      ids.values()[static_cast<std::size_t>(row * sequence_length + t)] = static_cast<float>(id(random));
      mask.values()[static_cast<std::size_t>(row * sequence_length + t)] = t < valid ? 1.0f : 0.0f;
    }
  }
  return {{"input_ids", std::move(ids)}, {"attention_mask", std::move(mask)}};
}

}  // namespace

TEST_CASE("bert-tiny computes PyTorch's logits at opsets 13 and 17, as imported and raised") {
  const mase::tensor expected = mase::npy::load(bert_dir / "reference_logits.npy");
  for (const char* file : {"bert_tiny_opset13.onnx", "bert_tiny_opset17.onnx"})
    for (bool raise : {false, true}) {
      INFO(file << (raise ? ", raised" : ""));
      const mase::graph g = load_bert(file, 8, raise);
      mase::evaluator model(g);
      CHECK(largest_difference(model.run(reference_inputs())[0], expected) < 1e-4);
    }
}

TEST_CASE("raised, bert-tiny holds BERT's coarse ops") {
  const mase::graph g = load_bert("bert_tiny_opset17.onnx", 1);
  std::map<std::string, int> ops;
  g.for_each_node([&](const mase::node& n) { ++ops[std::string(n.op_name())]; });
  // Per layer Q, K, V, the attention output and two feed-forward linears; then pooler and head.
  CHECK(ops["linear"] == 2 * 6 + 2);
  CHECK(ops["layer_norm"] == 1 + 2 * 2);
  CHECK(ops["softmax"] == 2);
  CHECK(ops["matmul"] == 2 * 2);
  CHECK(ops["gelu"] == 2);
  CHECK(ops["tanh"] == 1);
  CHECK(ops["dropout"] == 0);
  // The word table's Gather becomes an embedding; the [CLS] row's stays a gather of a stream.
  CHECK(ops["embedding"] == 1);
  CHECK(ops["index_select"] == 1);
}

TEST_CASE("a bert-tiny exported with its dropouts keeps them as dropout nodes, which remove_dropout takes out") {
  const mase::graph g = load_bert("bert_tiny_dropout_opset17.onnx", 8, false);
  std::vector<double> rates;
  g.for_each_node([&](const mase::node& n) {
    if (n.is<mase::op::dropout>()) rates.push_back(n.as<mase::op::dropout>().p);
  });
  REQUIRE(rates.size() == 8);  // embeddings, per layer three, and before the classifier
  for (double p : rates) CHECK(p == Approx(0.1).epsilon(1e-6));

  auto [without, removed] = mase::run(g, mase::init_metadata | mase::add_common_metadata | mase::remove_dropout);
  std::size_t left = 0;
  without.for_each_node([&](const mase::node& n) { left += n.is<mase::op::dropout>(); });
  CHECK(left == 0);
  // Dropout is the identity at inference: the logits are PyTorch's, before and after.
  const mase::tensor expected = mase::npy::load(bert_dir / "reference_logits.npy");
  mase::evaluator with_dropout(g), without_dropout(without);
  CHECK(largest_difference(with_dropout.run(reference_inputs())[0], expected) < 1e-4);
  CHECK(largest_difference(without_dropout.run(reference_inputs())[0], expected) < 1e-4);
}

TEST_CASE("8-bit bit-exact bert-tiny picks float's class on at least 99% of random sequences") {
  const auto config = mase::load_quantize_config(bert_dir / "fixed8.toml");
  for (const char* file : agreement_models) {
    INFO(file);
    const mase::graph g = load_bert(file, agreement_sequences);
    const auto quantized = g | mase::init_metadata | mase::add_common_metadata | mase::quantize(config);
    mase::evaluator float_model(g), bit_exact(quantized, mase::eval_mode::bit_exact);
    // The integer rules cover every node the config quantizes (softmax and layer norm included).
    for (mase::node_id id : quantized.order()) {
      const mase::node& n = quantized[id];
      if (n.is<mase::op::softmax>() || n.is<mase::op::layer_norm>() || n.is<mase::op::linear>() ||
          n.is<mase::op::matmul>()) {
        INFO(n.name);
        CHECK(bit_exact.runs_bit_exact(id));
      }
    }

    const auto sequences = random_sequences(agreement_sequences, 2026);
    const mase::tensor expected = float_model.run(sequences)[0];
    const mase::tensor logits = bit_exact.run(sequences)[0];
    std::int64_t agree = 0;
    double largest_error = 0, total_error = 0;
    for (std::int64_t row = 0; row < agreement_sequences; ++row) {
      const auto at = [&](const mase::tensor& t, std::int64_t c) { return t.values()[static_cast<std::size_t>(row * 2 + c)]; };
      agree += (at(expected, 0) >= at(expected, 1)) == (at(logits, 0) >= at(logits, 1));
      for (std::int64_t c = 0; c < 2; ++c) {
        const double e = std::abs(static_cast<double>(at(expected, c)) - at(logits, c));
        largest_error = std::max(largest_error, e);
        total_error += e;
      }
    }
    fmt::print("{}: bit-exact agrees with float on {} of {} sequences; logits' error mean {:.4f}, largest {:.4f}\n",
               file, agree, agreement_sequences, total_error / static_cast<double>(2 * agreement_sequences),
               largest_error);
    CHECK(agree * 100 >= agreement_sequences * 99);
  }
}
