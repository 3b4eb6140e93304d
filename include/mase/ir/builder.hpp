#pragma once
// builder: writes a graph the way the model reads.
//
//   mase::builder b;
//   auto x = b.input("x", {8, 784});
//   auto h = b.add("fc1", op::linear{.in_features = 784, .out_features = 256}, x);
//   h = b.add("relu1", op::relu{}, h);
//   auto y = b.add("fc2", op::linear{.in_features = 256, .out_features = 10}, h);
//   mase::graph g = b.output(y);
//
// Parameters are initialised as PyTorch initialises its layers, from a seeded generator, so a
// built model is the same on every run and machine: weights and biases uniform in
// ±1/sqrt(fan_in) (kaiming_uniform with a = sqrt(5)), normalisation weights 1 and biases 0,
// running means 0 and variances 1, embeddings uniform with unit variance.

#include <mase/ir/graph.hpp>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mase {

class builder {
public:
  explicit builder(std::uint64_t seed = 0) : state_(seed) {}

  // A graph input of the given shape.
  node_id input(std::string name, const shape& s) { return graph_.add(std::move(name), op::placeholder{s}); }

  // A node applying `op` to `inputs`, with its parameters initialised.
  template <class... Inputs>
  node_id add(std::string name, any_op op, Inputs... inputs) {
    return add_node(std::move(name), std::move(op), std::vector<node_id>{inputs...});
  }
  node_id add_node(std::string name, any_op op, std::vector<node_id> inputs) {
    const node_id id = graph_.add(std::move(name), std::move(op), std::move(inputs));
    initialise_parameters(id);
    return id;
  }

  // Sets a parameter to given values (e.g. a constant's "value"), checked against the op.
  void set_parameter(node_id id, std::string_view role, tensor value) { graph_.set_parameter(id, role, std::move(value)); }

  // Adds the output node reading `results` and returns the finished graph.
  template <class... Results>
  graph output(Results... results) {
    graph_.add("output", op::output{}, std::vector<node_id>{results...});
    return std::move(graph_);
  }

  // The graph built so far (to inspect or add nodes by hand).
  graph& current() noexcept { return graph_; }

private:
  // splitmix64: small, fast and identical on every platform (std's distributions are not).
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-bound, bound), with 24 random bits (every value a float32).
  float uniform(float bound) noexcept {
    const float unit = static_cast<float>(next() >> 40) * 0x1p-24f;  // [0, 1)
    return (2.0f * unit - 1.0f) * bound;
  }

  static bool is_normalisation(std::string_view op) {
    return op == "batch_norm1d" || op == "batch_norm2d" || op == "batch_norm3d" || op == "layer_norm" || op == "group_norm" ||
           op == "rms_norm" || op == "instance_norm";
  }

  void initialise_parameters(node_id id) {
    node& n = graph_[id];
    const parameter_list specs = op_parameters(n.op);
    // fan_in of the weight: every dimension but the first (out_features, out_channels).
    float weight_bound = 1.0f;
    for (const parameter_spec& p : specs)
      if (p.role == "weight" && p.shape.size() >= 2) weight_bound = 1.0f / std::sqrt(static_cast<float>(p.shape.numel() / p.shape[0]));
    const bool norm = is_normalisation(n.op_name());
    for (const parameter_spec& p : specs) {
      tensor t(p.shape);
      if (norm && (p.role == "weight" || p.role == "running_var")) {
        for (float& v : t.values()) v = 1.0f;
      } else if (norm || p.role == "running_mean" || p.role == "value") {
        // zeros (a constant's value is set by the caller)
      } else if (n.op_name() == "prelu") {
        for (float& v : t.values()) v = 0.25f;  // nn.PReLU's init
      } else if (n.op_name() == "embedding") {
        for (float& v : t.values()) v = uniform(1.7320508f);  // unit variance
      } else {
        for (float& v : t.values()) v = uniform(weight_bound);
      }
      graph_.set_parameter(id, p.role, std::move(t));
    }
  }

  graph graph_;
  std::uint64_t state_;
};

}  // namespace mase
