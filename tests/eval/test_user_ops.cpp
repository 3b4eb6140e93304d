// A user's own op, defined outside the library: it goes into graphs, prints, infers its shape,
// runs in the evaluator through its own kernel, saves to and loads from checkpoints through a
// vocabulary that has it, and compares like a built-in op. An op missing a facet it needs is a
// mase::error naming the op and the member to add.

#include <mase/eval/evaluator.hpp>
#include <mase/io/checkpoint.hpp>
#include <mase/io/quant_config.hpp>
#include <mase/ir/builder.hpp>
#include <mase/ir/print.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/pass/flop_estimator.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include "../support/hard_shrink.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace mase;

namespace user {

using ::user::hard_shrink;  // tests/support/hard_shrink.hpp

// An element-wise op with no rules of its own: its category's defaults apply.
struct twice {
  static constexpr std::string_view name = "twice";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return std::tuple{}; }
  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_ok(in[0]); }
  constexpr bool operator==(const twice&) const = default;
};

// An op with no kernel, in a category whose work depends on the op, and no work rule.
struct no_kernel {
  static constexpr std::string_view name = "no_kernel";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::dot_product;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return std::tuple{}; }
  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_ok(in[0]); }
  constexpr bool operator==(const no_kernel&) const = default;
};

}  // namespace user

namespace {

graph shrink_after_linear(double lambda) {
  builder b(3);
  auto x = b.input("x", {2, 4});
  auto h = b.add("fc", op::linear{.in_features = 4, .out_features = 4}, x);
  h = b.add("shrink", user::hard_shrink{.lambda = lambda}, h);
  return b.output(h);
}

}  // namespace

TEST_CASE("user ops: a user's op is a node like any other", "[user_ops]") {
  const graph g = shrink_after_linear(0.25);
  const node& n = g.at("shrink");
  CHECK(n.is<user::hard_shrink>());
  CHECK_FALSE(n.is<op::relu>());
  CHECK(n.as<user::hard_shrink>().lambda == 0.25);
  CHECK(n.op_name() == "hard_shrink");
  CHECK(n.kind() == node_kind::module_related_func);
  CHECK(n.op.builtin_index() == -1);
  CHECK(g.at("fc").op.builtin_index() >= 0);
  CHECK(to_string(n.op) == "hard_shrink(lambda=0.25)");
  CHECK_THROWS_WITH(n.as<op::relu>(), "node shrink is a hard_shrink, not a relu");

  const graph same = shrink_after_linear(0.25), other = shrink_after_linear(0.75);
  CHECK(n.op == same.at("shrink").op);
  CHECK_FALSE(n.op == other.at("shrink").op);
  CHECK_FALSE(n.op == g.at("fc").op);

  const graph annotated = g | init_metadata | add_common_metadata;
  CHECK(annotated.at("shrink").meta.common.results.at("data_out_0").shape == shape{2, 4});
}

TEST_CASE("user ops: the evaluator runs a user's kernel", "[user_ops]") {
  graph g = shrink_after_linear(0.5);
  // fc is the identity, so the result is the definition of hard_shrink applied to x.
  tensor w({4, 4});
  for (int i = 0; i < 4; ++i) w.data()[i * 4 + i] = 1.0f;
  g.set_parameter(g.id("fc"), "weight", w);
  g.set_parameter(g.id("fc"), "bias", tensor({4}));
  tensor x({2, 4});
  const float values[] = {-1.0f, -0.5f, -0.25f, 0.0f, 0.25f, 0.5f, 0.75f, 2.0f};
  std::copy(std::begin(values), std::end(values), x.data());

  evaluator ev(g);
  const tensor& y = ev.run({{"x", x}})[0];
  const float expected[] = {-1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.75f, 2.0f};
  for (std::size_t i = 0; i < 8; ++i) CHECK(y.data()[i] == expected[i]);
}

TEST_CASE("user ops: an op without a kernel is an error naming the member to add", "[user_ops]") {
  builder b(1);
  auto x = b.input("x", {3});
  const graph g = b.output(b.add("nk", user::no_kernel{}, x));
  evaluator ev(g);
  CHECK_THROWS_WITH(ev.run({{"x", tensor({3})}}),
                    Catch::Contains("node nk: op no_kernel has no float kernel") &&
                        Catch::Contains("void evaluate(const mase::eval::kernel_args&) const"));
}

TEST_CASE("user ops: checkpoints load a user's op through a vocabulary that has it", "[user_ops]") {
  const graph g = shrink_after_linear(0.125) | init_metadata | add_common_metadata;
  const checkpoint_strings saved = checkpoint_to_strings(g);
  CHECK_THROWS_WITH(graph_from_checkpoint_strings(saved.json, saved.safetensors),
                    Catch::Contains("unknown op \"hard_shrink\""));

  vocabulary ops = builtin_vocabulary();
  ops.add<user::hard_shrink>();
  CHECK(ops.contains("hard_shrink"));
  CHECK(ops.contains("linear"));
  const graph reloaded = graph_from_checkpoint_strings(saved.json, saved.safetensors, {.ops = &ops});
  CHECK(reloaded == g);
  CHECK(reloaded.at("shrink").as<user::hard_shrink>().lambda == 0.125);

  CHECK_THROWS_WITH(ops.add<user::hard_shrink>(), Catch::Contains("an op called \"hard_shrink\" is already in it"));
  CHECK_FALSE(builtin_vocabulary().contains("hard_shrink"));  // the built-in vocabulary is unchanged
  CHECK_THROWS_WITH(ops.make("hard_shrink", {{"lambda", attribute_value(true)}}),
                    Catch::Contains("attribute \"lambda\" of op hard_shrink must be a number"));
  CHECK(ops.make("hard_shrink", {{"lambda", attribute_value(std::int64_t{2})}}) == any_op(user::hard_shrink{.lambda = 2}));
}

