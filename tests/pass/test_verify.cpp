// verify: every problem is found and reported together.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/verify.hpp>

#include <catch2/catch.hpp>

using namespace mase;

namespace {
graph annotated() {
  builder b;
  auto x = b.input("x", {4, 6});
  auto fc = b.add("fc1", op::linear{.in_features = 6, .out_features = 3}, x);
  auto r = b.add("relu", op::relu{}, fc);
  return b.output(r) | init_metadata | add_common_metadata;
}
std::string problems_of(const graph& g) {
  try {
    (void)verify.run(g);
  } catch (const error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a well-formed graph verifies, before and after metadata") {
  builder b;
  auto x = b.input("x", {4, 6});
  const graph bare = b.output(b.add("fc1", op::linear{.in_features = 6, .out_features = 3}, x));
  CHECK(verify.run(bare).nodes == 3);
  CHECK(verify.run(bare | init_metadata).edges == 2);
  const verify_info info = verify.run(annotated());
  CHECK(info.nodes == 4);
  CHECK(info.edges == 3);
  CHECK(info.tensor_entries == 9);  // x:1, fc1:4, relu:2, output:2
}

TEST_CASE("verify reports every inconsistency at once") {
  graph g = annotated();
  g.at("fc1").meta.common.mase_op = "conv2d";
  std::get<tensor_meta>(g.at("relu").meta.common.args.at("data_in_0")).shape = shape{4, 4};
  g.at("relu").meta.common.args.erase("data_in_0");
  g.at("fc1").parameters.erase("bias");
  g.at("output").meta.common.results.at("data_out_0").value = tensor({2, 2});
  const std::string report = problems_of(g);
  CHECK_THAT(report, Catch::StartsWith("verify: the graph has 4 problem(s):"));
  CHECK_THAT(report, Catch::Contains("node fc1 (linear): parameter bias is missing"));
  CHECK_THAT(report, Catch::Contains("node fc1 (linear): metadata mase_op is conv2d, the op is linear"));
  CHECK_THAT(report, Catch::Contains("node relu (relu): args has no tensor entry data_in_0 for input fc1"));
  CHECK_THAT(report, Catch::Contains("node output (output): results.data_out_0: the recorded value has shape [2, 2] "
                                     "but the entry says [4, 3]"));
}

TEST_CASE("verify catches shape and edge problems") {
  graph g = annotated();
  std::get<tensor_meta>(g.at("relu").meta.common.args.at("data_in_0")).shape = shape{4, 4};
  CHECK_THAT(problems_of(g), Catch::Contains("args.data_in_0 has shape [4, 4], but input fc1 produces [4, 3]"));
  graph h = annotated();
  h.replace_op(h.id("fc1"), op::linear{.in_features = 5, .out_features = 3});
  CHECK_THAT(problems_of(h), Catch::Contains("linear: the input's last dimension differs from in_features"));
}
