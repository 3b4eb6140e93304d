// fuse_conv_bn: the fused parameters against the inference formula written out plainly, the
// graph rewiring, the cases left alone, and the metadata kept valid.

#include <mase/eval/evaluator.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/fuse_conv_bn.hpp>
#include <mase/pass/init_metadata.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace mase;

namespace {

// Batch-norm statistics that differ per channel (the builder's defaults, mean 0 / var 1 / gamma 1
// / beta 0, would make the fusion nearly the identity).
void set_batch_norm(graph& g, std::string_view name, std::int64_t channels, bool affine = true) {
  const node_id id = g.id(name);
  std::vector<float> mean, var, gamma, beta;
  for (std::int64_t c = 0; c < channels; ++c) {
    const auto f = static_cast<float>(c);
    mean.push_back(0.3f * f - 0.5f);
    var.push_back(0.25f + 0.7f * f);
    gamma.push_back(1.5f - 0.4f * f);
    beta.push_back(0.1f * f - 0.2f);
  }
  g.set_parameter(id, "running_mean", tensor({channels}, mean));
  g.set_parameter(id, "running_var", tensor({channels}, var));
  if (affine) {
    g.set_parameter(id, "weight", tensor({channels}, gamma));
    g.set_parameter(id, "bias", tensor({channels}, beta));
  }
}

struct batch_norm_values {
  std::vector<double> mean, var, gamma, beta;
  double eps;
};

batch_norm_values read_batch_norm(const graph& g, std::string_view name, double eps, bool affine = true) {
  batch_norm_values v{.mean = {}, .var = {}, .gamma = {}, .beta = {}, .eps = eps};
  const std::string n(name);
  for (float x : g.parameter(n + ".running_mean").values()) v.mean.push_back(x);
  for (float x : g.parameter(n + ".running_var").values()) v.var.push_back(x);
  for (std::size_t c = 0; c < v.mean.size(); ++c) {
    v.gamma.push_back(affine ? g.parameter(n + ".weight").values()[c] : 1.0);
    v.beta.push_back(affine ? g.parameter(n + ".bias").values()[c] : 0.0);
  }
  return v;
}

// W' = W·γ/√(var+eps) per output channel; b' = (b − μ)·γ/√(var+eps) + β, in double; the pass
// rounds once to float, so the two agree to float rounding.
void check_fused(const tensor& weight_before, const std::vector<double>& bias_before, const batch_norm_values& bn,
                 const tensor& weight_after, const tensor& bias_after) {
  const std::size_t channels = bn.mean.size();
  const std::size_t per_channel = weight_before.size() / channels;
  REQUIRE(weight_after.shape() == weight_before.shape());
  REQUIRE(bias_after.shape() == shape{static_cast<std::int64_t>(channels)});
  for (std::size_t c = 0; c < channels; ++c) {
    const double root = std::sqrt(bn.var[c] + bn.eps);
    for (std::size_t k = 0; k < per_channel; ++k) {
      const std::size_t i = c * per_channel + k;
      const double expected = static_cast<double>(weight_before.values()[i]) * bn.gamma[c] / root;
      CHECK(weight_after.values()[i] == Approx(expected).epsilon(1e-6).margin(1e-30));
    }
    const double expected_bias = (bias_before[c] - bn.mean[c]) * bn.gamma[c] / root + bn.beta[c];
    CHECK(bias_after.values()[c] == Approx(expected_bias).epsilon(1e-6).margin(1e-7));
  }
}

std::vector<double> as_doubles(const tensor& t) { return {t.values().begin(), t.values().end()}; }

}  // namespace

TEST_CASE("conv2d -> batch_norm2d: fused parameters follow the formula, the batch norm is gone") {
  builder b(11);
  auto x = b.input("x", {2, 3, 6, 6});
  auto h = b.add("conv", op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("bn", op::batch_norm2d{.num_features = 4, .eps = 1e-3}, h);
  auto y = b.add("relu", op::relu{}, h);
  graph g = b.output(y);
  set_batch_norm(g, "bn", 4);
  const tensor weight = g.parameter("conv.weight");
  const std::vector<double> bias = as_doubles(g.parameter("conv.bias"));
  const batch_norm_values bn = read_batch_norm(g, "bn", 1e-3);

  const conv_bn_fusion_info info = fuse_conv_bn.run(g);
  CHECK(info.fused == std::vector<fused_conv_bn>{{"conv", "bn"}});
  CHECK(info.skipped.empty());
  check_fused(weight, bias, bn, g.parameter("conv.weight"), g.parameter("conv.bias"));

  CHECK_FALSE(g.contains("bn"));
  CHECK(g.size() == 4);
  CHECK(g.at("relu").inputs == std::vector<node_id>{g.id("conv")});
  CHECK(g.at("conv").as<op::conv2d>() ==
        op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .padding = {1}, .bias = true});
}

