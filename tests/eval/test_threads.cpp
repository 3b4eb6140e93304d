// Evaluation on several threads against one thread: the same results, bit for bit, in every mode,
// on the three reference models of the inference benchmark, with batches that do not split
// evenly.

#include "../../benchmarks/reference_models.hpp"

#include <mase/core/dispatch.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace mase;

namespace {

graph hard_activations_cnn(std::int64_t batch) {
  builder b(5);
  auto x = b.input("x", {batch, 3, 36, 36});
  auto h = b.add("conv1", op::conv2d{.in_channels = 3, .out_channels = 24, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("hardswish", op::hardswish{}, h);
  h = b.add("avg_pool", op::avg_pool2d{.kernel_size = {3}, .stride = {2}, .padding = {1}}, h);
  h = b.add("relu6", op::relu6{}, h);
  h = b.add("conv2", op::conv2d{.in_channels = 24, .out_channels = 40, .kernel_size = {3}, .stride = {2}}, h);
  h = b.add("hardsigmoid", op::hardsigmoid{}, h);
  h = b.add("neg", op::neg{}, h);
  h = b.add("max_pool", op::max_pool2d{.kernel_size = {3}, .stride = {2}, .padding = {1}}, h);
  return b.output(b.add("abs", op::abs{}, h));
}

}  // namespace

TEST_CASE("evaluation on several threads gives the results of one thread, bit for bit", "[threads]") {
  struct model {
    const char* name;
    graph g;
    shape input;
  };
  std::vector<model> models;
  models.push_back({"mlp", reference_models::mlp(13), {13, 784}});
  models.push_back({"mlp, one sample", reference_models::mlp(1), {1, 784}});
  models.push_back({"lenet", reference_models::lenet5(7), {7, 1, 28, 28}});
  models.push_back({"encoder", reference_models::encoder(3), {3, 32, 128}});
  // One image: the convolutions split its pixel tiles (AVX-512 blocks where the processor has them).
  models.push_back({"resnet18, one 32x32 image", reference_models::resnet18(1, 32), {1, 3, 32, 32}});
  // The element-wise rules and the pools that split their elements or planes.
  models.push_back({"hard activations and pools", hard_activations_cnn(3), {3, 3, 36, 36}});
  for (model& m : models) {
    const graph quantized = m.g | init_metadata | add_common_metadata | quantize(reference_models::eight_bit_config());
    const tensor x = reference_models::random_input(m.input, 17);
    for (const eval_mode mode : {eval_mode::float32, eval_mode::fake_quant, eval_mode::bit_exact}) {
      DYNAMIC_SECTION(m.name << ", " << to_string(mode)) {
        const graph& g = mode == eval_mode::float32 ? m.g : quantized;
        evaluator one(g, mode);
        one.set_threads(1);
        CHECK(one.threads() == 1);
        const std::vector<tensor> expected(one.run(x).begin(), one.run(x).end());
        for (std::size_t threads : {2, 3, 0}) {
          evaluator many(g, mode);
          many.set_threads(threads);
          const auto results = many.run(x);
          REQUIRE(results.size() == expected.size());
          for (std::size_t i = 0; i < results.size(); ++i) CHECK(results[i] == expected[i]);
          // Every intermediate result too.
          for (node_id id : g.order())
            if (!one.results(id).empty())
              for (std::size_t r = 0; r < one.results(id).size(); ++r)
                CHECK(*many.results(id)[r] == *one.results(id)[r]);
        }
      }
    }
  }
}

TEST_CASE("bit-exact evaluation gives the same bits on every dispatched target", "[dispatch]") {
  // The bit-exact rules the dispatcher compiles for several targets (layer norm's rows, the
  // lookup tables, the exact adds, the pointwise rules and pools) against their baseline copy,
  // the plain C++ loops, node by node.
  struct model {
    const char* name;
    graph g;
    shape input;
  };
  std::vector<model> models;
  models.push_back({"encoder", reference_models::encoder(3), {3, 32, 128}});
  models.push_back({"lenet", reference_models::lenet5(5), {5, 1, 28, 28}});
  models.push_back({"hard activations and pools", hard_activations_cnn(2), {2, 3, 36, 36}});
  for (model& m : models) {
    DYNAMIC_SECTION(m.name) {
      const graph g = m.g | init_metadata | add_common_metadata | quantize(reference_models::eight_bit_config());
      const tensor x = reference_models::random_input(m.input, 23);
      const dispatch::target previous = dispatch::limit(dispatch::target::baseline);
      evaluator reference(g, eval_mode::bit_exact);
      reference.run(x);
      for (const dispatch::target t : {dispatch::target::x86_64_v3, dispatch::target::x86_64_v4}) {
        if (!dispatch::supports(t)) continue;
        INFO("target " << static_cast<int>(t));
        dispatch::limit(t);
        evaluator dispatched(g, eval_mode::bit_exact);
        dispatched.run(x);
        for (node_id id : g.order())
          for (std::size_t r = 0; r < reference.results(id).size(); ++r) {
            INFO("node " << g[id].name);
            CHECK(*dispatched.results(id)[r] == *reference.results(id)[r]);
          }
      }
      dispatch::limit(previous);
    }
  }
}
