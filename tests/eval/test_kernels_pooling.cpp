// The float kernels of eval/kernels/pooling.hpp (max_pool1d/2d/3d, avg_pool1d/2d/3d,
// adaptive_avg_pool1d/2d) against PyTorch's pooling formulas written out below as plain loops,
// over grids of every attribute combination the shape rules accept, on deterministic
// pseudo-random data.
//
// Tolerances. A maximum is exact: the kernels must return the very element (or -inf for a window
// of padding only), compared bit for bit. An average sums its k window values in float, off by
// at most (k-1)·u·Σ|x| (u = 2⁻²⁴, float's unit roundoff; the bound holds in any summation order),
// and divides once (avg_pool) or twice (adaptive_avg_pool, by the bin's height then width), each
// adding u relative to the result. The references sum in double, exact to far below that.

#include <mase/eval/kernels/pooling.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <vector>

using namespace mase;

// Counts heap allocations, for the steady-state test at the end. AddressSanitizer brings its own
// operator new, which a replacement here would mismatch; under it the count stays 0 and that
// test is skipped.
#if defined(__SANITIZE_ADDRESS__)
#define MASE_TEST_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MASE_TEST_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef MASE_TEST_COUNTS_ALLOCATIONS
#define MASE_TEST_COUNTS_ALLOCATIONS 1
#endif

namespace {
std::size_t allocation_count = 0;
}
#if MASE_TEST_COUNTS_ALLOCATIONS
void* operator new(std::size_t size) {
  ++allocation_count;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

constexpr double u = 0x1p-24;
constexpr float neg_inf = -std::numeric_limits<float>::infinity();

struct random_source {  // splitmix64: the same numbers on every platform
  std::uint64_t state;
  double next(double lo, double hi) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    z ^= z >> 31U;
    return lo + (hi - lo) * static_cast<double>(z >> 11U) * 0x1p-53;
  }
};

tensor random_tensor(const shape& s, std::uint64_t seed, double lo = -2.0, double hi = 2.0) {
  random_source rng{seed};
  std::vector<float> values(static_cast<std::size_t>(s.numel()));
  for (float& v : values) v = static_cast<float>(rng.next(lo, hi));
  return tensor(s, std::move(values));
}

// The evaluator's way: a result buffer sized by the shape rule, pre-filled with NaN so that an
// element the kernel skips fails the comparison.
template <class Op>
tensor run(const Op& op, const tensor& x) {
  const shape in = x.shape();
  const shape_result r = op.infer_shapes(std::span<const shape>(&in, 1));
  REQUIRE(r.ok());
  std::vector<tensor> outputs{tensor(r.shapes[0])};
  outputs[0].array().setConstant(std::numeric_limits<float>::quiet_NaN());
  const tensor* inputs[] = {&x};
  std::vector<float> scratch;
  const eval::kernel_args args{.inputs = inputs, .outputs = outputs, .scratch = &scratch, .node_name = "pool"};
  eval::float_kernel(op, args);
  return outputs[0];
}

template <class Op>
bool accepts(const Op& op, const shape& in) {
  return op.infer_shapes(std::span<const shape>(&in, 1)).ok();
}

// The geometry of one spatial dimension, as PyTorch's pooling arguments give it.
struct axis {
  std::int64_t in, kernel, stride, padding, dilation;
};

// Bitwise comparison of maxima (exact, NaN included).
void check_identical(const tensor& actual, const std::vector<float>& reference) {
  REQUIRE(actual.size() == reference.size());
  std::size_t failures = 0;
  std::string first;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const float a = actual.values()[i];
    const float r = reference[i];
    if (std::bit_cast<std::uint32_t>(a) != std::bit_cast<std::uint32_t>(r) && !(std::isnan(a) && std::isnan(r)) &&
        failures++ == 0)
      first = fmt::format("element {}: kernel {}, reference {}", i, a, r);
  }
  INFO(first);
  CHECK(failures == 0);
}

