// Float kernels of the shape ops against the index arithmetic written out by hand: every result
// element is looked up in the input by its coordinates.

#include <mase/eval/kernels/shape_ops.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

using namespace mase;

namespace {

constexpr float unwritten = -12345.678f;  // what output buffers hold before the kernel runs

std::vector<tensor> run(const auto& op, std::vector<const tensor*> inputs, std::string_view node = "shape_op") {
  std::vector<shape> shapes;
  for (const tensor* t : inputs) shapes.push_back(t->shape());
  const shape_result r = op.infer_shapes(shapes);
  REQUIRE(r.ok());
  std::vector<tensor> outputs;
  for (const shape& s : r.shapes)
    outputs.emplace_back(s, std::vector<float>(static_cast<std::size_t>(s.numel()), unwritten));
  std::vector<float> scratch;
  const eval::kernel_args args{.inputs = inputs, .outputs = outputs, .scratch = &scratch, .node_name = node};
  eval::float_kernel(op, args);
  return outputs;
}

tensor run1(const auto& op, const tensor& x) {
  std::vector<tensor> out = run(op, {&x});
  REQUIRE(out.size() == 1);
  return std::move(out[0]);
}

// 0, 1, 2, … in row-major order: each element's value is its flat position.
tensor iota(const shape& s, float first = 0.0f) {
  std::vector<float> v(static_cast<std::size_t>(s.numel()));
  std::iota(v.begin(), v.end(), first);
  return tensor(s, std::move(v));
}

using coords = std::vector<std::int64_t>;

coords unravel(std::int64_t flat, const shape& s) {
  coords c(static_cast<std::size_t>(s.size()));
  for (int d = s.size() - 1; d >= 0; --d) {
    c[static_cast<std::size_t>(d)] = flat % s[d];
    flat /= s[d];
  }
  return c;
}

std::int64_t ravel(const coords& c, const shape& s) {
  std::int64_t flat = 0;
  for (int d = 0; d < s.size(); ++d) flat = flat * s[d] + c[static_cast<std::size_t>(d)];
  return flat;
}

float at(const tensor& t, const coords& c) { return t.values()[static_cast<std::size_t>(ravel(c, t.shape()))]; }

// y[c] == x[source(c)] for every coordinate c of y.
template <class Source>
void check_every_element(const tensor& y, const tensor& x, Source source) {
  for (std::int64_t flat = 0; flat < y.shape().numel(); ++flat) {
    const coords c = unravel(flat, y.shape());
    const float want = at(x, source(c));
    if (y.values()[static_cast<std::size_t>(flat)] != want) {
      FAIL_CHECK("element " << flat << " is " << y.values()[static_cast<std::size_t>(flat)] << ", expected " << want);
      return;
    }
  }
}

std::size_t u(std::int64_t i) { return static_cast<std::size_t>(i); }

}  // namespace

