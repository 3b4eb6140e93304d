#pragma once
// Shape rules several ops share: one definition each (broadcasting, dimension normalisation,
// the output size of a sliding window).

#include <mase/core/fixed_string.hpp>
#include <mase/ir/op/op_base.hpp>

namespace mase::shape_rules {

// PyTorch's dimension index `d` (negative counts from the end) into [0, rank), or -1 when it is
// out of range.
constexpr int normalize_dim(std::int64_t d, int rank) noexcept {
  const std::int64_t n = d < 0 ? d + rank : d;
  return n < 0 || n >= rank ? -1 : static_cast<int>(n);
}

// NumPy/PyTorch broadcasting of two shapes; ok=false when they do not broadcast.
constexpr shape_result broadcast(const shape& a, const shape& b) {
  const int rank = a.size() > b.size() ? a.size() : b.size();
  shape out;
  for (int i = 0; i < rank; ++i) {
    const int ia = a.size() - rank + i;
    const int ib = b.size() - rank + i;
    const std::int64_t da = ia >= 0 ? a[ia] : 1;
    const std::int64_t db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) return shape_error("the input shapes do not broadcast");
    out.push_back(da == 1 ? db : da);
  }
  return shape_ok(out);
}

// One input, result of the same shape (activations, dropout, identity, …).
constexpr shape_result same_as_input(std::span<const shape> in) { return shape_ok(in[0]); }

// Two or more inputs broadcast together (add, mul, …).
constexpr shape_result broadcast_all(std::span<const shape> in) {
  shape out = in[0];
  for (std::size_t i = 1; i < in.size(); ++i) {
    const shape_result r = broadcast(out, in[i]);
    if (!r.ok()) return r;
    out = r.shapes[0];
  }
  return shape_ok(out);
}

// Output length of a convolution or pooling window along one dimension (PyTorch's formula);
// -1 when the window does not fit.
constexpr std::int64_t window_output(std::int64_t length, std::int64_t kernel, std::int64_t stride,
                                     std::int64_t padding, std::int64_t dilation, bool ceil_mode = false) noexcept {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  const std::int64_t room = length + 2 * padding - span;
  if (room < 0 || stride <= 0) return -1;
  std::int64_t out = room / stride + 1;
  // ceil_mode: a last partial window counts if it starts inside the input or the left padding.
  if (ceil_mode && room % stride != 0 && (out * stride) < length + padding) ++out;
  return out;
}

// normalize_dim, but a rank-0 tensor takes 0 and -1 as PyTorch does (maybe_wrap_dim treats a
// scalar as having one dimension for indexing).
constexpr int normalize_dim_scalar_ok(std::int64_t d, int rank) noexcept {
  return normalize_dim(d, rank == 0 ? 1 : rank);
}

// The errors the reduction rules report; each op using them spells them with its own name first.
struct reduction_errors {
  const char* out_of_range;  // a dim is outside the input's dimensions
  const char* repeated;      // a dim appears twice (as 1 and -rank+1, say)
};

// Which dimensions a reduction over `dim` (torch.sum/mean/amax/amin) covers: every one when
// `dim` is empty, as torch.sum(x) and torch.amax(x, dim=()) do.
struct reduced_dims {
  std::array<bool, shape::max_rank> mask{};
  const char* error = nullptr;
};

constexpr reduced_dims reduction_mask(const dims& dim, int rank, const reduction_errors& why) {
  reduced_dims r;
  if (dim.empty()) r.mask.fill(true);
  for (std::int64_t d : dim) {
    const int n = normalize_dim_scalar_ok(d, rank);
    if (n < 0) return {.mask = {}, .error = why.out_of_range};
    if (r.mask[static_cast<std::size_t>(n)]) return {.mask = {}, .error = why.repeated};
    r.mask[static_cast<std::size_t>(n)] = true;
  }
  return r;
}

// A reduction's result: the input's shape without the reduced dimensions, or with them as size 1
// under keepdim.
constexpr shape_result reduction(const shape& x, const dims& dim, bool keepdim, const reduction_errors& why) {
  const reduced_dims r = reduction_mask(dim, x.size(), why);
  if (r.error != nullptr) return shape_error(r.error);
  shape out;
  for (int i = 0; i < x.size(); ++i) {
    if (!r.mask[static_cast<std::size_t>(i)]) out.push_back(x[i]);
    else if (keepdim) out.push_back(1);
  }
  return shape_ok(out);
}

// a * b into `out`; false when it overflows int64 (shapes read from files may hold anything).
constexpr bool multiply_checked(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  return !__builtin_mul_overflow(a, b, &out);
}

// The dimensions of `s` before its last `count` (a matrix product's batch dimensions); none when
// `s` has `count` dimensions or fewer.
constexpr shape leading_dims(const shape& s, int count) {
  shape lead;
  for (int i = 0; i + count < s.size(); ++i) lead.push_back(s[i]);
  return lead;
}

