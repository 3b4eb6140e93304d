// The compiled mode, as a user's project links it (mase::compiled): the evaluator, the op
// vocabulary and the checkpoint codec come from the installed library, not from this unit.
#include <mase/mase.hpp>

#include <algorithm>
#include <cstdio>

int main() {
  mase::builder b(1);
  auto x = b.input("x", {4, 8});
  auto h = b.add("fc1", mase::op::linear{.in_features = 8, .out_features = 3}, x);
  h = b.add("relu", mase::op::relu{}, h);
  const mase::graph g = b.output(h);

  const mase::checkpoint_strings saved = mase::checkpoint_to_strings(g);
  const mase::graph reloaded = mase::graph_from_checkpoint_strings(saved.json, saved.safetensors);
  mase::evaluator original(g), copy(reloaded);
  const mase::tensor input({4, 8}, std::vector<float>(32, 0.25f));
  const mase::tensor a = original.run(input)[0], c = copy.run(input)[0];
  const bool ok = reloaded == g && a.shape() == mase::shape{4, 3} && std::equal(a.data(), a.data() + a.size(), c.data());
  std::printf("consumer_compiled: checkpoint reloaded and evaluated: %s\n", ok ? "identical" : "DIFFERENT");
  return ok ? 0 : 1;
}