TEST_CASE("conv1d without bias -> batch_norm1d: the conv gains a bias") {
  builder b(5);
  auto x = b.input("x", {2, 2, 9});
  auto h = b.add("conv", op::conv1d{.in_channels = 2, .out_channels = 6, .kernel_size = {3}, .groups = 2,
                                    .bias = false},
                 x);
  h = b.add("bn", op::batch_norm1d{.num_features = 6}, h);
  graph g = b.output(h);
  set_batch_norm(g, "bn", 6);
  const tensor weight = g.parameter("conv.weight");
  const batch_norm_values bn = read_batch_norm(g, "bn", 1e-5);

  const conv_bn_fusion_info info = fuse_conv_bn.run(g);
  CHECK(info.fused == std::vector<fused_conv_bn>{{"conv", "bn"}});
  CHECK(g.at("conv").as<op::conv1d>().bias);
  check_fused(weight, std::vector<double>(6, 0.0), bn, g.parameter("conv.weight"), g.parameter("conv.bias"));
  CHECK(g.at("output").inputs == std::vector<node_id>{g.id("conv")});
}

TEST_CASE("a batch norm without affine parameters has gamma 1 and beta 0") {
  builder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto h = b.add("conv", op::conv2d{.in_channels = 2, .out_channels = 3, .kernel_size = {1}}, x);
  h = b.add("bn", op::batch_norm2d{.num_features = 3, .affine = false}, h);
  graph g = b.output(h);
  set_batch_norm(g, "bn", 3, false);
  const tensor weight = g.parameter("conv.weight");
  const std::vector<double> bias = as_doubles(g.parameter("conv.bias"));
  const batch_norm_values bn = read_batch_norm(g, "bn", 1e-5, false);
  fuse_conv_bn.run(g);
  check_fused(weight, bias, bn, g.parameter("conv.weight"), g.parameter("conv.bias"));
}

TEST_CASE("pairs that cannot be fused are left alone, with the reason") {
  builder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto c1 = b.add("conv1", op::conv2d{.in_channels = 2, .out_channels = 2, .kernel_size = {1}}, x);
  auto n1 = b.add("bn1", op::batch_norm2d{.num_features = 2}, c1);
  auto skip = b.add("skip", op::add{}, n1, c1);  // conv1's result has a second reader
  auto c2 = b.add("conv2", op::conv2d{.in_channels = 2, .out_channels = 2, .kernel_size = {1}}, skip);
  auto n2 = b.add("bn2", op::batch_norm2d{.num_features = 2, .track_running_stats = false}, c2);
  auto c3 = b.add("conv3", op::conv1d{.in_channels = 2, .out_channels = 2, .kernel_size = {1}},
                  b.add("flat", op::flatten{.start_dim = 2}, n2));
  auto n3 = b.add("bn3", op::batch_norm2d{.num_features = 2}, c3);  // conv1d -> batch_norm2d: not a pattern
  graph g = b.output(n3);
  const graph before = g;

  const conv_bn_fusion_info info = fuse_conv_bn.run(g);
  CHECK(info.fused.empty());
  REQUIRE(info.skipped.size() == 2);
  CHECK(info.skipped[0].conv == "conv1");
  CHECK(info.skipped[0].batch_norm == "bn1");
  CHECK_THAT(info.skipped[0].reason, Catch::Contains("2 readers"));
  CHECK(info.skipped[1].batch_norm == "bn2");
  CHECK_THAT(info.skipped[1].reason, Catch::Contains("track_running_stats=false"));
  CHECK(g == before);
}

TEST_CASE("several pairs in one graph are all fused") {
  builder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto h = b.add("conv1", op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}}, x);
  h = b.add("bn1", op::batch_norm2d{.num_features = 4}, h);
  h = b.add("conv2", op::conv2d{.in_channels = 4, .out_channels = 4, .kernel_size = {3}}, h);
  h = b.add("bn2", op::batch_norm2d{.num_features = 4}, h);
  graph g = b.output(h);
  const auto result = run(std::move(g), fuse_conv_bn);
  CHECK(result.get<conv_bn_fusion_info>().fused == std::vector<fused_conv_bn>{{"conv1", "bn1"}, {"conv2", "bn2"}});
  CHECK(result.graph.size() == 4);
  CHECK(result.graph.at("conv2").inputs == std::vector<node_id>{result.graph.id("conv1")});
}

TEST_CASE("common metadata stays what add_common_metadata writes, later sections must be redone") {
  builder b;
  auto x = b.input("x", {2, 3, 6, 6});
  auto h = b.add("conv", op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .bias = false}, x);
  h = b.add("bn", op::batch_norm2d{.num_features = 4}, h);
  auto y = b.add("relu", op::relu{}, h);
  auto with_common = b.output(y) | init_metadata | add_common_metadata;
  // A format on the batch norm's result: what the pair produced, so the fused conv takes it.
  const format fixed8{fixed_fmt{.width = 8, .frac = 3}};
  with_common.at("bn").meta.common.results.at("data_out_0").precision = fixed8;
  with_common = std::move(with_common) | add_common_metadata;
  with_common.at("conv").meta.software.args["weight"].stat["range_min_max"]["min"] = -1.0;

  auto fused = std::move(with_common) | fuse_conv_bn;
  static_assert(detail::contains_fact<fact::common_metadata, decltype(fused)::established>::value,
                "fusion keeps common metadata valid");
  static_assert(!detail::contains_fact<fact::statistics, decltype(fused | fuse_conv_bn)::established>::value);

  const node& conv = fused.at("conv");
  std::vector<std::string> keys;
  for (const auto& [k, v] : conv.meta.common.args) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"data_in_0", "weight", "bias"});
  CHECK(std::get<tensor_meta>(conv.meta.common.args.at("bias")).shape == shape{4});
  CHECK(conv.meta.common.results.at("data_out_0").precision == fixed8);
  CHECK(conv.meta.software.args.empty());  // statistics of the unfused weight are dropped
  // Running add_common_metadata again changes nothing.
  const graph again = fused | add_common_metadata;
  CHECK(again == static_cast<const graph&>(fused));
}