TEST_CASE("flatten, reshape, view, squeeze, unsqueeze keep the values in order under the new shape") {
  const tensor x = iota({2, 3, 1, 5});
  const auto same_values = [&](const tensor& y, const shape& s) {
    CHECK(y.shape() == s);
    CHECK(y.identical(x.reshaped(s)));
  };
  same_values(run1(op::flatten{}, x), {2, 15});
  same_values(run1(op::flatten{.start_dim = 0, .end_dim = 1}, x), {6, 1, 5});
  same_values(run1(op::flatten{.start_dim = -3, .end_dim = -2}, x), {2, 3, 5});
  same_values(run1(op::flatten{.start_dim = 0, .end_dim = -1}, x), {30});
  same_values(run1(op::reshape{.shape = {5, -1}}, x), {5, 6});
  same_values(run1(op::view{.shape = {-1}}, x), {30});
  same_values(run1(op::view{.shape = {3, 2, 5}}, x), {3, 2, 5});
  same_values(run1(op::squeeze{}, x), {2, 3, 5});
  same_values(run1(op::squeeze{.dim = {-2}}, x), {2, 3, 5});
  same_values(run1(op::squeeze{.dim = {0, 2}}, x), {2, 3, 5});  // dim 0 is not 1: kept
  same_values(run1(op::unsqueeze{.dim = 0}, x), {1, 2, 3, 1, 5});
  same_values(run1(op::unsqueeze{.dim = -1}, x), {2, 3, 1, 5, 1});
  same_values(run1(op::unsqueeze{.dim = -2}, x), {2, 3, 1, 1, 5});

  const tensor scalar({}, {4.5f});
  CHECK(run1(op::flatten{.start_dim = 0}, scalar).identical(tensor({1}, {4.5f})));
  CHECK(run1(op::unsqueeze{.dim = 0}, scalar).identical(tensor({1}, {4.5f})));
  CHECK(run1(op::reshape{.shape = {}}, tensor({1, 1}, {4.5f})).identical(scalar));
  const tensor empty({0, 3});
  CHECK(run1(op::reshape{.shape = {3, 0}}, empty).identical(tensor({3, 0})));
}

TEST_CASE("permute moves element (i0, …) to the position its dims list, negative dims included") {
  struct permute_case {
    shape in;
    dims order;
  };
  const std::vector<permute_case> cases{
      {{2, 3, 4, 5}, {0, 2, 3, 1}},
      {{2, 3, 4, 5}, {3, 2, 1, 0}},
      {{2, 3, 4, 5}, {-1, 0, -2, 1}},
      {{2, 3, 4, 5}, {0, 1, 2, 3}},  // identity: one memcpy
      {{2, 3, 4, 5}, {0, 2, 1, 3}},  // the attention head swap: contiguous runs of 5
      {{3, 1, 4}, {2, 1, 0}},        // a dimension of extent 1
      {{70, 45}, {1, 0}},            // a transpose larger than one tile, with partial tiles
      {{3, 70, 45}, {0, 2, 1}},
      {{2, 33, 3, 40}, {0, 3, 2, 1}},
      {{5}, {-1}},
      {{}, {}},
  };
  for (const permute_case& pc : cases) {
    const shape& in_shape = pc.in;
    const dims& order = pc.order;
    INFO(to_string(in_shape) << " permuted by " << to_string(order));
    const tensor x = iota(in_shape);
    const tensor y = run1(op::permute{.dims = order}, x);
    check_every_element(y, x, [&](const coords& c) {
      coords source(c.size());
      for (std::size_t i = 0; i < c.size(); ++i) {
        const std::int64_t d = order[static_cast<int>(i)];
        source[u(d < 0 ? d + in_shape.size() : d)] = c[i];
      }
      return source;
    });
  }
}

TEST_CASE("transpose swaps two dimensions") {
  struct transpose_case {
    shape in;
    std::int64_t dim0, dim1;
  };
  const std::vector<transpose_case> cases{
      {{3, 7}, 0, 1}, {{2, 3, 4, 5}, -1, -2}, {{2, 3, 4}, 2, 0}, {{2, 3, 4}, 1, 1}, {{40, 3, 37}, 0, -1}, {{6}, 0, -1},
  };
  for (const transpose_case& tc : cases) {
    const shape& in_shape = tc.in;
    const std::int64_t d0 = tc.dim0, d1 = tc.dim1;
    INFO(to_string(in_shape) << " transposed " << d0 << ", " << d1);
    const tensor x = iota(in_shape);
    const tensor y = run1(op::transpose{.dim0 = d0, .dim1 = d1}, x);
    const auto a = u(d0 < 0 ? d0 + in_shape.size() : d0);
    const auto b = u(d1 < 0 ? d1 + in_shape.size() : d1);
    check_every_element(y, x, [&](coords c) {
      std::swap(c[a], c[b]);
      return c;
    });
  }
  const tensor scalar({}, {2.0f});
  CHECK(run1(op::transpose{.dim0 = 0, .dim1 = -1}, scalar).identical(scalar));
}

