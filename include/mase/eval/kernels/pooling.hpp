#pragma once
// Float kernels of the pools (max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive_avg_pool1d/2d), with
// PyTorch's CPU semantics.
//
// Every input is a stack of volumes: [N, C, D, H, W] or unbatched [C, D, H, W] is N·C (or C)
// volumes of D×H×W; the 2-d ops are the 3-d ones with D = 1 and the 1-d ops have H = 1 too, as
// PyTorch itself computes avg_pool1d and adaptive_avg_pool1d (through the 2-d kernels on
// x.unsqueeze(-2)). Window sums accumulate in float in row-major order (depth, then rows, then
// columns) and are divided once, as PyTorch's kernels do; maxima are exact.

#include <mase/core/dispatch.hpp>
#include <mase/core/tensor_eigen.hpp>
#include <mase/core/thread_pool.hpp>
#include <mase/eval/kernel.hpp>
#include <mase/eval/pool_windows.hpp>
#include <mase/ir/ops.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include <fmt/core.h>

// The 2×2 max pool's AVX2 code: compiled where the build targets AVX2, or where the dispatcher
// can choose it at run time (then in functions that carry the target).
#if defined(__AVX2__) || MASE_DISPATCH
#define MASE_MAX_POOL_AVX2 1
#define MASE_AVX2_FUNCTION __attribute__((target("avx2")))
#include <immintrin.h>
#else
#define MASE_MAX_POOL_AVX2 0
#endif

namespace mase::eval {

namespace pooling_detail {

// window_planes of a kernel's input and output.
template <class Op>
inline planes window_planes(const Op& op, const kernel_args& args, int spatial) {
  check_unary_kernel_shapes(op, args);
  const shape& in = args.input(0).shape();
  // PyTorch refuses empty spatial dimensions; the shape rule lets one through when padding alone
  // fills a window.
  std::int64_t volume = 1;
  for (int i = in.size() - spatial; i < in.size(); ++i) volume *= in[i];
  if (volume == 0 && args.output().size() != 0)
    throw error(fmt::format("node {}: {} needs non-empty spatial dimensions, but the input has shape {}",
                            args.node_name, Op::name, to_string(in)));
  return window_planes(op, in, args.output().shape(), spatial);
}

// The NaN-propagating maximum of PyTorch's pooling kernels: a NaN tap wins. Written without
// branches (`|`, v != v) so that it compiles to a compare and a blend.
inline float max_or_nan(float best, float v) noexcept { return ((v > best) | (v != v)) ? v : best; }

#if MASE_MAX_POOL_AVX2
// max_or_nan on 8 lanes: _mm256_max_ps(v, best) is v where v > best and best otherwise (also
// where either is NaN); a NaN v then wins through the blend.
MASE_AVX2_FUNCTION inline __m256 max_or_nan(__m256 best, __m256 v) noexcept {
  return _mm256_blendv_ps(_mm256_max_ps(v, best), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

// LeNet's and VGG's 2×2 windows at stride 2 without padding, where every window lies inside
// the input: each output row from its two input rows, 8 outputs (16 inputs of each row) at a
// time, the last ones of a row through masked loads and stores. max_or_nan picks the last NaN,
// else the first maximum (first among ±0), of its taps in order, so combining the maxima of the
// top pair and of the bottom pair gives what the tap-by-tap loop gives.
// Even and odd inputs of 16, in the lane order [0 2 8 10 | 4 6 12 14] that shuffle_ps leaves;
// in_order's one cross-lane permute puts the results in order.
MASE_AVX2_FUNCTION inline __m256 pair_maxima(__m256 first, __m256 second) noexcept {
  return max_or_nan(_mm256_shuffle_ps(first, second, 0x88), _mm256_shuffle_ps(first, second, 0xDD));
}
MASE_AVX2_FUNCTION inline __m256 in_order(__m256 v) noexcept {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8));
}

MASE_AVX2_FUNCTION inline void max_pool_2x2(const planes& p, const float* x, float* y) {
  const std::int64_t in_w = p.w.in;
  const std::int64_t out_w = p.w.out;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const std::int64_t tail = out_w % 8;
  // Lanes of the last, partial block: inputs 2·tail of each 16, outputs tail of 8.
  const __m256i low_inputs = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(2 * tail)), lane);
  const __m256i high_inputs = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(2 * tail - 8)), lane);
  const __m256i outputs = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(tail)), lane);
  for (std::int64_t c = 0; c < p.count; ++c) {
    const float* plane = x + c * p.h.in * in_w;
    for (std::int64_t oh = 0; oh < p.h.out; ++oh, y += out_w) {
      const float* top = plane + 2 * oh * in_w;
      const float* bottom = top + in_w;
      std::int64_t j = 0;
      for (; j + 8 <= out_w; j += 8) {
        const __m256 upper = pair_maxima(_mm256_loadu_ps(top + 2 * j), _mm256_loadu_ps(top + 2 * j + 8));
        const __m256 lower = pair_maxima(_mm256_loadu_ps(bottom + 2 * j), _mm256_loadu_ps(bottom + 2 * j + 8));
        _mm256_storeu_ps(y + j, in_order(max_or_nan(upper, lower)));
      }
      if (tail == 0) continue;
      const __m256 upper = pair_maxima(_mm256_maskload_ps(top + 2 * j, low_inputs),
                                       _mm256_maskload_ps(top + 2 * j + 8, high_inputs));
      const __m256 lower = pair_maxima(_mm256_maskload_ps(bottom + 2 * j, low_inputs),
                                       _mm256_maskload_ps(bottom + 2 * j + 8, high_inputs));
      _mm256_maskstore_ps(y + j, outputs, in_order(max_or_nan(upper, lower)));
    }
  }
}
#endif

