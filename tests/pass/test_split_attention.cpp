// split_attention: each scaled_dot_product_attention becomes kᵀ, the scores, their scale, softmax
// and the product with v; the split graph computes what the fused kernel computes.

#include <mase/eval/evaluator.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/split_attention.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace split_attention_test {

mase::graph attention(double scale, bool causal = false) {
  mase::builder b(31);
  auto q = b.input("q", {2, 3, 5, 4});
  auto k = b.input("k", {2, 3, 6, 4});
  auto v = b.input("v", {2, 3, 6, 7});
  return b.output(
      b.add("attention", mase::op::scaled_dot_product_attention{.is_causal = causal, .scale = scale}, q, k, v));
}

mase::tensor random_tensor(const mase::shape& s, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  mase::tensor t(s);
  for (float& x : t.values()) x = uniform(random);
  return t;
}

std::vector<float> evaluate(const mase::graph& g) {
  const auto model = g | mase::init_metadata | mase::add_common_metadata;
  mase::evaluator ev(model);
  mase::ordered_map<mase::tensor> in;
  in.insert_or_assign("q", random_tensor({2, 3, 5, 4}, 1));
  in.insert_or_assign("k", random_tensor({2, 3, 6, 4}, 2));
  in.insert_or_assign("v", random_tensor({2, 3, 6, 7}, 3));
  const mase::tensor y = ev.run(in)[0];
  return {y.values().begin(), y.values().end()};
}

}  // namespace split_attention_test

TEST_CASE("split_attention: the split ops compute what scaled_dot_product_attention computes") {
  using namespace split_attention_test;
  for (const double scale : {0.0, 0.37, 1.0}) {
    INFO("scale " << scale);
    const mase::graph fused = attention(scale);
    mase::graph split = fused;
    CHECK(mase::split_attention_of(split).split == std::vector<std::string>{"attention"});
    std::vector<std::string> kinds;
    for (mase::node_id id : split.order()) kinds.push_back(split[id].name + ":" + std::string(split[id].op_name()));
    std::vector<std::string> expected{"q:placeholder", "k:placeholder", "v:placeholder", "attention_key_t:permute",
                                      "attention_scores:matmul"};
    if (scale != 1.0) expected.insert(expected.end(), {"attention_scale:constant", "attention_scaled:mul"});
    expected.insert(expected.end(), {"attention_weights:softmax", "attention:matmul", "output:output"});
    CHECK(kinds == expected);
    if (scale != 1.0)  // PyTorch's default 1/√E for 0
      CHECK(split.parameter("attention_scale.value").values()[0] == static_cast<float>(scale == 0.0 ? 0.5 : scale));
    CHECK(split[split.id("attention_key_t")].op.get_if<mase::op::permute>()->dims == mase::dims{0, 1, 3, 2});

    const std::vector<float> a = evaluate(fused), b = evaluate(split);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(b[i] == Approx(a[i]).epsilon(1e-5).margin(1e-6));
  }
}

TEST_CASE("split_attention: a causal attention has no hardware and is refused, naming the node") {
  mase::graph g = split_attention_test::attention(0.5, true);
  CHECK_THROWS_WITH(mase::split_attention_of(g),
                    Catch::Matchers::Contains("node attention (scaled_dot_product_attention) is causal"));
}