TEST_CASE("cat joins inputs along dim") {
  struct cat_case {
    std::vector<shape> in;
    std::int64_t dim;
  };
  const std::vector<cat_case> cases{
      {{{2, 3}, {4, 3}, {1, 3}}, 0},
      {{{2, 3}, {2, 1}, {2, 5}}, 1},
      {{{2, 3}, {2, 1}, {2, 5}}, -1},
      {{{2, 3, 4}, {2, 2, 4}}, 1},
      {{{2, 3, 4}, {2, 3, 1}, {2, 3, 3}}, -1},
      {{{2, 3}, {0}, {1, 3}}, 0},    // a 1-D empty tensor joins anything (PyTorch's legacy rule)
      {{{2, 3}, {0, 3}, {1, 3}}, 0},  // an empty input of the same rank
      {{{5}}, 0},
      {std::vector<shape>(20, shape{1, 2}), 0},  // more inputs than the kernel keeps shapes for on the stack
  };
  for (const cat_case& cc : cases) {
    const std::vector<shape>& in_shapes = cc.in;
    const std::int64_t dim = cc.dim;
    INFO(in_shapes.size() << " inputs, first " << to_string(in_shapes[0]) << ", dim " << dim);
    std::vector<tensor> xs;
    float next = 0.0f;
    for (const shape& s : in_shapes) {
      xs.push_back(iota(s, next));
      next += static_cast<float>(s.numel());
    }
    std::vector<const tensor*> in;
    for (const tensor& t : xs) in.push_back(&t);
    const tensor y = std::move(run(op::cat{.dim = dim}, in)[0]);
    const int rank = y.rank();
    const auto d = u(dim < 0 ? dim + rank : dim);
    // Walk the inputs along d to find the one holding coordinate c[d].
    for (std::int64_t flat = 0; flat < y.shape().numel(); ++flat) {
      coords c = unravel(flat, y.shape());
      std::size_t k = 0;
      while (xs[k].rank() != rank || c[d] >= xs[k].shape()[static_cast<int>(d)]) {
        if (xs[k].rank() == rank) c[d] -= xs[k].shape()[static_cast<int>(d)];
        ++k;
      }
      REQUIRE(y.values()[u(flat)] == at(xs[k], c));
    }
  }
}

TEST_CASE("split cuts chunks of split_size along dim, and getitem picks one") {
  struct split_case {
    shape in;
    std::int64_t size, dim;
    std::vector<shape> out;
  };
  const std::vector<split_case> cases{
      {{7, 4}, 3, 0, {{3, 4}, {3, 4}, {1, 4}}},
      {{2, 7}, 3, -1, {{2, 3}, {2, 3}, {2, 1}}},
      {{2, 6, 3}, 2, 1, {{2, 2, 3}, {2, 2, 3}, {2, 2, 3}}},
      {{2, 5, 3}, 9, -2, {{2, 5, 3}}},
  };
  for (const split_case& sc : cases) {
    const shape& in_shape = sc.in;
    const std::int64_t size = sc.size, dim = sc.dim;
    const std::vector<shape>& out_shapes = sc.out;
    INFO(to_string(in_shape) << " split by " << size << " along " << dim);
    const tensor x = iota(in_shape);
    const std::vector<tensor> ys = run(op::split{.split_size = size, .dim = dim}, {&x});
    REQUIRE(ys.size() == out_shapes.size());
    const auto d = u(dim < 0 ? dim + in_shape.size() : dim);
    std::vector<const tensor*> results;
    for (std::size_t k = 0; k < ys.size(); ++k) {
      CHECK(ys[k].shape() == out_shapes[k]);
      check_every_element(ys[k], x, [&](coords c) {
        c[d] += static_cast<std::int64_t>(k) * size;
        return c;
      });
      results.push_back(&ys[k]);
    }
    // getitem sees every result of the split; negative indices count from the end.
    const auto n = static_cast<std::int64_t>(ys.size());
    for (std::int64_t i = -n; i < n; ++i) {
      INFO("getitem " << i);
      const std::vector<tensor> picked = run(op::getitem{.index = i}, results);
      REQUIRE(picked.size() == 1);
      CHECK(picked[0].identical(ys[u(i < 0 ? i + n : i)]));
    }
  }
}