// Whether every window is 2×2 at stride 2, undilated and inside the input, over planes.
inline bool whole_2x2_windows(const planes& p) noexcept {
  if (p.d.in != 1 || p.d.kernel != 1) return false;
  const auto pairs = [](const axis& a) {
    return a.kernel == 2 && a.stride == 2 && a.dilation == 1 && a.padding == 0 && 2 * a.out <= a.in;
  };
  return pairs(p.h) && pairs(p.w);
}

// Maximum over each window; padding and taps past the end count as -inf. A window's rows are its
// (depth, height) taps inside the input. Output columns whose window lies inside the input along
// W run tap by tap across the whole row (a loop over output columns the compiler vectorises); the
// few border columns clip their taps one by one.
inline void max_pool(const planes& p, const float* x, float* y) {
#if MASE_MAX_POOL_AVX2
#if defined(__AVX2__)
  constexpr bool compiled_for_avx2 = true;
#else
  constexpr bool compiled_for_avx2 = false;
#endif
  if (whole_2x2_windows(p) && (compiled_for_avx2 || dispatch::chosen() >= dispatch::target::x86_64_v3)) {
    max_pool_2x2(p, x, y);
    return;
  }
#endif
  std::int64_t ow_first = 0;
  std::int64_t ow_last = 0;
  p.w.interior(ow_first, ow_last);
  const std::int64_t plane_size = p.h.in * p.w.in;
  for (std::int64_t c = 0; c < p.count; ++c) {
    const float* volume = x + c * p.d.in * plane_size;
    for (std::int64_t od = 0; od < p.d.out; ++od) {
      std::int64_t kd_first = 0;
      std::int64_t kd_last = 0;
      p.d.taps(od, kd_first, kd_last);
      const std::int64_t d0 = p.d.start(od);
      for (std::int64_t oh = 0; oh < p.h.out; ++oh, y += p.w.out) {
        std::int64_t kh_first = 0;
        std::int64_t kh_last = 0;
        p.h.taps(oh, kh_first, kh_last);
        const std::int64_t h0 = p.h.start(oh);
        // Row (kd, kh) of the window; only taps inside the input are ever asked for.
        const auto row_of = [&](std::int64_t kd, std::int64_t kh) {
          return volume + (d0 + kd * p.d.dilation) * plane_size + (h0 + kh * p.h.dilation) * p.w.in;
        };
        const auto border_column = [&](std::int64_t ow) {
          std::int64_t kw_first = 0;
          std::int64_t kw_last = 0;
          p.w.taps(ow, kw_first, kw_last);
          const std::int64_t w0 = p.w.start(ow);
          float best = -std::numeric_limits<float>::infinity();
          for (std::int64_t kd = kd_first; kd < kd_last; ++kd)
            for (std::int64_t kh = kh_first; kh < kh_last; ++kh) {
              const float* row = row_of(kd, kh);
              for (std::int64_t kw = kw_first; kw < kw_last; ++kw) best = max_or_nan(best, row[w0 + kw * p.w.dilation]);
            }
          y[ow] = best;
        };
        for (std::int64_t ow = 0; ow < ow_first; ++ow) border_column(ow);
        for (std::int64_t ow = ow_last; ow < p.w.out; ++ow) border_column(ow);

        float* out = y + ow_first;
        const std::int64_t columns = ow_last - ow_first;
        if (columns == 0) continue;
        // Pointers are formed only to taps inside the input (from the first interior window's
        // column start, which is >= 0).
        const std::int64_t first_column = p.w.start(ow_first);
        // 2-wide windows at stride 2 (LeNet's and VGG's pools): both taps of a row in one pass,
        // and a 2×2 window in a single pass over the output row.
        const bool pairs = p.w.kernel == 2 && p.w.stride == 2 && p.w.dilation == 1;
        if (pairs && kd_last - kd_first == 1 && kh_last - kh_first == 2) {
          const float* top = row_of(kd_first, kh_first) + first_column;
          const float* bottom = row_of(kd_first, kh_first + 1) + first_column;
          for (std::int64_t j = 0; j < columns; ++j)
            out[j] = max_or_nan(max_or_nan(max_or_nan(top[2 * j], top[2 * j + 1]), bottom[2 * j]), bottom[2 * j + 1]);
          continue;
        }
        // Otherwise tap by tap across the row, vectorised over the output columns.
        std::fill(out, out + columns, -std::numeric_limits<float>::infinity());
        for (std::int64_t kd = kd_first; kd < kd_last; ++kd)
          for (std::int64_t kh = kh_first; kh < kh_last; ++kh) {
            const float* row = row_of(kd, kh) + first_column;
            if (pairs) {
              for (std::int64_t j = 0; j < columns; ++j)
                out[j] = max_or_nan(max_or_nan(out[j], row[2 * j]), row[2 * j + 1]);
              continue;
            }
            for (std::int64_t kw = 0; kw < p.w.kernel; ++kw) {
              const float* tap = row + kw * p.w.dilation;
              const std::int64_t stride = p.w.stride;
              if (stride == 1)
                for (std::int64_t j = 0; j < columns; ++j) out[j] = max_or_nan(out[j], tap[j]);
              else
                for (std::int64_t j = 0; j < columns; ++j) out[j] = max_or_nan(out[j], tap[j * stride]);
            }
          }
      }
    }
  }
}