TEST_CASE("user ops: estimate_flops uses a user's work rule or its category's, and names the member when "
          "there is neither", "[user_ops]") {
  builder b(3);
  auto x = b.input("x", {2, 4});
  auto h = b.add("fc", op::linear{.in_features = 4, .out_features = 4}, x);
  h = b.add("shrink", user::hard_shrink{}, h);
  h = b.add("double", user::twice{}, h);
  const graph g = b.output(h) | init_metadata | add_common_metadata;
  const flop_estimate estimate = estimate_flops(g);
  CHECK(estimate.nodes.at("shrink") == op_cost{.parameters = 0, .computations = 16, .backward_computations = 8,
                                               .input_buffer_size = 8, .output_buffer_size = 8});
  // Element-wise by category: one operation per result element each way, as relu counts.
  CHECK(estimate.nodes.at("double") == op_cost{.parameters = 0, .computations = 8, .backward_computations = 8,
                                               .input_buffer_size = 8, .output_buffer_size = 8});
  CHECK(estimate.nodes.at("fc").computations == 2 * 4 * 4);  // the built-in rule beside it

  builder c(1);
  auto y = c.input("x", {3});
  const graph without = c.output(c.add("nk", user::no_kernel{}, y)) | init_metadata | add_common_metadata;
  CHECK_THROWS_WITH(estimate_flops(without), Catch::Contains("node nk: op no_kernel (dot_product) has no work rule") &&
                                                 Catch::Contains("mase::op_work work("));
}

TEST_CASE("user ops: the facets reach the passes: quantize by type, and no hardware component", "[user_ops]") {
  CHECK(any_op(user::hard_shrink{}).category() == op_category::elementwise);
  CHECK(any_op(user::hard_shrink{}).quantization() != nullptr);
  CHECK(any_op(user::twice{}).quantization() == nullptr);
  CHECK(any_op(user::twice{}).hardware() == nullptr);

  const format q84 = format(fixed_fmt{.width = 8, .frac = 4});
  graph g = shrink_after_linear(0.5) | init_metadata | add_common_metadata;
  const quantize_info info =
      quantize({.by = quantize_by::type, .entries = {{"hard_shrink", operand_formats{.data_in = q84, .data_out = q84}}}})
          .run(g);
  CHECK(info.at("shrink").outcome == quantize_outcome::quantized);
  CHECK(info.at("fc").outcome == quantize_outcome::no_config);
  CHECK(g.at("shrink").meta.common.results.at("data_out_0").precision == q84);

  // Not quantizable: a by-type key naming it is refused, and it has no hardware component.
  builder b(1);
  auto x = b.input("x", {4});
  const auto h = b.output(b.add("t", user::twice{}, x)) | init_metadata | add_common_metadata;
  graph refused = h;
  CHECK_THROWS_WITH(quantize({.by = quantize_by::type, .entries = {{"twice", operand_formats{.data_in = q84}}}}).run(refused),
                    Catch::Contains("op twice cannot be quantized"));
  const auto quantized = h | quantize({.by = quantize_by::type, .default_config = operand_formats::all(q84)});
  CHECK_THROWS_WITH(quantized | add_hardware_metadata, Catch::Contains("node t (twice) has no hardware component"));
}

TEST_CASE("user ops: a TOML config quantizes a user's op by type when given a vocabulary that has it", "[user_ops]") {
  const std::string text = R"(
by = "type"
[hard_shrink.config]
name = "integer"
data_in_width = 8
data_in_frac_width = 4
data_out_width = 6
data_out_frac_width = 2
)";
  // Without the vocabulary, the key is an unknown op, as MASE's loader would say.
  CHECK_THROWS_WITH(parse_quantize_config(text, "shrink.toml"),
                    Catch::Contains("shrink.toml") && Catch::Contains("unknown op \"hard_shrink\""));

  vocabulary ops = builtin_vocabulary();
  ops.add<user::hard_shrink>();
  const quantize_config config = parse_quantize_config(text, "shrink.toml", {.ops = &ops});
  graph g = shrink_after_linear(0.5) | init_metadata | add_common_metadata;
  const quantize_info info = quantize(config).run(g);
  CHECK(info.at("shrink").outcome == quantize_outcome::quantized);
  CHECK(info.at("fc").outcome == quantize_outcome::no_config);
  const format q84 = format(fixed_fmt{.width = 8, .frac = 4});
  CHECK(std::get<tensor_meta>(g.at("shrink").meta.common.args.at("data_in_0")).precision == q84);
  CHECK(g.at("shrink").meta.common.results.at("data_out_0").precision == format(fixed_fmt{.width = 6, .frac = 2}));

  // A graph without the op: the entry matches nothing, as one for a built-in op would.
  builder b(1);
  auto x = b.input("x", {4});
  graph plain = b.output(b.add("r", op::relu{}, x)) | init_metadata | add_common_metadata;
  CHECK(quantize(config).run(plain).at("r").outcome == quantize_outcome::no_config);
}
