// The dynamic graph: building, lookup, rewiring, erasing and the topological order.

#include <mase/core/tensor_eigen.hpp>
#include <mase/ir/graph.hpp>

#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

using namespace mase;

namespace {

std::vector<std::string> names_in_order(const graph& g) {
  std::vector<std::string> names;
  for (node_id id : g.order()) names.push_back(g[id].name);
  return names;
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const error& e) {
    return e.what();
  }
  return "(no error)";
}

// x -> fc1 -> relu -> dropout -> fc2 -> output
struct mlp {
  graph g;
  node_id x, fc1, relu, drop, fc2, out;
  mlp() {
    x = g.add("x", op::placeholder{{2, 4}});
    fc1 = g.add("fc1", op::linear{.in_features = 4, .out_features = 3}, {x});
    relu = g.add("relu", op::relu{}, {fc1});
    drop = g.add("dropout", op::dropout{.p = 0.25}, {relu});
    fc2 = g.add("fc2", op::linear{.in_features = 3, .out_features = 2}, {drop});
    out = g.add("output", op::output{}, {fc2});
  }
};

}  // namespace

TEST_CASE("nodes are found by name and id, in insertion order") {
  mlp m;
  CHECK(m.g.size() == 6);
  CHECK(names_in_order(m.g) == std::vector<std::string>{"x", "fc1", "relu", "dropout", "fc2", "output"});
  CHECK(m.g.id("fc2") == m.fc2);
  CHECK(m.g.at("dropout").as<op::dropout>().p == 0.25);
  CHECK(m.g.at("fc1").kind() == node_kind::module_related_func);
  CHECK(m.g.placeholders() == std::vector<node_id>{m.x});
  CHECK(m.g.output() == m.out);
  CHECK(m.g.users(m.fc1) == std::vector<node_id>{m.relu});
  CHECK(std::vector<node_id>(m.g.inputs(m.fc2).begin(), m.g.inputs(m.fc2).end()) == std::vector<node_id>{m.drop});
}

TEST_CASE("unknown names and bad ids are clear errors") {
  mlp m;
  CHECK(error_of([&] { (void)m.g.at("fc3"); }) == "no node named \"fc3\" in the graph; did you mean fc1 or fc2?");
  CHECK(error_of([&] { (void)m.g.at("conv"); }) ==
        "no node named \"conv\" in the graph; its nodes are: x, fc1, relu, dropout, fc2, output");
  CHECK_THROWS_WITH(m.g.at("fc1").as<op::relu>(), "node fc1 is a linear, not a relu");
  CHECK_THROWS_WITH(m.g[node_id{99}], Catch::Contains("does not refer to a node of this graph"));
}

TEST_CASE("adding validates names, inputs and arity") {
  mlp m;
  CHECK_THROWS_WITH(m.g.add("fc1", op::relu{}, {m.x}), Catch::Contains("a node named fc1 already exists"));
  CHECK_THROWS_WITH(m.g.add("bad.name", op::relu{}, {m.x}), Catch::Contains("is not an identifier"));
  CHECK_THROWS_WITH(m.g.add("2x", op::relu{}, {m.x}), Catch::Contains("is not an identifier"));
  CHECK_THROWS_WITH(m.g.add("sum", op::add{}, {m.x}), "node sum (add) takes 2 input(s), but 1 were given");
  CHECK_THROWS_WITH(m.g.add("in2", op::placeholder{{1}}, {m.x}), Catch::Contains("takes 0 input(s)"));
  CHECK_THROWS_WITH(m.g.add("r", op::relu{}, {node_id{42}}), Catch::Contains("is not a node of this graph"));
  CHECK(m.g.size() == 6);  // nothing half-added
}