void check_close(const tensor& actual, const std::vector<double>& reference, const std::vector<double>& bound) {
  REQUIRE(actual.size() == reference.size());
  std::size_t failures = 0;
  std::string first;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double a = static_cast<double>(actual.values()[i]);
    if (!(std::abs(a - reference[i]) <= bound[i]) && failures++ == 0)
      first = fmt::format("element {}: kernel {:.9g}, reference {:.9g}, bound {:.3g}", i, a, reference[i], bound[i]);
  }
  INFO(first);
  CHECK(failures == 0);
}

// max_pool written out over planes of H×W (H = 1 for 1-d): output (oh, ow) is the maximum of
// x[oh·sh - ph + i·dh][ow·sw - pw + j·dw] over the taps inside the input; a tap in the padding
// is -inf; a NaN tap makes the result NaN.
std::vector<float> max_pool_reference(const tensor& x, std::int64_t planes, const axis& h, const axis& w,
                                      std::int64_t out_h, std::int64_t out_w) {
  std::vector<float> y;
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t oh = 0; oh < out_h; ++oh)
      for (std::int64_t ow = 0; ow < out_w; ++ow) {
        float best = neg_inf;
        bool nan = false;
        for (std::int64_t i = 0; i < h.kernel; ++i)
          for (std::int64_t j = 0; j < w.kernel; ++j) {
            const std::int64_t ih = oh * h.stride - h.padding + i * h.dilation;
            const std::int64_t iw = ow * w.stride - w.padding + j * w.dilation;
            if (ih < 0 || ih >= h.in || iw < 0 || iw >= w.in) continue;  // padding: -inf
            const float v = x.data()[(p * h.in + ih) * w.in + iw];
            nan = nan || std::isnan(v);
            best = std::max(best, v);
          }
        y.push_back(nan ? std::numeric_limits<float>::quiet_NaN() : best);
      }
  return y;
}

// avg_pool written out: the window's positions are counted in the padded input [-p, in + p)
// (count_include_pad's divisor; a ceil_mode window hanging past the padding does not count
// there) and in the input [0, in) (the sum, and the divisor without padding); divisor_override
// replaces both divisors.
struct average {
  std::vector<double> value;
  std::vector<double> bound;
};
average avg_pool_reference(const tensor& x, std::int64_t planes, const axis& h, const axis& w, std::int64_t out_h,
                           std::int64_t out_w, bool count_include_pad, std::int64_t divisor_override) {
  average a;
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t oh = 0; oh < out_h; ++oh)
      for (std::int64_t ow = 0; ow < out_w; ++ow) {
        double sum = 0;
        double sum_abs = 0;
        std::int64_t inside = 0;
        std::int64_t inside_padded = 0;
        for (std::int64_t i = 0; i < h.kernel; ++i)
          for (std::int64_t j = 0; j < w.kernel; ++j) {
            const std::int64_t ih = oh * h.stride - h.padding + i;
            const std::int64_t iw = ow * w.stride - w.padding + j;
            if (ih < h.in + h.padding && iw < w.in + w.padding) ++inside_padded;  // ih, iw >= -padding always
            if (ih < 0 || ih >= h.in || iw < 0 || iw >= w.in) continue;
            ++inside;
            const double v = static_cast<double>(x.data()[(p * h.in + ih) * w.in + iw]);
            sum += v;
            sum_abs += std::abs(v);
          }
        const auto divisor = static_cast<double>(divisor_override > 0 ? divisor_override
                                                 : count_include_pad  ? inside_padded
                                                                      : inside);
        const double value = sum / divisor;
        a.value.push_back(value);
        a.bound.push_back(static_cast<double>(std::max<std::int64_t>(inside - 1, 0)) * u * sum_abs / divisor +
                          u * std::abs(value));
      }
  return a;
}

}  // namespace

