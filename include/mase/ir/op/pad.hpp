#pragma once
// torch.nn.functional.pad(x, pad, mode, value). `pad` lists (before, after) pairs from the last
// dimension backwards, as PyTorch does: (1, 2) pads the last dimension by 1 in front and 2 behind,
// (1, 2, 3, 4) also the one before it by 3 and 4. A negative entry crops that many elements.
// Attributes are numbers, so the mode string is held as one (mode_of turns a name into it):
//   constant   fills with `value`
//   reflect    mirrors about the edge element, which is not repeated: each entry must be below the
//              dimension's size (PyTorch's rule)
//   replicate  repeats the edge element (the dimension must not be empty)
//   circular   wraps around the elements that remain after cropping, as PyTorch does (its
//              "wrap"), repeating as often as needed
// `value` is used in constant mode only. PyTorch accepts the non-constant modes only for
// [N, C, …] inputs with 1 to 3 padded dimensions; mase accepts any rank and any dimensions, as
// ONNX's Pad does. The list holds at most 8 entries (a dims value), so at most the last 4
// dimensions are padded; pairs of zeros at the end of the list can be left out.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct pad {
  static constexpr std::int64_t constant_mode = 0;
  static constexpr std::int64_t reflect_mode = 1;
  static constexpr std::int64_t replicate_mode = 2;
  static constexpr std::int64_t circular_mode = 3;

  dims pads{};
  std::int64_t mode = constant_mode;
  double value = 0.0;

  static constexpr std::string_view name = "pad";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("pad", &pad::pads), attribute("mode", &pad::mode), attribute("value", &pad::value)};
  }

  // PyTorch's mode names; "wrap" and "edge" are ONNX's names for circular and replicate.
  // -1 for a name that is none of them.
  static constexpr std::int64_t mode_of(std::string_view text) noexcept {
    if (text == "constant") return constant_mode;
    if (text == "reflect") return reflect_mode;
    if (text == "replicate" || text == "edge") return replicate_mode;
    if (text == "circular" || text == "wrap") return circular_mode;
    return -1;
  }
  static constexpr std::string_view mode_name(std::int64_t m) noexcept {
    switch (m) {
      case constant_mode: return "constant";
      case reflect_mode: return "reflect";
      case replicate_mode: return "replicate";
      case circular_mode: return "circular";
      default: return "unknown";
    }
  }

  // The (before, after) entries for dimension d of a rank-`rank` input; 0 for a dimension the
  // list does not reach.
  constexpr std::int64_t before(int d, int rank) const noexcept {
    const int pair = rank - 1 - d;
    return 2 * pair + 1 < pads.size() ? pads[2 * pair] : 0;
  }
  constexpr std::int64_t after(int d, int rank) const noexcept {
    const int pair = rank - 1 - d;
    return 2 * pair + 1 < pads.size() ? pads[2 * pair + 1] : 0;
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    if (mode < constant_mode || mode > circular_mode)
      return shape_error("pad: mode must be 0 (constant), 1 (reflect), 2 (replicate) or 3 (circular)");
    if (pads.size() % 2 != 0) return shape_error("pad: the pad list needs (before, after) pairs, an even length");
    if (pads.size() / 2 > x.size()) return shape_error("pad: the pad list has more pairs than the input has dimensions");
    shape out = x;
    for (int d = 0; d < x.size(); ++d) {
      const std::int64_t b = before(d, x.size());
      const std::int64_t a = after(d, x.size());
      // Compared before negating: an entry read from a file may be INT64_MIN.
      if (b < -x[d] || a < -x[d] || x[d] - (b < 0 ? -b : 0) - (a < 0 ? -a : 0) < 0)
        return shape_error("pad: negative entries crop more than the dimension holds");
      std::int64_t length = 0;
      if (__builtin_add_overflow(x[d], b, &length) || __builtin_add_overflow(length, a, &length))
        return shape_error("pad: an entry is too large");
      out[d] = length;
      if (b <= 0 && a <= 0) continue;  // nothing is filled in
      if (mode == reflect_mode && (b >= x[d] || a >= x[d]))
        return shape_error("pad: reflect mode needs every entry below the size of its dimension");
      if (mode == replicate_mode && x[d] == 0)
        return shape_error("pad: replicate mode cannot pad an empty dimension");
      if (mode == circular_mode && x[d] - (b < 0 ? -b : 0) - (a < 0 ? -a : 0) < 1)
        return shape_error("pad: circular mode needs an element left after cropping to wrap around");
    }
    return shape_ok(out);
  }
  constexpr bool operator==(const pad&) const = default;
};

}  // namespace mase::op