TEST_CASE("slice takes start:end:step along dim, clamped as Python does") {
  struct slice_case {
    shape in;
    op::slice op;
    std::int64_t from;  // the first index taken, after clamping
  };
  constexpr std::int64_t to_end = std::numeric_limits<std::int64_t>::max();
  const std::vector<slice_case> cases{
      {{4, 10, 3}, {.dim = 1, .start = 1, .end = 8, .step = 2}, 1},
      {{4, 10, 3}, {.dim = 1, .start = -4, .end = to_end, .step = 1}, 6},
      {{4, 10, 3}, {.dim = -1, .start = 1, .end = 3, .step = 1}, 1},
      {{4, 10, 3}, {.dim = 0, .start = 0, .end = 100, .step = 3}, 0},
      {{4, 10, 3}, {.dim = 1, .start = -100, .end = -2, .step = 4}, 0},
      {{4, 10, 3}, {.dim = 1, .start = 5, .end = 2, .step = 1}, 5},  // empty
      {{9}, {.dim = 0, .start = 2, .end = 9, .step = 20}, 2},
      {{33, 47}, {.dim = -1, .start = 3, .end = 44, .step = 5}, 3},
  };
  for (const slice_case& lc : cases) {
    const shape& in_shape = lc.in;
    const op::slice& op = lc.op;
    const std::int64_t from = lc.from;
    INFO(to_string(in_shape) << " sliced along " << op.dim << " from " << op.start << " to " << op.end << " by " << op.step);
    const tensor x = iota(in_shape);
    const tensor y = run1(op, x);
    const auto d = u(op.dim < 0 ? op.dim + in_shape.size() : op.dim);
    check_every_element(y, x, [&](coords c) {
      c[d] = from + c[d] * op.step;
      return c;
    });
  }
  CHECK(run1(op::slice{.dim = 1, .start = 5, .end = 2, .step = 1}, iota({4, 10, 3})).shape() == shape{4, 0, 3});
}

TEST_CASE("gather reads x at the index tensor's values along dim (torch.gather)") {
  const tensor x = iota({3, 4}, 100.0f);
  // y[i][j] = x[index[i][j]][j] for dim 0, x[i][index[i][j]] for dim 1.
  const tensor rows({2, 4}, {2, 0, 1, 2, 0, 0, 2, 1});
  const tensor y0 = std::move(run(op::gather{.dim = 0}, {&x, &rows})[0]);
  check_every_element(y0, x, [&](const coords& c) { return coords{static_cast<std::int64_t>(at(rows, c)), c[1]}; });
  const tensor cols({3, 2}, {3, 0, 1, 1, 0, 2});
  for (std::int64_t dim : {1, -1}) {
    const tensor y1 = std::move(run(op::gather{.dim = dim}, {&x, &cols})[0]);
    check_every_element(y1, x, [&](const coords& c) { return coords{c[0], static_cast<std::int64_t>(at(cols, c))}; });
  }
  // 3-D, the index smaller than the input in the other dimensions and longer along dim.
  const tensor x3 = iota({3, 4, 5});
  tensor index3({2, 7, 3});
  for (std::size_t i = 0; i < index3.size(); ++i) index3.values()[i] = static_cast<float>((i * 7 + 3) % 4);
  const tensor y3 = std::move(run(op::gather{.dim = 1}, {&x3, &index3})[0]);
  check_every_element(y3, x3, [&](const coords& c) { return coords{c[0], static_cast<std::int64_t>(at(index3, c)), c[2]}; });
  tensor last({3, 4, 2});
  for (std::size_t i = 0; i < last.size(); ++i) last.values()[i] = static_cast<float>((i * 3) % 5);
  const tensor y4 = std::move(run(op::gather{.dim = -1}, {&x3, &last})[0]);
  check_every_element(y4, x3, [&](const coords& c) { return coords{c[0], c[1], static_cast<std::int64_t>(at(last, c))}; });

  const tensor scalar({}, {7.0f});
  const tensor zero({}, {0.0f});
  CHECK(run(op::gather{.dim = 0}, {&scalar, &zero})[0].identical(scalar));
  const tensor no_index({3, 0});
  CHECK(run(op::gather{.dim = 1}, {&x, &no_index})[0].shape() == shape{3, 0});
}