// PyTorch's avg_pool2d/3d: each window's sum over its taps inside the input, then
// finish(sum, divisor) (average_divisor); the float kernel's finish divides. Each sum adds its
// taps in PyTorch's order (depth by depth, row by row, left to right); interior columns do so for
// the whole row at once, tap by tap, which keeps that order per output.
template <class Finish>
void avg_pool(const planes& p, bool count_include_pad, std::int64_t divisor_override, const float* x, float* y,
              const Finish& finish) {
  std::int64_t ow_first = 0;
  std::int64_t ow_last = 0;
  p.w.interior(ow_first, ow_last);
  const std::int64_t plane_size = p.h.in * p.w.in;
  for (std::int64_t c = 0; c < p.count; ++c) {
    const float* volume = x + c * p.d.in * plane_size;
    for (std::int64_t od = 0; od < p.d.out; ++od) {
      const average_window depth = average_window_of(p.d, od);
      for (std::int64_t oh = 0; oh < p.h.out; ++oh, y += p.w.out) {
        const average_window height = average_window_of(p.h, oh);
        const bool rows_inside = depth.first < depth.last && height.first < height.last;
        const auto border_column = [&](std::int64_t ow) {
          const average_window width = average_window_of(p.w, ow);
          if (!rows_inside || width.first >= width.last) {  // a window of padding only (an empty input)
            y[ow] = 0.0f;
            return;
          }
          float sum = 0.0f;
          for (std::int64_t id = depth.first; id < depth.last; ++id)
            for (std::int64_t ih = height.first; ih < height.last; ++ih) {
              const float* row = volume + id * plane_size + ih * p.w.in;
              for (std::int64_t iw = width.first; iw < width.last; ++iw) sum += row[iw];
            }
          y[ow] = finish(sum, average_divisor(depth, height, width, count_include_pad, divisor_override));
        };
        for (std::int64_t ow = 0; ow < ow_first; ++ow) border_column(ow);
        for (std::int64_t ow = ow_last; ow < p.w.out; ++ow) border_column(ow);

        float* out = y + ow_first;
        const std::int64_t columns = ow_last - ow_first;
        std::fill(out, out + columns, 0.0f);
        if (columns == 0 || !rows_inside) continue;
        for (std::int64_t id = depth.first; id < depth.last; ++id)
          for (std::int64_t ih = height.first; ih < height.last; ++ih) {
            const float* row = volume + id * plane_size + ih * p.w.in + p.w.start(ow_first);
            for (std::int64_t kw = 0; kw < p.w.kernel; ++kw) {
              const float* tap = row + kw;
              const std::int64_t stride = p.w.stride;
              if (stride == 1)
                for (std::int64_t j = 0; j < columns; ++j) out[j] += tap[j];
              else
                for (std::int64_t j = 0; j < columns; ++j) out[j] += tap[j * stride];
            }
          }
        const average_window interior{0, p.w.kernel, p.w.kernel};
        const std::int64_t divisor = average_divisor(depth, height, interior, count_include_pad, divisor_override);
        for (std::int64_t j = 0; j < columns; ++j) out[j] = finish(out[j], divisor);
      }
    }
  }
}