TEST_CASE("max_pool1d: every kernel, stride, padding, dilation and ceil_mode the shape rule accepts") {
  int checked = 0;
  for (const std::int64_t length : {5, 6, 7, 8})
    for (const std::int64_t kernel : {1, 2, 3, 4})
      for (const std::int64_t stride : {0, 1, 2, 3})  // 0: stride left empty (= kernel)
        for (std::int64_t padding = 0; padding <= kernel / 2; ++padding)
          for (const std::int64_t dilation : {1, 2, 3})
            for (const bool ceil_mode : {false, true}) {
              op::max_pool1d op{
                  .kernel_size = {kernel}, .padding = {padding}, .dilation = {dilation}, .ceil_mode = ceil_mode};
              if (stride > 0) op.stride = {stride};
              const shape in{2, 3, length};
              if (!accepts(op, in)) continue;
              CAPTURE(length, kernel, stride, padding, dilation, ceil_mode);
              const tensor x =
                  random_tensor(in, static_cast<std::uint64_t>(length * 1000 + kernel * 100 + stride * 10 + padding));
              const tensor y = run(op, x);
              const axis w{length, kernel, stride > 0 ? stride : kernel, padding, dilation};
              check_identical(y, max_pool_reference(x, 6, axis{1, 1, 1, 0, 1}, w, 1, y.shape().back()));
              ++checked;
            }
  CHECK(checked > 300);  // the grid really ran (ceil_mode adds windows in some of it)
}

TEST_CASE("max_pool2d: per-dimension kernels, strides, padding and dilation, unbatched, NaN, padding-only windows") {
  int checked = 0;
  for (const dims& kernel : {dims{2}, dims{3}, dims{3, 2}, dims{1, 4}})
    for (const dims& stride : {dims{}, dims{1}, dims{2, 1}, dims{3}})
      for (const dims& padding : {dims{0}, dims{1}, dims{1, 0}, dims{0, 2}})
        for (const dims& dilation : {dims{1}, dims{2}, dims{1, 2}})
          for (const bool ceil_mode : {false, true}) {
            const op::max_pool2d op{.kernel_size = kernel,
                                    .stride = stride,
                                    .padding = padding,
                                    .dilation = dilation,
                                    .ceil_mode = ceil_mode};
            const shape in{2, 2, 7, 8};
            if (!accepts(op, in)) continue;
            CAPTURE(to_string(kernel), to_string(stride), to_string(padding), to_string(dilation), ceil_mode);
            const tensor x = random_tensor(in, static_cast<std::uint64_t>(checked + 1));
            const tensor y = run(op, x);
            const dims& s = stride.empty() ? kernel : stride;
            const auto per = [](const dims& d, int i) { return d[d.size() == 1 ? 0 : i]; };
            const axis h{7, per(kernel, 0), per(s, 0), per(padding, 0), per(dilation, 0)};
            const axis w{8, per(kernel, 1), per(s, 1), per(padding, 1), per(dilation, 1)};
            check_identical(y, max_pool_reference(x, 4, h, w, y.shape()[2], y.shape()[3]));
            ++checked;
          }
  CHECK(checked > 200);

  SECTION("LeNet's 2×2 pool on an unbatched [6, 28, 28]") {
    const tensor x = random_tensor({6, 28, 28}, 500);
    const tensor y = run(op::max_pool2d{.kernel_size = {2}}, x);
    REQUIRE(y.shape() == shape{6, 14, 14});
    check_identical(y, max_pool_reference(x, 6, axis{28, 2, 2, 0, 1}, axis{28, 2, 2, 0, 1}, 14, 14));
  }
  SECTION("a NaN wins its windows; an all-padding window is -inf") {
    tensor x = random_tensor({1, 1, 4, 4}, 501);
    x.data()[5] = std::numeric_limits<float>::quiet_NaN();
    const tensor y = run(op::max_pool2d{.kernel_size = {2}, .stride = {1}}, x);
    check_identical(y, max_pool_reference(x, 1, axis{4, 2, 1, 0, 1}, axis{4, 2, 1, 0, 1}, 3, 3));
    CHECK(std::isnan(y.data()[0]));
    CHECK(!std::isnan(y.data()[8]));
    // Length 2, kernel 2, padding 1, dilation 3: the one window's taps are -1 and 2, both padding.
    const tensor z =
        run(op::max_pool1d{.kernel_size = {2}, .padding = {1}, .dilation = {3}}, random_tensor({1, 2}, 502));
    REQUIRE(z.shape() == shape{1, 1});
    CHECK(z.data()[0] == neg_inf);
  }
}