// The errors reshape_to reports; each op using it spells them with its own name first.
struct reshape_errors {
  const char* bad_entry;             // an entry below -1
  const char* two_unknowns;          // more than one -1
  const char* unknown_is_ambiguous;  // -1 beside a 0 entry: any size would fit
  const char* count_mismatch;        // the element counts differ
};

// torch.reshape/view's target shape: at most one -1, inferred from the element count.
constexpr shape_result reshape_to(const shape& in, const dims& target, const reshape_errors& why) {
  std::int64_t in_count = 1;
  for (std::int64_t d : in)
    if (!multiply_checked(in_count, d, in_count)) return shape_error(why.count_mismatch);
  int unknown = -1;
  std::int64_t known_count = 1;
  for (int i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (unknown >= 0) return shape_error(why.two_unknowns);
      unknown = i;
    } else if (target[i] < -1) {
      return shape_error(why.bad_entry);
    } else if (!multiply_checked(known_count, target[i], known_count)) {
      return shape_error(why.count_mismatch);
    }
  }
  shape out = target;
  if (unknown >= 0) {
    if (known_count == 0) return shape_error(why.unknown_is_ambiguous);
    if (in_count % known_count != 0) return shape_error(why.count_mismatch);
    out[unknown] = in_count / known_count;
  } else if (known_count != in_count) {
    return shape_error(why.count_mismatch);
  }
  return shape_ok(out);
}

// PyTorch takes a window parameter (kernel_size, stride, …) as one value for every spatial
// dimension or one per dimension: `3` or `(3, 5)`. Whether `values` is either, for `spatial` dims.
constexpr bool fits_spatial(const dims& values, int spatial) noexcept {
  return values.size() == 1 || values.size() == spatial;
}
// Entry i of such a parameter.
constexpr std::int64_t per_dim(const dims& values, int i) noexcept { return values[values.size() == 1 ? 0 : i]; }
// The elements of a window over `spatial` dims (kernel_size given either way).
constexpr std::int64_t window_volume(const dims& kernel, int spatial) noexcept {
  std::int64_t n = 1;
  for (int i = 0; i < spatial; ++i) n *= per_dim(kernel, i);
  return n;
}
// Rows of a tensor whose last dimension is a feature vector: |t| / t.last (0 for empty features).
constexpr std::int64_t feature_rows(const shape& s) noexcept {
  if (s.empty()) return 1;
  return s.back() == 0 ? 0 : s.numel() / s.back();
}

// Text for the messages of the rank families (op::conv<Rank>, …), built at compile time.
// The spatial dimensions' letters, as PyTorch's documentation names them: "L", "H, W", "D, H, W".
template <int Rank>
inline constexpr auto spatial_letters = [] {
  static_assert(Rank >= 1 && Rank <= 3, "PyTorch's window ops are 1-, 2- or 3-d");
  if constexpr (Rank == 1) return fixed_string("L");
  else if constexpr (Rank == 2) return fixed_string("H, W");
  else return fixed_string("D, H, W");
}();
// What a window parameter of Rank dims may hold: "exactly 1 entry", "1 or 2 entries".
template <int Rank>
inline constexpr auto window_entry_counts = [] {
  if constexpr (Rank == 1) return fixed_string("exactly 1 entry");
  else return joined<"1 or ", digit_text<Rank>, " entries">;
}();
// A window op's input: "[N, C, H, W] or unbatched [C, H, W]".
template <int Rank>
inline constexpr auto batched_or_unbatched =
    joined<"[N, C, ", spatial_letters<Rank>, "] or unbatched [C, ", spatial_letters<Rank>, "]">;
// The name of a family's member: ranked_name<"conv", 2> is "conv2d".
template <fixed_string Family, int Rank>
inline constexpr auto ranked_name = joined<Family, digit_text<Rank>, "d">;

// The errors sliding_window reports; each op using it spells them with its own name first.
struct window_errors {
  const char* entry_count;  // a parameter has neither 1 nor `spatial` entries
  const char* entry_value;  // kernel, stride or dilation below 1, or padding below 0
  const char* input_rank;   // the input is neither [N, C, spatial…] nor unbatched [C, spatial…]
  const char* too_small;    // the dilated window is larger than the padded input
};