TEST_CASE("fuse_conv_bn: inconsistent or unset parameters are errors naming the node") {
  SECTION("negative variance") {
    builder b;
    auto x = b.input("x", {1, 1, 3, 3});
    auto h = b.add("conv", op::conv2d{.in_channels = 1, .out_channels = 2, .kernel_size = {1}}, x);
    h = b.add("bn", op::batch_norm2d{.num_features = 2}, h);
    graph g = b.output(h);
    g.set_parameter(g.id("bn"), "running_var", tensor({2}, {1.0f, -3.0f}));
    CHECK_THROWS_WITH(fuse_conv_bn.run(g), Catch::Contains("bn has running_var[1]"));
    CHECK(g.contains("bn"));
  }
  SECTION("channel counts that differ") {
    builder b;
    auto x = b.input("x", {1, 1, 3, 3});
    auto h = b.add("conv", op::conv2d{.in_channels = 1, .out_channels = 2, .kernel_size = {1}}, x);
    h = b.add("bn", op::batch_norm2d{.num_features = 3}, h);
    graph g = b.output(h);
    CHECK_THROWS_WITH(fuse_conv_bn.run(g), Catch::Contains("num_features=3") && Catch::Contains("out_channels=2"));
  }
  SECTION("a parameter never set") {
    graph g;
    auto x = g.add("x", op::placeholder{.shape = {1, 1, 3, 3}});
    auto c = g.add("conv", op::conv2d{.in_channels = 1, .out_channels = 1, .kernel_size = {1}}, {x});
    auto n = g.add("bn", op::batch_norm2d{.num_features = 1}, {c});
    g.add("output", op::output{}, {n});
    CHECK_THROWS_WITH(fuse_conv_bn.run(g), Catch::Contains("conv (conv2d) has no \"weight\" parameter set"));
  }
}

TEST_CASE("the fused graph computes what the unfused one did (float evaluator)") {
  builder b(21);
  auto x = b.input("x", {2, 3, 7, 7});
  auto h = b.add("conv1", op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("bn1", op::batch_norm2d{.num_features = 4, .eps = 1e-3}, h);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("conv2", op::conv2d{.in_channels = 4, .out_channels = 6, .kernel_size = {3}, .stride = {2}, .groups = 2,
                                .bias = false},
            h);
  h = b.add("bn2", op::batch_norm2d{.num_features = 6}, h);
  auto s = b.input("s", {2, 2, 11});
  auto k = b.add("conv3", op::conv1d{.in_channels = 2, .out_channels = 5, .kernel_size = {3}}, s);
  k = b.add("bn3", op::batch_norm1d{.num_features = 5}, k);
  graph g = b.output(h, k);
  set_batch_norm(g, "bn1", 4);
  set_batch_norm(g, "bn2", 6);
  set_batch_norm(g, "bn3", 5);

  // Inputs from a fixed sequence (values in [-2, 2)).
  const auto filled = [](const shape& sh, std::uint32_t seed) {
    tensor t(sh);
    std::uint32_t state = seed;
    for (float& v : t.values()) {
      state = state * 1664525u + 1013904223u;
      v = static_cast<float>(state >> 8) * 0x1p-22f - 2.0f;
    }
    return t;
  };
  const tensor input = filled({2, 3, 7, 7}, 1);
  const tensor sequence = filled({2, 2, 11}, 2);

  evaluator before(g);
  const std::span<const tensor> unfused = before.run({{"x", input}, {"s", sequence}});
  const std::vector<tensor> expected(unfused.begin(), unfused.end());
  graph fused = g;
  CHECK(fuse_conv_bn.run(fused).fused.size() == 3);
  evaluator after(fused);
  const std::span<const tensor> got = after.run({{"x", input}, {"s", sequence}});
  REQUIRE(got.size() == expected.size());
  for (std::size_t r = 0; r < got.size(); ++r) {
    REQUIRE(got[r].shape() == expected[r].shape());
    // The fused weights are rounded once more and the sums run over other products: float
    // rounding of sums of up to 27 terms of magnitude about 1.
    for (std::size_t i = 0; i < got[r].size(); ++i)
      CHECK(got[r].values()[i] == Approx(expected[r].values()[i]).epsilon(1e-5).margin(1e-5));
  }
}