TEST_CASE("gather rejects an index outside 0 <= i < size or not an integer, naming the node") {
  const tensor x = iota({3, 4});
  std::vector<float> scratch;
  for (float bad : {3.0f, -1.0f, 1.5f, std::numeric_limits<float>::quiet_NaN(), 1e30f}) {
    INFO("index value " << bad);
    const tensor index({2, 2}, {0, 1, bad, 2});
    std::vector<tensor> out{tensor({2, 2})};
    const std::vector<const tensor*> in{&x, &index};
    const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "gather_3"};
    CHECK_THROWS_WITH(eval::float_kernel(op::gather{.dim = 0}, args),
                      Catch::Contains("gather_3") && Catch::Contains("[0, 3)") && Catch::Contains("element 2"));
  }
}

TEST_CASE("shape kernels report buffers and inputs that do not fit the op, naming the node") {
  const tensor x = iota({2, 3});
  std::vector<float> scratch;
  const auto call = [&](const auto& op, std::vector<const tensor*> in, std::vector<tensor> out) {
    const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "bad_node"};
    eval::float_kernel(op, args);
  };
  CHECK_THROWS_WITH(call(op::reshape{.shape = {4, -1}}, {&x}, {tensor({6})}),
                    Catch::Contains("bad_node") && Catch::Contains("element count"));
  CHECK_THROWS_WITH(call(op::reshape{.shape = {6}}, {&x}, {tensor({3, 2})}),
                    Catch::Contains("bad_node") && Catch::Contains("[6]") && Catch::Contains("[3, 2]"));
  CHECK_THROWS_WITH(call(op::permute{.dims = {0, 0}}, {&x}, {tensor({2, 2})}),
                    Catch::Contains("bad_node") && Catch::Contains("more than once"));
  CHECK_THROWS_WITH(call(op::permute{.dims = {1, 0}}, {&x, &x}, {tensor({3, 2})}),
                    Catch::Contains("bad_node") && Catch::Contains("got 2"));
  CHECK_THROWS_WITH(call(op::cat{.dim = 0}, {&x, &x}, {tensor({4, 2})}), Catch::Contains("bad_node"));
  const tensor other = iota({2, 4});
  CHECK_THROWS_WITH(call(op::cat{.dim = 0}, {&x, &other}, {tensor({4, 3})}),
                    Catch::Contains("bad_node") && Catch::Contains("other than dim"));
  CHECK_THROWS_WITH(call(op::split{.split_size = 1, .dim = 0}, {&x}, {tensor({1, 3})}),
                    Catch::Contains("bad_node"));  // two results, one buffer
  CHECK_THROWS_WITH(call(op::getitem{.index = 2}, {&x, &x}, {tensor({2, 3})}),
                    Catch::Contains("bad_node") && Catch::Contains("out of range"));
  CHECK_THROWS_WITH(call(op::getitem{.index = -3}, {&x, &x}, {tensor({2, 3})}),
                    Catch::Contains("bad_node") && Catch::Contains("out of range"));
  CHECK_THROWS_WITH(call(op::slice{.dim = 2}, {&x}, {tensor({2, 3})}), Catch::Contains("bad_node"));
  CHECK_THROWS_WITH(call(op::gather{.dim = 0}, {&x, &other}, {tensor({2, 4})}),
                    Catch::Contains("bad_node") && Catch::Contains("larger than input"));
  // A default-constructed tensor has shape [] (one element) but holds no values.
  const tensor scalar({}, {1.0f});
  CHECK_THROWS_WITH(call(op::reshape{.shape = {}}, {&scalar}, {tensor()}),
                    Catch::Contains("bad_node") && Catch::Contains("holds 0 values"));
}

