// Pipelines: composition, the facts carried in the graph's type, infos, and user-written passes
// (MASE tutorial 1's count-dropout and remove-dropout passes).

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/remove_nodes.hpp>
#include <mase/pass/verify.hpp>

#include <catch2/catch.hpp>

#include <type_traits>

using namespace mase;

namespace {

graph mlp_with_dropout() {
  builder b;
  auto x = b.input("x", {8, 28 * 28});
  auto h = b.add("fc1", op::linear{.in_features = 784, .out_features = 64}, x);
  h = b.add("dropout1", op::dropout{.p = 0.5}, h);
  h = b.add("relu", op::relu{}, h);
  h = b.add("dropout2", op::dropout{.p = 0.1}, h);
  auto y = b.add("fc2", op::linear{.in_features = 64, .out_features = 10}, h);
  return b.output(y);
}

// Tutorial 1, pass 1: an analysis pass returning an info struct.
struct dropout_count {
  std::size_t count = 0;
};
constexpr auto count_dropout = make_pass([](const graph& g) {
  dropout_count info;
  g.for_each_node([&](const node& n) { info.count += n.is<op::dropout>() ? 1 : 0; });
  return info;
});

// Tutorial 1, pass 2: a transform rewiring the dropouts' readers and erasing them.
constexpr auto remove_dropout_by_hand = make_pass([](graph& g) {
  for (node_id id : std::vector<node_id>(g.order().begin(), g.order().end()))
    if (g[id].is<op::dropout>()) {
      g.replace_all_uses_with(id, g[id].inputs[0]);
      g.erase(id);
    }
});

struct calibrated {
  static constexpr const char* provided_by = "calibrate";
};

}  // namespace

TEST_CASE("the graph's type carries the facts the pipeline established") {
  const graph g = mlp_with_dropout();
  auto initialised = g | init_metadata;
  static_assert(std::is_same_v<decltype(initialised), graph_with<fact::metadata_initialised>>);
  auto annotated = initialised | add_common_metadata;
  static_assert(std::is_same_v<decltype(annotated), graph_with<fact::metadata_initialised, fact::common_metadata>>);
  // Passes that provide nothing keep the facts.
  auto verified = annotated | verify | remove_dropout;
  static_assert(std::is_same_v<decltype(verified), decltype(annotated)>);
  // init_metadata invalidates what was built on the old metadata.
  auto again = verified | init_metadata;
  static_assert(std::is_same_v<decltype(again), graph_with<fact::metadata_initialised>>);
  // A graph_with is a graph.
  const graph& plain = again;
  CHECK(plain.size() == 5);
}

TEST_CASE("a | b composes, composing is associative") {
  const auto left = (init_metadata | add_common_metadata) | verify;
  const auto right = init_metadata | (add_common_metadata | verify);
  static_assert(std::is_same_v<decltype(left), decltype(right)>);
  static_assert(std::tuple_size_v<decltype(left.passes)> == 3);
  const graph g = mlp_with_dropout();
  CHECK((g | left) == (g | right));
}

TEST_CASE("running returns each pass's info, in order") {
  const graph g = mlp_with_dropout();
  auto [after, info] = run(g, init_metadata | count_dropout | remove_dropout | count_dropout | verify);
  CHECK(std::get<1>(info).count == 2);
  CHECK(std::get<2>(info).names == std::vector<std::string>{"dropout1", "dropout2"});
  CHECK(std::get<3>(info).count == 0);
  CHECK(std::get<4>(info).nodes == 5);
  CHECK(after.size() == 5);
  // The input graph is untouched: passes take the graph by value.
  CHECK(g.size() == 7);
}

TEST_CASE("tutorial 1: counting and removing dropout with user-written passes") {
  const graph g = mlp_with_dropout();
  const auto result = run(g, init_metadata | count_dropout | remove_dropout_by_hand | count_dropout);
  CHECK(std::get<1>(result.info).count == 2);
  CHECK(std::get<3>(result.info).count == 0);
  // Same graph as the library's remove_dropout.
  CHECK(result.graph == (g | init_metadata | remove_dropout));
  CHECK(result.graph.at("relu").inputs[0] == result.graph.id("fc1"));
  CHECK(result.graph.at("fc2").inputs[0] == result.graph.id("relu"));
}

TEST_CASE("remove_identity bypasses identity nodes") {
  builder b;
  auto x = b.input("x", {2, 3});
  auto i1 = b.add("id1", op::identity{}, x);
  auto r = b.add("relu", op::relu{}, i1);
  auto i2 = b.add("id2", op::identity{}, r);
  const graph g = b.output(i2, r);
  const auto [after, info] = run(g, remove_identity);
  CHECK(std::get<0>(info).names == std::vector<std::string>{"id1", "id2"});
  CHECK(after.at("relu").inputs[0] == after.id("x"));
  const auto out = after.at("output").inputs;
  CHECK(out == std::vector<node_id>{after.id("relu"), after.id("relu")});
}

TEST_CASE("user passes can declare needs and provides") {
  constexpr auto calibrate = make_pass<facts<fact::metadata_initialised>, facts<calibrated>>([](graph&) {});
  constexpr auto use_calibration = make_pass<facts<calibrated>>([](const graph&) { return 42; });
  const graph g = mlp_with_dropout();
  auto [after, info] = run(g, init_metadata | calibrate | use_calibration);
  static_assert(std::is_same_v<decltype(after), graph_with<fact::metadata_initialised, calibrated>>);
  CHECK(std::get<2>(info) == 42);
}
