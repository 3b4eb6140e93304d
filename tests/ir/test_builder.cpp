// The builder: a model in a few lines, parameters initialised as PyTorch does.

#include <mase/core/tensor_eigen.hpp>
#include <mase/ir/builder.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace mase;

namespace {
graph mlp(std::uint64_t seed = 0) {
  builder b(seed);
  auto x = b.input("x", {8, 784});
  auto h = b.add("fc1", op::linear{.in_features = 784, .out_features = 256}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("dropout1", op::dropout{.p = 0.2}, h);
  auto y = b.add("fc2", op::linear{.in_features = 256, .out_features = 10}, h);
  return b.output(y);
}
}  // namespace

TEST_CASE("an MLP reads like the model") {
  const graph g = mlp();
  REQUIRE(g.size() == 6);
  CHECK(g.at("fc1").as<op::linear>().out_features == 256);
  CHECK(g[g.inputs(g.id("fc2"))[0]].name == "dropout1");
  CHECK(g.at("output").inputs.size() == 1);
  CHECK(g.parameter("fc1.weight").shape() == shape{256, 784});
  CHECK(g.parameter("fc2.bias").shape() == shape{10});
}

TEST_CASE("linear weights are uniform in +-1/sqrt(fan_in), deterministic per seed") {
  const graph g = mlp();
  const tensor& w = g.parameter("fc1.weight");
  const float bound = 1.0f / std::sqrt(784.0f);
  CHECK(w.array().abs().maxCoeff() <= bound);
  // Uniform on [-b, b]: mean 0, variance b^2/3; 200704 samples put both well within these bands.
  CHECK(std::abs(w.array().mean()) < bound * 0.01f);
  const double variance = (w.array().square()).mean();
  CHECK(variance == Approx(bound * bound / 3.0).epsilon(0.02));
  CHECK(g.parameter("fc2.bias").array().abs().maxCoeff() <= 1.0f / std::sqrt(256.0f));
  CHECK(mlp(0) == mlp(0));
  CHECK_FALSE(mlp(0) == mlp(1));
}