// ---------------------------------------------------------------------------------------------
// pad, tile, expand, index_select.

namespace {

// F.pad along one dimension, built the way the modes are described rather than by the kernel's
// arithmetic: the input positions the output reads, in order, with -1 for the constant border.
// Constant: `before` borders, the input, `after` borders; reflect: the mirrored elements (edge
// not repeated) on both sides; replicate: the edge repeated; circular: copies of the kept part
// laid side by side. Negative entries then cut from the ends.
std::vector<std::int64_t> padded_positions(std::int64_t mode, std::int64_t length, std::int64_t before,
                                           std::int64_t after) {
  const std::int64_t crop_front = before < 0 ? -before : 0, crop_back = after < 0 ? -after : 0;
  const std::int64_t grow_front = before > 0 ? before : 0, grow_back = after > 0 ? after : 0;
  std::vector<std::int64_t> kept;
  for (std::int64_t i = crop_front; i < length - crop_back; ++i) kept.push_back(i);
  std::vector<std::int64_t> front, back;
  if (mode == op::pad::circular_mode) {
    // Copies of `kept` to the left and right of the middle one; the borders are their ends.
    std::vector<std::int64_t> left, right;
    while (static_cast<std::int64_t>(left.size()) < grow_front) left.insert(left.begin(), kept.begin(), kept.end());
    while (static_cast<std::int64_t>(right.size()) < grow_back) right.insert(right.end(), kept.begin(), kept.end());
    front.assign(left.end() - grow_front, left.end());
    back.assign(right.begin(), right.begin() + grow_back);
  } else {
    for (std::int64_t k = grow_front; k >= 1; --k)
      front.push_back(mode == op::pad::constant_mode ? -1 : mode == op::pad::reflect_mode ? k : 0);
    for (std::int64_t k = 1; k <= grow_back; ++k)
      back.push_back(mode == op::pad::constant_mode ? -1 : mode == op::pad::reflect_mode ? length - 1 - k : length - 1);
  }
  std::vector<std::int64_t> all = front;
  all.insert(all.end(), kept.begin(), kept.end());
  all.insert(all.end(), back.begin(), back.end());
  return all;
}

void check_pad(const op::pad& p, const tensor& x) {
  const int rank = x.rank();
  std::vector<std::vector<std::int64_t>> positions;
  for (int d = 0; d < rank; ++d) positions.push_back(padded_positions(p.mode, x.shape()[d], p.before(d, rank),
                                                                      p.after(d, rank)));
  const tensor y = run1(p, x);
  for (int d = 0; d < rank; ++d) REQUIRE(y.shape()[d] == static_cast<std::int64_t>(positions[u(d)].size()));
  for (std::int64_t flat = 0; flat < y.shape().numel(); ++flat) {
    coords c = unravel(flat, y.shape());
    bool border = false;
    for (int d = 0; d < rank; ++d) {
      c[u(d)] = positions[u(d)][u(c[u(d)])];
      border = border || c[u(d)] < 0;
    }
    const float want = border ? static_cast<float>(p.value) : at(x, c);
    if (y.values()[u(flat)] != want) {
      FAIL_CHECK("element " << flat << " is " << y.values()[u(flat)] << ", expected " << want);
      return;
    }
  }
}

}  // namespace