// The float kernel's finish: the sum divided by the divisor in float, as PyTorch's.
inline float divide_sum(float sum, std::int64_t divisor) noexcept { return sum / static_cast<float>(divisor); }

// PyTorch's adaptive average pool: bin i of `out` over `in` is [floor(i·in/out), ceil((i+1)·in/out)).
inline std::int64_t bin_start(std::int64_t i, std::int64_t out, std::int64_t in) { return i * in / out; }
inline std::int64_t bin_end(std::int64_t i, std::int64_t out, std::int64_t in) {
  return ((i + 1) * in + out - 1) / out;
}

inline void adaptive_avg_pool(std::int64_t count, std::int64_t in_h, std::int64_t in_w, std::int64_t out_h,
                              std::int64_t out_w, const float* x, float* y) {
  const std::int64_t plane_size = in_h * in_w;
  if (out_h == 1 && out_w == 1) {
    // PyTorch computes a 1×1 result as x.mean((-1, -2)): one sum over the plane, one division.
    for (std::int64_t c = 0; c < count; ++c)
      y[c] = Eigen::Map<const Eigen::ArrayXf>(x + c * plane_size, plane_size).sum() / static_cast<float>(plane_size);
    return;
  }
  for (std::int64_t c = 0; c < count; ++c) {
    const float* plane = x + c * plane_size;
    for (std::int64_t oh = 0; oh < out_h; ++oh) {
      const std::int64_t h0 = bin_start(oh, out_h, in_h);
      const std::int64_t h1 = bin_end(oh, out_h, in_h);
      for (std::int64_t ow = 0; ow < out_w; ++ow) {
        const std::int64_t w0 = bin_start(ow, out_w, in_w);
        const std::int64_t w1 = bin_end(ow, out_w, in_w);
        float sum = 0.0f;
        for (std::int64_t ih = h0; ih < h1; ++ih) {
          const float* row = plane + ih * in_w;
          for (std::int64_t iw = w0; iw < w1; ++iw) sum += row[iw];
        }
        // PyTorch divides by the bin's height, then by its width.
        *y++ = sum / static_cast<float>(h1 - h0) / static_cast<float>(w1 - w0);
      }
    }
  }
}

