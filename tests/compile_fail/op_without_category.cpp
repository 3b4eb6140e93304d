// A user's op that meets the op contract but names no category cannot become a graph node: the
// diagnostic names the member to add.
#include <mase/ir/builder.hpp>

struct scale_by_two {
  static constexpr std::string_view name = "scale_by_two";
  using kind = mase::kind::builtin_func;
  static constexpr mase::arity inputs{1, 1};
  static constexpr auto attributes() { return std::tuple{}; }
  constexpr mase::shape_result infer_shapes(std::span<const mase::shape> in) const { return mase::shape_ok(in[0]); }
  constexpr bool operator==(const scale_by_two&) const = default;
};

int main() {
  mase::builder b;
  auto x = b.input("x", {2});
  (void)b.output(b.add("twice", scale_by_two{}, x));
}