TEST_CASE("avg_pool1d and avg_pool2d: padding, ceil_mode, count_include_pad, divisor_override") {
  int checked = 0;
  for (const std::int64_t length : {5, 6, 7})
    for (const std::int64_t kernel : {1, 2, 3, 4})
      for (const std::int64_t stride : {0, 1, 2, 3})
        for (std::int64_t padding = 0; padding <= kernel / 2; ++padding)
          for (const bool ceil_mode : {false, true})
            for (const bool include_pad : {true, false}) {
              op::avg_pool1d op{.kernel_size = {kernel},
                                .padding = {padding},
                                .ceil_mode = ceil_mode,
                                .count_include_pad = include_pad};
              if (stride > 0) op.stride = {stride};
              const shape in{3, length};  // unbatched [C, L]
              if (!accepts(op, in)) continue;
              CAPTURE(length, kernel, stride, padding, ceil_mode, include_pad);
              const tensor x = random_tensor(in, static_cast<std::uint64_t>(checked + 100));
              const tensor y = run(op, x);
              const axis w{length, kernel, stride > 0 ? stride : kernel, padding, 1};
              const average a = avg_pool_reference(x, 3, axis{1, 1, 1, 0, 1}, w, 1, y.shape().back(), include_pad, 0);
              check_close(y, a.value, a.bound);
              ++checked;
            }
  CHECK(checked > 150);

  checked = 0;
  for (const dims& kernel : {dims{2}, dims{3}, dims{3, 2}})
    for (const dims& stride : {dims{}, dims{2}, dims{1, 2}})
      for (const dims& padding : {dims{0}, dims{1}, dims{0, 1}})
        for (const bool ceil_mode : {false, true})
          for (const bool include_pad : {true, false})
            for (const std::int64_t divisor : {0, 3}) {
              const op::avg_pool2d op{.kernel_size = kernel,
                                      .stride = stride,
                                      .padding = padding,
                                      .ceil_mode = ceil_mode,
                                      .count_include_pad = include_pad,
                                      .divisor_override = divisor};
              const shape in{2, 3, 6, 7};
              if (!accepts(op, in)) continue;
              CAPTURE(to_string(kernel), to_string(stride), to_string(padding), ceil_mode, include_pad, divisor);
              const tensor x = random_tensor(in, static_cast<std::uint64_t>(checked + 300));
              const tensor y = run(op, x);
              const dims& s = stride.empty() ? kernel : stride;
              const auto per = [](const dims& d, int i) { return d[d.size() == 1 ? 0 : i]; };
              const axis h{6, per(kernel, 0), per(s, 0), per(padding, 0), 1};
              const axis w{7, per(kernel, 1), per(s, 1), per(padding, 1), 1};
              const average a = avg_pool_reference(x, 6, h, w, y.shape()[2], y.shape()[3], include_pad, divisor);
              check_close(y, a.value, a.bound);
              ++checked;
            }
  CHECK(checked > 150);

  SECTION("ceil_mode's last window hangs past the padding: only the padded part counts") {
    // L = 6, kernel 3, stride 2, padding 1, ceil_mode: windows start at -1, 1, 3 and (ceil_mode)
    // 5; the last covers 5 (the input), 6 (padding) and 7 (past the padding), so
    // count_include_pad divides its one value by 2.
    const tensor x({1, 6}, {1, 2, 3, 4, 5, 10});
    const op::avg_pool1d with_pad{.kernel_size = {3}, .stride = {2}, .padding = {1}, .ceil_mode = true};
    const tensor y = run(with_pad, x);
    REQUIRE(y.shape() == shape{1, 4});
    CHECK(y.data()[0] == 1.0f);          // (0 + 1 + 2) / 3
    CHECK(y.data()[1] == 3.0f);          // (2 + 3 + 4) / 3
    CHECK(y.data()[2] == 19.0f / 3.0f);  // (4 + 5 + 10) / 3
    CHECK(y.data()[3] == 5.0f);          // (10 + 0) / 2
    op::avg_pool1d without_pad = with_pad;
    without_pad.count_include_pad = false;
    const tensor z = run(without_pad, x);
    CHECK(z.data()[0] == 1.5f);   // (1 + 2) / 2
    CHECK(z.data()[3] == 10.0f);  // 10 / 1
  }
}