template <class Op>
inline void adaptive_avg_pool(const Op& op, const kernel_args& args, int spatial) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  const shape& in = x.shape();
  const std::int64_t in_w = in[in.size() - 1];
  const std::int64_t in_h = spatial == 2 ? in[in.size() - 2] : 1;
  const std::int64_t out_w = shape_rules::per_dim(op.output_size, spatial - 1);
  const std::int64_t out_h = spatial == 2 ? shape_rules::per_dim(op.output_size, 0) : 1;
  // The shape rule makes every dimension but the batch non-empty, so in_h·in_w > 0.
  const std::int64_t count = static_cast<std::int64_t>(x.size()) / (in_h * in_w);
  adaptive_avg_pool(count, in_h, in_w, out_h, out_w, x.data(), args.output().data());
}

// pool(planes_part, x_part, y_part) on ranges of the planes, split between `threads` threads:
// each plane's windows are computed as on one thread.
template <class Pool>
void over_planes(const planes& p, const float* x, float* y, std::size_t threads, Pool&& pool) {
  const std::int64_t in_size = p.d.in * p.h.in * p.w.in, out_size = p.d.out * p.h.out * p.w.out;
  const auto grain = static_cast<std::size_t>(std::max<std::int64_t>(1, static_cast<std::int64_t>(parallel_grain) /
                                                                           std::max<std::int64_t>(in_size, 1)));
  thread_pool::shared_chunks(static_cast<std::size_t>(p.count), threads, grain,
                             [&](std::size_t first, std::size_t last, std::size_t) {
                               planes part = p;
                               part.count = static_cast<std::int64_t>(last - first);
                               const auto at = static_cast<std::int64_t>(first);
                               pool(part, x + at * in_size, y + at * out_size);
                             });
}

template <class Op>
void max_pool_kernel(const Op& op, const kernel_args& args, int spatial) {
  over_planes(window_planes(op, args, spatial), args.input(0).data(), args.output().data(), args.threads,
              [](const planes& part, const float* x, float* y) { max_pool(part, x, y); });
}

template <class Op>
void avg_pool_kernel(const Op& op, const kernel_args& args, int spatial, std::int64_t divisor_override) {
  over_planes(window_planes(op, args, spatial), args.input(0).data(), args.output().data(), args.threads,
              [&](const planes& part, const float* x, float* y) {
                avg_pool(part, op.count_include_pad, divisor_override, x, y, divide_sum);
              });
}

}  // namespace pooling_detail

// torch.nn.MaxPool1d / MaxPool2d / MaxPool3d (kernel, stride = kernel when empty, -inf padding, dilation,
// ceil_mode through the shape rule's output size).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::max_pool1d& op, const Args& args) {
  pooling_detail::max_pool_kernel(op, args, 1);
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::max_pool2d& op, const Args& args) {
  pooling_detail::max_pool_kernel(op, args, 2);
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::max_pool3d& op, const Args& args) {
  pooling_detail::max_pool_kernel(op, args, 3);
}

// torch.nn.AvgPool1d / AvgPool2d / AvgPool3d (count_include_pad, ceil_mode; divisor_override for
// 2-d and 3-d).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::avg_pool1d& op, const Args& args) {
  pooling_detail::avg_pool_kernel(op, args, 1, 0);
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::avg_pool2d& op, const Args& args) {
  pooling_detail::avg_pool_kernel(op, args, 2, op.divisor_override);
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::avg_pool3d& op, const Args& args) {
  pooling_detail::avg_pool_kernel(op, args, 3, op.divisor_override);
}

// torch.nn.AdaptiveAvgPool1d / AdaptiveAvgPool2d.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::adaptive_avg_pool1d& op, const Args& args) {
  pooling_detail::adaptive_avg_pool(op, args, 1);
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::adaptive_avg_pool2d& op, const Args& args) {
  pooling_detail::adaptive_avg_pool(op, args, 2);
}

}  // namespace mase::eval