// A convolution or pooling window over the last `spatial` dimensions of an input [N, C, …] or
// unbatched [C, …]: the input's shape with those dimensions replaced by window_output. The
// channel dimension is left for the caller to check and replace.
constexpr shape_result sliding_window(const shape& x, int spatial, const dims& kernel, const dims& stride,
                                      const dims& padding, const dims& dilation, bool ceil_mode,
                                      const window_errors& why) {
  for (const dims* p : {&kernel, &stride, &padding, &dilation})
    if (!fits_spatial(*p, spatial)) return shape_error(why.entry_count);
  for (int i = 0; i < spatial; ++i)
    if (per_dim(kernel, i) < 1 || per_dim(stride, i) < 1 || per_dim(dilation, i) < 1 || per_dim(padding, i) < 0)
      return shape_error(why.entry_value);
  if (x.size() != spatial + 1 && x.size() != spatial + 2) return shape_error(why.input_rank);
  shape out = x;
  for (int i = 0; i < spatial; ++i) {
    const int d = x.size() - spatial + i;
    const std::int64_t length = window_output(x[d], per_dim(kernel, i), per_dim(stride, i), per_dim(padding, i),
                                              per_dim(dilation, i), ceil_mode);
    if (length < 1) return shape_error(why.too_small);
    out[d] = length;
  }
  return shape_ok(out);
}

// The errors pooling_window reports: sliding_window's, and one more.
struct pooling_errors {
  window_errors window;
  const char* padding_too_wide;  // padding above half the kernel
};

// The window of a max or avg pool (1-, 2- or 3-d): sliding_window with PyTorch's stride=None
// (an empty stride is the kernel size) and PyTorch's pooling rule that padding is at most half the
// kernel, since wider padding would let a window hold nothing but padding.
constexpr shape_result pooling_window(const shape& x, int spatial, const dims& kernel, const dims& stride,
                                      const dims& padding, const dims& dilation, bool ceil_mode,
                                      const pooling_errors& why) {
  const shape_result r =
      sliding_window(x, spatial, kernel, stride.empty() ? kernel : stride, padding, dilation, ceil_mode, why.window);
  if (!r.ok()) return r;
  for (int i = 0; i < spatial; ++i)
    if (per_dim(padding, i) > per_dim(kernel, i) / 2) return shape_error(why.padding_too_wide);
  return r;
}

// The errors transposed_window reports; each op using it spells them with its own name first.
struct transposed_window_errors {
  const char* entry_count;     // a parameter has neither 1 nor `spatial` entries
  const char* entry_value;     // kernel, stride or dilation below 1, padding or output_padding below 0
  const char* output_padding;  // output_padding not below stride or dilation (PyTorch's rule)
  const char* input_rank;      // the input is neither [N, C, spatial…] nor unbatched [C, spatial…]
  const char* too_small;       // the padding crops the whole output away
};

// A transposed convolution over the last `spatial` dimensions of [N, C, …] or unbatched [C, …]:
// the input's shape with each of those dimensions replaced by PyTorch's
// (in − 1)·stride − 2·padding + dilation·(kernel − 1) + output_padding + 1. The channel dimension
// is left for the caller to check and replace.
constexpr shape_result transposed_window(const shape& x, int spatial, const dims& kernel, const dims& stride,
                                         const dims& padding, const dims& output_padding, const dims& dilation,
                                         const transposed_window_errors& why) {
  for (const dims* p : {&kernel, &stride, &padding, &output_padding, &dilation})
    if (!fits_spatial(*p, spatial)) return shape_error(why.entry_count);
  for (int i = 0; i < spatial; ++i) {
    if (per_dim(kernel, i) < 1 || per_dim(stride, i) < 1 || per_dim(dilation, i) < 1 || per_dim(padding, i) < 0 ||
        per_dim(output_padding, i) < 0)
      return shape_error(why.entry_value);
    if (per_dim(output_padding, i) >= per_dim(stride, i) && per_dim(output_padding, i) >= per_dim(dilation, i))
      return shape_error(why.output_padding);
  }
  if (x.size() != spatial + 1 && x.size() != spatial + 2) return shape_error(why.input_rank);
  shape out = x;
  for (int i = 0; i < spatial; ++i) {
    const int d = x.size() - spatial + i;
    // Shapes and attributes read from files may hold anything: the arithmetic is checked.
    std::int64_t stretched = 0, span = 0, length = 0, cropped = 0;
    if (x[d] < 1 || !multiply_checked(x[d] - 1, per_dim(stride, i), stretched) ||
        !multiply_checked(per_dim(dilation, i), per_dim(kernel, i) - 1, span) ||
        !multiply_checked(per_dim(padding, i), 2, cropped) || __builtin_add_overflow(stretched, span, &length) ||
        __builtin_add_overflow(length, per_dim(output_padding, i) + 1, &length))
      return shape_error(why.too_small);
    length -= cropped;  // both non-negative: cannot overflow
    if (length < 1) return shape_error(why.too_small);
    out[d] = length;
  }
  return shape_ok(out);
}

// Whether the last dimensions of x are `tail` (layer_norm's normalized_shape).
constexpr bool ends_with(const shape& x, const dims& tail) noexcept {
  if (tail.size() > x.size()) return false;
  for (int i = 0; i < tail.size(); ++i)
    if (x[x.size() - tail.size() + i] != tail[i]) return false;
  return true;
}

}  // namespace mase::shape_rules