namespace {

// The 3-d pools written out over volumes of D×H×W, axes in the order D, H, W, as the 2-d
// references above: a tap in the padding is -inf for max (NaN wins) and absent from the sum; the
// average's divisor counts the window's positions in the padded input, or in the input, or is
// divisor_override.
std::vector<float> max_pool3d_reference(const tensor& x, std::int64_t volumes, const std::array<axis, 3>& a,
                                        const shape& out) {
  const std::int64_t od_n = out.at(-3), oh_n = out.at(-2), ow_n = out.at(-1);
  std::vector<float> y;
  for (std::int64_t v = 0; v < volumes; ++v)
    for (std::int64_t od = 0; od < od_n; ++od)
      for (std::int64_t oh = 0; oh < oh_n; ++oh)
        for (std::int64_t ow = 0; ow < ow_n; ++ow) {
          float best = neg_inf;
          bool nan = false;
          for (std::int64_t i = 0; i < a[0].kernel; ++i)
            for (std::int64_t j = 0; j < a[1].kernel; ++j)
              for (std::int64_t k = 0; k < a[2].kernel; ++k) {
                const std::int64_t id = od * a[0].stride - a[0].padding + i * a[0].dilation;
                const std::int64_t ih = oh * a[1].stride - a[1].padding + j * a[1].dilation;
                const std::int64_t iw = ow * a[2].stride - a[2].padding + k * a[2].dilation;
                if (id < 0 || id >= a[0].in || ih < 0 || ih >= a[1].in || iw < 0 || iw >= a[2].in) continue;
                const float value = x.data()[((v * a[0].in + id) * a[1].in + ih) * a[2].in + iw];
                nan = nan || std::isnan(value);
                best = std::max(best, value);
              }
          y.push_back(nan ? std::numeric_limits<float>::quiet_NaN() : best);
        }
  return y;
}

average avg_pool3d_reference(const tensor& x, std::int64_t volumes, const std::array<axis, 3>& a, const shape& out,
                             bool count_include_pad, std::int64_t divisor_override) {
  const std::int64_t od_n = out.at(-3), oh_n = out.at(-2), ow_n = out.at(-1);
  average r;
  for (std::int64_t v = 0; v < volumes; ++v)
    for (std::int64_t od = 0; od < od_n; ++od)
      for (std::int64_t oh = 0; oh < oh_n; ++oh)
        for (std::int64_t ow = 0; ow < ow_n; ++ow) {
          double sum = 0;
          double sum_abs = 0;
          std::int64_t inside = 0;
          std::int64_t inside_padded = 0;
          for (std::int64_t i = 0; i < a[0].kernel; ++i)
            for (std::int64_t j = 0; j < a[1].kernel; ++j)
              for (std::int64_t k = 0; k < a[2].kernel; ++k) {
                const std::int64_t id = od * a[0].stride - a[0].padding + i;
                const std::int64_t ih = oh * a[1].stride - a[1].padding + j;
                const std::int64_t iw = ow * a[2].stride - a[2].padding + k;
                if (id < a[0].in + a[0].padding && ih < a[1].in + a[1].padding && iw < a[2].in + a[2].padding)
                  ++inside_padded;
                if (id < 0 || id >= a[0].in || ih < 0 || ih >= a[1].in || iw < 0 || iw >= a[2].in) continue;
                ++inside;
                const double value = static_cast<double>(x.data()[((v * a[0].in + id) * a[1].in + ih) * a[2].in + iw]);
                sum += value;
                sum_abs += std::abs(value);
              }
          const auto divisor = static_cast<double>(divisor_override > 0 ? divisor_override
                                                   : count_include_pad  ? inside_padded
                                                                        : inside);
          const double value = sum / divisor;
          r.value.push_back(value);
          r.bound.push_back(static_cast<double>(std::max<std::int64_t>(inside - 1, 0)) * u * sum_abs / divisor +
                            u * std::abs(value));
        }
  return r;
}

std::array<axis, 3> volume_axes(const shape& in, const dims& kernel, const dims& stride, const dims& padding,
                                 const dims& dilation) {
  const dims& s = stride.empty() ? kernel : stride;
  const auto per = [](const dims& d, int i) { return d[d.size() == 1 ? 0 : i]; };
  std::array<axis, 3> a{};
  for (int i = 0; i < 3; ++i)
    a[static_cast<std::size_t>(i)] = axis{in.at(i - 3), per(kernel, i), per(s, i), per(padding, i), per(dilation, i)};
  return a;
}

}  // namespace

