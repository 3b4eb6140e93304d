#include <mase/mase.hpp>

#include <cstdio>

int main() {
  const mase::format f = mase::parse_format("fixed<8,3>");
  const float x = 1.3f;
  float y = 0;
  mase::quantize(f, std::span<const float>(&x, 1), std::span<float>(&y, 1));
  std::printf("%s: %s quantizes 1.3 to %g\n", CONSUMER_NAME, mase::to_string(f).c_str(), static_cast<double>(y));

  // The graph layer at the user's -O3 -Werror: build, annotate, verify, report.
  mase::builder b;
  auto in = b.input("x", {4, 8});
  auto h = b.add("fc1", mase::op::linear{.in_features = 8, .out_features = 3}, in);
  h = b.add("drop", mase::op::dropout{}, h);
  const auto [g, info] = mase::run(b.output(h), mase::init_metadata | mase::add_common_metadata | mase::remove_dropout |
                                                    mase::verify | mase::report_node_shape);
  const bool graph_ok = std::get<3>(info).nodes == 3 && g.at("fc1").meta.common.results.at("data_out_0").shape ==
                                                            mase::shape{4, 3};
  std::printf("%s: graph of %zu nodes after remove_dropout\n", CONSUMER_NAME, g.size());
  return y == 1.25f && graph_ok ? 0 : 1;
}