TEST_CASE("parameters are checked against the op's declaration") {
  mlp m;
  m.g.set_parameter(m.fc1, "weight", tensor({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  m.g.set_parameter(m.fc1, "bias", tensor({3}, {-1, 0, 1}));
  CHECK(m.g.parameter("fc1.weight").matrix()(1, 2) == 7.0f);  // row-major [out, in]
  CHECK(m.g.parameter("fc1.bias").values()[2] == 1.0f);
  CHECK_THROWS_WITH(m.g.set_parameter(m.fc1, "weight", tensor({4, 3})),
                    "parameter fc1.weight must have shape [3, 4], not [4, 3]");
  CHECK_THROWS_WITH(m.g.set_parameter(m.relu, "weight", tensor({1})),
                    "node relu (relu) has no parameter \"weight\"; its parameters are: (none)");
  CHECK_THROWS_WITH(m.g.parameter("fc1.gamma"), "node fc1 has no parameter \"gamma\"; it has: weight, bias");
  CHECK_THROWS_WITH(m.g.parameter("fc1"), Catch::Contains("must be <node>.<role>"));
  const auto named = m.g.named_parameters();
  REQUIRE(named.size() == 2);
  CHECK(named[0].first == "fc1.weight");
  CHECK(named[1].first == "fc1.bias");
}

TEST_CASE("replace_all_uses_with and erase remove a node (MASE tutorial 1's dropout removal)") {
  mlp m;
  CHECK_THROWS_WITH(m.g.erase(m.drop), "cannot erase node dropout: fc2 still read(s) it; replace_all_uses_with it first");
  CHECK(m.g.replace_all_uses_with(m.drop, m.relu) == 1);
  m.g.erase(m.drop);
  CHECK(names_in_order(m.g) == std::vector<std::string>{"x", "fc1", "relu", "fc2", "output"});
  CHECK(m.g.users(m.relu) == std::vector<node_id>{m.fc2});
  CHECK_FALSE(m.g.contains("dropout"));
  CHECK_FALSE(m.g.contains(m.drop));
  // The other ids stay valid.
  CHECK(m.g[m.fc2].name == "fc2");
  // The name can be used again.
  const node_id again = m.g.add("dropout", op::dropout{}, {m.fc2});
  CHECK(m.g[again].name == "dropout");
}

TEST_CASE("rewiring to a later node restores the topological order") {
  graph g;
  const node_id a = g.add("a", op::placeholder{{4}});
  const node_id r1 = g.add("r1", op::relu{}, {a});
  const node_id r2 = g.add("r2", op::relu{}, {r1});
  const node_id late = g.add("late", op::identity{}, {a});  // defined after r2
  g.replace_all_uses_with(r1, late);                          // r2 now reads late
  CHECK(names_in_order(g) == std::vector<std::string>{"a", "r1", "late", "r2"});
  for (std::size_t i = 0; i < g.order().size(); ++i)
    for (node_id in : g.inputs(g.order()[i])) {
      const auto pos = std::find(g.order().begin(), g.order().end(), in) - g.order().begin();
      CHECK(static_cast<std::size_t>(pos) < i);
    }
  (void)r2;
}

TEST_CASE("a rewiring that would make a cycle is an error") {
  graph g;
  const node_id a = g.add("a", op::placeholder{{4}});
  const node_id r1 = g.add("r1", op::relu{}, {a});
  const node_id r2 = g.add("r2", op::relu{}, {r1});
  CHECK_THROWS_WITH(g.replace_all_uses_with(a, r2), Catch::Contains("the graph has a cycle through node"));
}

TEST_CASE("replace swaps a node for a new one, keeping the name if asked") {
  mlp m;
  m.g.set_parameter(m.fc2, "weight", tensor({2, 3}));
  const node_id swapped = m.g.replace(m.relu, "relu", op::identity{}, {m.fc1});
  CHECK(m.g.at("relu").is<op::identity>());
  CHECK(m.g.id("relu") == swapped);
  CHECK(m.g.users(swapped) == std::vector<node_id>{m.drop});
  CHECK(names_in_order(m.g) == std::vector<std::string>{"x", "fc1", "relu", "dropout", "fc2", "output"});
  // replace_op keeps edges; parameters the new op lacks go
  m.g.replace_op(m.fc2, op::linear{.in_features = 3, .out_features = 2, .bias = false});
  CHECK(m.g.at("fc2").parameters.contains("weight"));
  m.g.replace_op(m.fc2, op::identity{});
  CHECK(m.g.at("fc2").parameters.empty());
  CHECK_THROWS_WITH(m.g.replace_op(m.fc2, op::add{}), Catch::Contains("takes 2 input(s)"));
}

TEST_CASE("insert_before puts a node at a chosen place") {
  mlp m;
  const node_id scale = m.g.insert_before(m.relu, "pre", op::identity{}, {m.fc1});
  m.g.replace_all_uses_with(m.fc1, scale);
  CHECK(names_in_order(m.g) == std::vector<std::string>{"x", "fc1", "pre", "relu", "dropout", "fc2", "output"});
  CHECK(m.g.users(m.fc1) == std::vector<node_id>{scale});  // pre keeps reading fc1
  CHECK_THROWS_WITH(m.g.insert_before(m.fc1, "early", op::relu{}, {m.relu}), Catch::Contains("must come before it"));
}

TEST_CASE("graphs compare by structure, parameters bit for bit and metadata") {
  mlp a, b;
  CHECK(a.g == b.g);
  a.g.set_parameter(a.fc1, "bias", tensor({3}, {0.0f, 0.0f, 0.0f}));
  b.g.set_parameter(b.fc1, "bias", tensor({3}, {0.0f, -0.0f, 0.0f}));
  CHECK_FALSE(a.g == b.g);  // -0 differs from +0 bit for bit
  b.g.set_parameter(b.fc1, "bias", tensor({3}, {0.0f, 0.0f, 0.0f}));
  CHECK(a.g == b.g);
  b.g.at("fc2").meta.hardware.device_id = 3;
  CHECK_FALSE(a.g == b.g);
}

TEST_CASE("metadata compares bit for bit: a NaN statistic equals itself, -0 differs from +0") {
  mlp a, b;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (mlp* m : {&a, &b}) {
    m->g.at("fc1").meta.software.args["weight"].stat["range_min_max"]["min"] = nan;
    m->g.at("fc1").meta.software.args["weight"].stat["range_min_max"]["all"] = std::vector<double>{1.0, nan};
    m->g.at("fc1").meta.common.args["negative_slope"] = config_value(nan);
  }
  CHECK(a.g == b.g);
  b.g.at("fc1").meta.common.args["negative_slope"] = config_value(-0.0);
  a.g.at("fc1").meta.common.args["negative_slope"] = config_value(0.0);
  CHECK_FALSE(a.g == b.g);
  a.g.at("fc1").meta.common.args["negative_slope"] = config_value(-0.0);
  CHECK(a.g == b.g);
  b.g.at("fc1").meta.software.args["weight"].stat["range_min_max"]["all"] = std::vector<double>{1.0, -nan};
  CHECK_FALSE(a.g == b.g);
}