TEST_CASE("max_pool3d: per-dimension kernels, strides, padding, dilation and ceil_mode, unbatched, NaN") {
  int checked = 0;
  for (const dims& kernel : {dims{2}, dims{3}, dims{1, 2, 3}, dims{3, 1, 1}, dims{2, 3, 2}})
    for (const dims& stride : {dims{}, dims{1}, dims{2, 1, 2}, dims{1, 2, 1}})
      for (const dims& padding : {dims{0}, dims{1}, dims{1, 0, 1}, dims{0, 1, 0}})
        for (const dims& dilation : {dims{1}, dims{2}, dims{2, 1, 1}})
          for (const bool ceil_mode : {false, true}) {
            const op::max_pool3d op{.kernel_size = kernel,
                                    .stride = stride,
                                    .padding = padding,
                                    .dilation = dilation,
                                    .ceil_mode = ceil_mode};
            const shape in{2, 2, 5, 6, 7};
            if (!accepts(op, in)) continue;
            CAPTURE(to_string(kernel), to_string(stride), to_string(padding), to_string(dilation), ceil_mode);
            const tensor x = random_tensor(in, static_cast<std::uint64_t>(checked + 2000));
            const tensor y = run(op, x);
            check_identical(y, max_pool3d_reference(x, 4, volume_axes(in, kernel, stride, padding, dilation), y.shape()));
            ++checked;
          }
  CHECK(checked > 300);

  SECTION("unbatched [C, D, H, W], a NaN winning every window that holds it") {
    tensor x = random_tensor({3, 4, 4, 4}, 2500);
    x.data()[21] = std::numeric_limits<float>::quiet_NaN();  // channel 0, depth 1, row 1, column 1
    const op::max_pool3d op{.kernel_size = {2}, .stride = {1}};
    const tensor y = run(op, x);
    REQUIRE(y.shape() == shape{3, 3, 3, 3});
    check_identical(y, max_pool3d_reference(x, 3, volume_axes(x.shape(), {2}, {1}, {0}, {1}), y.shape()));
    CHECK(std::isnan(y.data()[0]));    // window (0, 0, 0) holds (1, 1, 1)
    CHECK(!std::isnan(y.data()[26]));  // window (2, 2, 2) does not
  }
  SECTION("a (1, 2, 2) window at stride (1, 2, 2) pools each depth slice as a 2-d plane") {
    const tensor x = random_tensor({2, 2, 3, 8, 20}, 2600);
    const op::max_pool3d op{.kernel_size = {1, 2, 2}, .stride = {1, 2, 2}};
    const tensor y = run(op, x);
    REQUIRE(y.shape() == shape{2, 2, 3, 4, 10});
    check_identical(y, max_pool3d_reference(x, 4, volume_axes(x.shape(), {1, 2, 2}, {1, 2, 2}, {0}, {1}), y.shape()));
  }
}