TEST_CASE("pad: every mode, negative entries, several dimensions (F.pad's layout)") {
  const tensor x = iota({2, 3, 5, 6}, 1.0f);
  const dims lists[] = {{},           {1, 2},        {0, 3},           {-1, 2},        {2, -1},
                        {-2, -3},     {1, 1, 2, 0},  {2, -1, -1, 2},   {1, 0, 0, 1, 1, 1},
                        {-1, 1, 2, -2, 0, 0, 1, 0}, {5, 5}, {-5, 0}};
  for (std::int64_t mode = 0; mode <= 3; ++mode)
    for (const dims& list : lists) {
      const op::pad p{.pads = list, .mode = mode, .value = -2.5};
      const shape xs = x.shape();
      if (!p.infer_shapes(std::span<const shape>(&xs, 1)).ok()) continue;  // reflect {5, 5}: 5 ≥ 5
      INFO("mode " << op::pad::mode_name(mode) << " pad " << to_string(list));
      check_pad(p, x);
    }
  // The cases PyTorch showed (F.pad on arange(4)): reflect (2, -1) gives 2 1 0 1 2, circular
  // (2, -1) wraps around the kept 0 1 2, giving 1 2 0 1 2.
  const tensor row = iota({1, 4});
  CHECK(run1(op::pad{.pads = {2, -1}, .mode = op::pad::reflect_mode}, row).values()[0] == 2.0f);
  const tensor wrapped = run1(op::pad{.pads = {2, -1}, .mode = op::pad::circular_mode}, row);
  CHECK(std::vector<float>(wrapped.values().begin(), wrapped.values().end()) == std::vector<float>{1, 2, 0, 1, 2});
  const tensor cropped = run1(op::pad{.pads = {-2, -2}}, row);
  CHECK(cropped.shape() == shape{1, 0});
  const tensor scalar({}, {4.0f});
  CHECK(run1(op::pad{}, scalar).identical(scalar));
  // Circular padding longer than the dimension wraps repeatedly.
  const tensor many = run1(op::pad{.pads = {5, 6}, .mode = op::pad::circular_mode}, iota({3}));
  CHECK(std::vector<float>(many.values().begin(), many.values().end()) ==
        std::vector<float>{1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2});
}

TEST_CASE("tile: y(c) = x(c mod x's shape), ones prepended to the shorter of dims and shape") {
  const auto check_tile = [](const dims& reps, const tensor& x) {
    INFO("dims " << to_string(reps) << " x " << to_string(x.shape()));
    const tensor y = run1(op::tile{.dims = reps}, x);
    const int rank = y.rank();
    check_every_element(y, x, [&](const coords& c) {
      coords source;
      for (int d = rank - x.rank(); d < rank; ++d) source.push_back(c[u(d)] % x.shape()[d - (rank - x.rank())]);
      return source;
    });
    return y.shape();
  };
  CHECK(check_tile({2, 3}, iota({2, 3})) == shape{4, 9});
  CHECK(check_tile({2}, iota({2, 3, 2})) == shape{2, 3, 4});
  CHECK(check_tile({3, 1, 2}, iota({4})) == shape{3, 1, 8});
  CHECK(check_tile({2, 3, 1, 2}, iota({2, 1, 3})) == shape{2, 6, 1, 6});
  CHECK(check_tile({1, 1, 1}, iota({3, 2, 2})) == shape{3, 2, 2});
  CHECK(check_tile({4}, iota({1})) == shape{4});
  CHECK(check_tile({}, iota({2, 3})) == shape{2, 3});
  CHECK(check_tile({3, 2}, tensor({}, {5.0f})) == shape{3, 2});
  CHECK(run1(op::tile{.dims = {0, 2}}, iota({2, 3})).shape() == shape{0, 6});
}

