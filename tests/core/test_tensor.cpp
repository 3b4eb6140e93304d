// shape, tensor and ordered_map: the basics below the graph layer.

#include <mase/core/ordered_map.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/core/tensor_eigen.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

using namespace mase;

TEST_CASE("shape: construction, element count, comparison, printing, usable in constant expressions") {
  constexpr shape s{2, 3, 4};
  static_assert(s.size() == 3 && s.numel() == 24 && s.back() == 4 && s.at(-1) == 4 && s.at(0) == 2);
  static_assert(shape{}.numel() == 1);  // a scalar holds one value
  static_assert(shape{2, 3} != shape{3, 2});
  static_assert(shape{2, 3} != shape{2, 3, 1});
  CHECK(to_string(s) == "[2, 3, 4]");
  CHECK(to_string(shape{}) == "[]");
  CHECK_THROWS_WITH((shape{1, 2, 3, 4, 5, 6, 7, 8, 9}), "a shape has at most 8 dimensions");
}

TEST_CASE("tensor: row-major storage seen through Eigen maps") {
  tensor t({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(t.size() == 6);
  CHECK(t.size_in_bytes() == 24);
  // matrix(): rows are all dimensions but the last, as PyTorch lays out [out, in]
  CHECK(t.matrix().rows() == 2);
  CHECK(t.matrix().cols() == 3);
  CHECK(t.matrix()(1, 0) == 4.0f);
  CHECK(t.matrix()(0, 2) == 3.0f);
  t.matrix()(1, 2) = -1.0f;  // writes through
  CHECK(t.values()[5] == -1.0f);
  CHECK(t.array().sum() == 14.0f);
  const tensor r = t.reshaped({3, 2});
  CHECK(r.matrix()(2, 1) == -1.0f);
  const tensor v({4}, {1, 2, 3, 4});
  CHECK(v.matrix().rows() == 1);  // a vector is one row
  CHECK(tensor({0, 5}).size() == 0);
  // The views' types have public names; the map of a const tensor is read-only.
  static_assert(std::is_same_v<decltype(t.matrix()), mase::tensor_matrix_map>);
  static_assert(std::is_same_v<decltype(r.matrix()), mase::tensor_const_matrix_map>);
  static_assert(std::is_same_v<decltype(t.array()), mase::tensor_array_map>);
  static_assert(std::is_same_v<decltype(r.array()), mase::tensor_const_array_map>);
}

TEST_CASE("tensor: wrong value counts and negative dimensions are errors") {
  CHECK_THROWS_WITH(tensor({2, 3}, {1, 2, 3}), "tensor: shape [2, 3] holds 6 values, but 3 were given");
  CHECK_THROWS_WITH(tensor({2, -3}), "tensor: shape [2, -3] has a negative dimension");
  CHECK_THROWS_WITH(tensor({2, 2}).reshaped({3}), Catch::Contains("holds 3 values, but 4 were given"));
}

TEST_CASE("tensor: equality is bit for bit") {
  const float nan_a = std::bit_cast<float>(std::uint32_t{0x7fc00001});
  const float nan_b = std::bit_cast<float>(std::uint32_t{0x7fc00002});
  CHECK(tensor({2}, {nan_a, 1.0f}) == tensor({2}, {nan_a, 1.0f}));  // NaN equals itself here
  CHECK_FALSE(tensor({2}, {nan_a, 1.0f}) == tensor({2}, {nan_b, 1.0f}));
  CHECK_FALSE(tensor({1}, {0.0f}) == tensor({1}, {-0.0f}));
  CHECK_FALSE(tensor({2, 1}, {1, 2}) == tensor({1, 2}, {1, 2}));  // same values, other shape
}

TEST_CASE("ordered_map keeps insertion order and names missing keys") {
  ordered_map<int> m;
  m["data_in_0"] = 1;
  m["weight"] = 2;
  m["bias"] = 3;
  m.insert_or_assign("weight", 20);  // keeps its place
  std::string order;
  for (const auto& [k, v] : m) order += k + "=" + std::to_string(v) + " ";
  CHECK(order == "data_in_0=1 weight=20 bias=3 ");
  CHECK(m.erase("data_in_0"));
  CHECK_FALSE(m.erase("data_in_0"));
  CHECK_THROWS_WITH(m.at("data_out_0"), "no entry \"data_out_0\"; the entries are: weight, bias");
}