TEST_CASE("avg_pool3d: padding, ceil_mode, count_include_pad, divisor_override") {
  int checked = 0;
  for (const dims& kernel : {dims{2}, dims{3}, dims{1, 2, 3}, dims{3, 1, 2}})
    for (const dims& stride : {dims{}, dims{1}, dims{2, 1, 2}})
      for (const dims& padding : {dims{0}, dims{1}, dims{1, 0, 1}})
        for (const bool ceil_mode : {false, true})
          for (const bool include_pad : {true, false})
            for (const std::int64_t divisor : {0, 5}) {
              const op::avg_pool3d op{.kernel_size = kernel,
                                      .stride = stride,
                                      .padding = padding,
                                      .ceil_mode = ceil_mode,
                                      .count_include_pad = include_pad,
                                      .divisor_override = divisor};
              const shape in{2, 2, 5, 6, 7};
              if (!accepts(op, in)) continue;
              CAPTURE(to_string(kernel), to_string(stride), to_string(padding), ceil_mode, include_pad, divisor);
              const tensor x = random_tensor(in, static_cast<std::uint64_t>(checked + 3000));
              const tensor y = run(op, x);
              const average a = avg_pool3d_reference(x, 4, volume_axes(in, kernel, stride, padding, {1}), y.shape(),
                                                     include_pad, divisor);
              check_close(y, a.value, a.bound);
              ++checked;
            }
  CHECK(checked > 200);

  SECTION("unbatched, and ceil_mode's last depth window hanging past the padding") {
    // D = 4, kernel 3, stride 2, padding 1, ceil_mode: depth windows start at -1, 1 and 3; the
    // last covers depth 3 (the input), 4 (padding) and 5 (past it), so with count_include_pad a
    // window of kernel (3, 1, 1) there divides its one value by 2.
    const tensor x = random_tensor({2, 4, 3, 3}, 3500);
    const op::avg_pool3d op{.kernel_size = {3, 1, 1}, .stride = {2, 1, 1}, .padding = {1, 0, 0}, .ceil_mode = true};
    const tensor y = run(op, x);
    REQUIRE(y.shape() == shape{2, 3, 3, 3});
    const average a = avg_pool3d_reference(x, 2, volume_axes(x.shape(), {3, 1, 1}, {2, 1, 1}, {1, 0, 0}, {1}),
                                           y.shape(), true, 0);
    check_close(y, a.value, a.bound);
    CHECK(y.data()[18] == x.data()[27] / 2.0f);  // output depth 2, (0, 0) of channel 0: input depth 3 over 2
  }
}

namespace {

// adaptive_avg_pool written out: bin i of `out` over `in` spans [floor(i·in/out), ceil((i+1)·in/out)),
// computed in floating point here (the kernel uses integer arithmetic); the mean of its values.
average adaptive_reference(const tensor& x, std::int64_t planes, std::int64_t in_h, std::int64_t in_w,
                           std::int64_t out_h, std::int64_t out_w) {
  const auto bin = [](std::int64_t i, std::int64_t in, std::int64_t out) {
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    return std::pair{static_cast<std::int64_t>(std::floor(static_cast<double>(i) * scale)),
                     static_cast<std::int64_t>(std::ceil(static_cast<double>(i + 1) * scale))};
  };
  average a;
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t oh = 0; oh < out_h; ++oh)
      for (std::int64_t ow = 0; ow < out_w; ++ow) {
        const auto [h0, h1] = bin(oh, in_h, out_h);
        const auto [w0, w1] = bin(ow, in_w, out_w);
        double sum = 0;
        double sum_abs = 0;
        for (std::int64_t ih = h0; ih < h1; ++ih)
          for (std::int64_t iw = w0; iw < w1; ++iw) {
            const double v = static_cast<double>(x.data()[(p * in_h + ih) * in_w + iw]);
            sum += v;
            sum_abs += std::abs(v);
          }
        const auto count = static_cast<double>((h1 - h0) * (w1 - w0));
        a.value.push_back(sum / count);
        a.bound.push_back((count - 1) * u * sum_abs / count + 2 * u * std::abs(sum / count));
      }
  return a;
}

}  // namespace

TEST_CASE("adaptive_avg_pool1d and adaptive_avg_pool2d: PyTorch's floor/ceil bins, larger outputs than inputs") {
  for (std::int64_t in = 1; in <= 9; ++in)
    for (std::int64_t out = 1; out <= in + 3; ++out) {
      CAPTURE(in, out);
      const tensor x = random_tensor({2, 3, in}, static_cast<std::uint64_t>(in * 100 + out));
      const tensor y = run(op::adaptive_avg_pool1d{.output_size = {out}}, x);
      REQUIRE(y.shape() == shape{2, 3, out});
      const average a = adaptive_reference(x, 6, 1, in, 1, out);
      check_close(y, a.value, a.bound);
    }
  for (const dims& out : {dims{1}, dims{2}, dims{3, 5}, dims{7, 4}, dims{1, 3}, dims{9, 9}}) {
    CAPTURE(to_string(out));
    const tensor batched = random_tensor({2, 3, 7, 6}, 700);
    const tensor y = run(op::adaptive_avg_pool2d{.output_size = out}, batched);
    const std::int64_t oh = out[0];
    const std::int64_t ow = out[out.size() == 1 ? 0 : 1];
    const average a = adaptive_reference(batched, 6, 7, 6, oh, ow);
    check_close(y, a.value, a.bound);
    const tensor unbatched = random_tensor({4, 5, 8}, 701);
    const average b = adaptive_reference(unbatched, 4, 5, 8, oh, ow);
    check_close(run(op::adaptive_avg_pool2d{.output_size = out}, unbatched), b.value, b.bound);
  }
  SECTION("a global average (1×1) over a large plane") {
    const tensor x = random_tensor({2, 4, 32, 32}, 702, 9.0, 11.0);
    const average a = adaptive_reference(x, 8, 32, 32, 1, 1);
    check_close(run(op::adaptive_avg_pool2d{.output_size = {1}}, x), a.value, a.bound);
  }
}