TEST_CASE("expand: grown dimensions repeat the input, new ones lead") {
  const auto check_expand = [](const dims& size, const tensor& x) {
    INFO("size " << to_string(size) << " x " << to_string(x.shape()));
    const tensor y = run1(op::expand{.size = size}, x);
    const int added = y.rank() - x.rank();
    check_every_element(y, x, [&](const coords& c) {
      coords source;
      for (int d = 0; d < x.rank(); ++d) source.push_back(x.shape()[d] == 1 ? 0 : c[u(d + added)]);
      return source;
    });
    return y.shape();
  };
  CHECK(check_expand({3, 4}, iota({3, 1})) == shape{3, 4});
  CHECK(check_expand({5, 4}, iota({1, 4})) == shape{5, 4});
  CHECK(check_expand({2, -1, 3}, iota({1, 3})) == shape{2, 1, 3});
  CHECK(check_expand({2, 3, 4, 5}, iota({3, 1, 1})) == shape{2, 3, 4, 5});
  CHECK(check_expand({2, 4, 3, 2}, iota({1, 4, 1, 2})) == shape{2, 4, 3, 2});
  CHECK(check_expand({2, 3}, tensor({}, {5.0f})) == shape{2, 3});
  CHECK(check_expand({-1, -1}, iota({2, 3})) == shape{2, 3});
  CHECK(run1(op::expand{.size = {0, 3}}, iota({1, 3})).shape() == shape{0, 3});
  // A size the input cannot take is the shape rule's error, reported by the kernel with the node.
  const tensor x = iota({2, 3});
  std::vector<tensor> out{tensor({4, 3})};
  std::vector<float> scratch;
  const std::vector<const tensor*> in{&x};
  const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "expand_7"};
  CHECK_THROWS_WITH(eval::float_kernel(op::expand{.size = {4, 3}}, args),
                    Catch::Contains("expand_7") && Catch::Contains("size 1"));
}

TEST_CASE("index_select: ONNX Gather's x(..., index(j...), ...), negative indices from the end") {
  const tensor x = iota({3, 4, 5});
  const auto check_select = [&](std::int64_t dim, const tensor& index) {
    INFO("dim " << dim << " index " << to_string(index.shape()));
    const tensor y = std::move(run(op::index_select{.dim = dim}, {&x, &index})[0]);
    const int d = static_cast<int>(dim < 0 ? dim + 3 : dim);
    const int ir = index.rank();
    check_every_element(y, x, [&](const coords& c) {
      coords source(c.begin(), c.begin() + d);
      const coords at_index(c.begin() + d, c.begin() + d + ir);
      auto i = static_cast<std::int64_t>(at(index, at_index));
      source.push_back(i < 0 ? i + x.shape()[d] : i);
      source.insert(source.end(), c.begin() + d + ir, c.end());
      return source;
    });
    return y.shape();
  };
  CHECK(check_select(0, tensor({4}, {2, 0, 2, 1})) == shape{4, 4, 5});
  CHECK(check_select(1, tensor({3}, {3, -1, -4})) == shape{3, 3, 5});
  CHECK(check_select(-1, tensor({2, 3}, {4, 0, 1, -5, 2, 3})) == shape{3, 4, 2, 3});
  CHECK(check_select(2, tensor({}, {-2})) == shape{3, 4});
  CHECK(check_select(1, tensor({0})) == shape{3, 0, 5});

  // Out of range, not an integer, NaN: a mase::error naming the node, the value and the range.
  std::vector<float> scratch;
  for (float bad : {4.0f, -5.0f, 0.5f, std::numeric_limits<float>::quiet_NaN(), 1e30f}) {
    INFO("index value " << bad);
    const tensor index({3}, {0, bad, 1});
    std::vector<tensor> out{tensor({3, 3, 5})};
    const std::vector<const tensor*> in{&x, &index};
    const eval::kernel_args args{.inputs = in, .outputs = out, .scratch = &scratch, .node_name = "gather_9"};
    CHECK_THROWS_WITH(eval::float_kernel(op::index_select{.dim = 1}, args),
                      Catch::Contains("gather_9") && Catch::Contains("[-4, 4)") && Catch::Contains("element 1"));
  }
}