TEST_CASE("pooling kernels: empty batches, empty spatial inputs and wrong result buffers") {
  // An empty batch produces an empty result.
  CHECK(run(op::max_pool2d{.kernel_size = {2}}, tensor({0, 3, 4, 4})).size() == 0);
  CHECK(run(op::avg_pool1d{.kernel_size = {2}}, tensor({0, 3, 4})).size() == 0);
  // PyTorch refuses an empty spatial dimension, which the shape rule lets through when the
  // padding alone fills a window.
  CHECK_THROWS_WITH(run(op::max_pool1d{.kernel_size = {2}, .padding = {1}}, tensor({2, 0})),
                    Catch::Contains("node pool") && Catch::Contains("non-empty spatial dimensions"));
  // A result buffer of the wrong shape is refused rather than overrun.
  const tensor x = random_tensor({1, 2, 4, 4}, 800);
  std::vector<tensor> outputs{tensor({1, 2, 3, 3})};
  const tensor* inputs[] = {&x};
  std::vector<float> scratch;
  const eval::kernel_args args{.inputs = inputs, .outputs = outputs, .scratch = &scratch, .node_name = "p2"};
  CHECK_THROWS_WITH(eval::float_kernel(op::avg_pool2d{.kernel_size = {2}}, args),
                    Catch::Contains("node p2") && Catch::Contains("result buffer has shape [1, 2, 3, 3]"));
}

TEST_CASE("pooling kernels allocate nothing per run") {
  if (!MASE_TEST_COUNTS_ALLOCATIONS) {
    WARN("allocations are not counted under AddressSanitizer; skipped");
    return;
  }
  const auto allocations = [](const auto& op, const tensor& x) {
    const shape in = x.shape();
    std::vector<tensor> outputs{tensor(op.infer_shapes(std::span<const shape>(&in, 1)).shapes[0])};
    const tensor* inputs[] = {&x};
    std::vector<float> scratch;
    const eval::kernel_args args{.inputs = inputs, .outputs = outputs, .scratch = &scratch, .node_name = "p"};
    const std::size_t before = allocation_count;
    eval::float_kernel(op, args);
    return allocation_count - before;
  };
  const tensor x = random_tensor({2, 3, 8, 9}, 900);
  CHECK(allocations(op::max_pool2d{.kernel_size = {3}, .stride = {2}, .padding = {1}}, x) == 0);
  CHECK(allocations(op::avg_pool2d{.kernel_size = {2}, .padding = {1}, .ceil_mode = true}, x) == 0);
  CHECK(allocations(op::adaptive_avg_pool2d{.output_size = {3, 4}}, x) == 0);
  CHECK(allocations(op::adaptive_avg_pool2d{.output_size = {1}}, x) == 0);
  const tensor line = random_tensor({2, 3, 9}, 901);
  CHECK(allocations(op::max_pool1d{.kernel_size = {2}}, line) == 0);
  CHECK(allocations(op::avg_pool1d{.kernel_size = {3}, .stride = {1}, .padding = {1}}, line) == 0);
  CHECK(allocations(op::adaptive_avg_pool1d{.output_size = {4}}, line) == 0);
  const tensor volume = random_tensor({2, 2, 5, 6, 7}, 902);
  CHECK(allocations(op::max_pool3d{.kernel_size = {3}, .stride = {2}, .padding = {1}}, volume) == 0);
  CHECK(allocations(op::avg_pool3d{.kernel_size = {2}, .padding = {1}, .ceil_mode = true}, volume) == 0);
}
