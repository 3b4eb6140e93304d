#pragma once
// A node's fixed-point lowering as a typed record, and the kernel that runs it: what the bit-exact
// evaluator keeps per node and the Verilog emitter renders. The rules that build and run a
// lowering are in eval/bit_exact.hpp; this header holds only the records, so that declaring an
// evaluator does not compile them.

#include <mase/core/shape.hpp>
#include <mase/eval/fixed_functions.hpp>
#include <mase/eval/kernel.hpp>
#include <mase/eval/mean_rule.hpp>
#include <mase/format/fixed.hpp>
#include <mase/ir/graph.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mase::eval {

// A batch norm (1-d or 2-d) as hardware computes it: per channel c, y = cast(x·scale_c + shift_c), with
// scale = weight / sqrt(running_var + eps) quantized to the weight format and shift =
// bias − running_mean · scale quantized to the bias format (as parameters are quantized), the
// shift aligned to the product's fraction bits. Absent parameters (affine or
// track_running_stats off) take PyTorch's values: weight 1, bias 0, mean 0, variance 1.
struct folded_batch_norm {
  std::vector<std::int64_t> scale;          // codes in the weight format
  std::vector<std::int64_t> aligned_shift;  // codes at fraction x.frac + w.frac
  int accumulator_width = 0;
};

// Which C++ type holds the accumulator exactly.
enum class accumulator_type : std::uint8_t { float32, float64, int64 };
constexpr accumulator_type accumulator_for(int width) noexcept {
  return width <= 24 ? accumulator_type::float32 : width <= 53 ? accumulator_type::float64 : accumulator_type::int64;
}
constexpr std::string_view to_string(accumulator_type t) noexcept {
  return t == accumulator_type::float32 ? "float" : t == accumulator_type::float64 ? "double" : "int64";
}

// ---------------------------------------------------------------------------------------------
// The lowering: a node's integer semantics, resolved once.
//
// lower_to_fixed reads a node's formats and quantized parameters and returns everything its
// integer computation needs: the operand formats, the accumulator, the weight codes, the bias (or
// folded batch-norm shift) aligned to the accumulator, the lookup table, the cast at its output.
// The bit-exact evaluator runs the record (lowered_kernel) and the Verilog emitter writes its ROMs
// and derived parameters from the same record, so the golden model and the hardware cannot read
// a node's numbers differently.

using mase::lowering_kind;  // ir/op/op_base.hpp: an op names its rule there (its integer_rule)

struct fixed_lowering {
  lowering_kind kind{};
  fixed_fmt input{};                       // data_in_0
  std::optional<fixed_fmt> other_input{};  // data_in_1 (matmul, element-wise)
  std::optional<fixed_fmt> weight{};       // the weight's format (scale_shift: the scale's)
  std::optional<fixed_fmt> bias{};         // the bias's format (scale_shift: the shift's); none without a bias
  fixed_fmt output{};                      // data_out_0: the format of the one cast at the end
  // dot_product, matmul, scale_shift: the exact accumulator's width (linear_accumulator_width);
  // element-wise: the exact result's.
  int accumulator_width = 0;
  shape weight_shape{};
  std::vector<std::int64_t> weight_codes{};  // dot_product: the weight, row-major; scale_shift: the scale per channel
  std::vector<std::int64_t> aligned_bias{};  // per output channel, at the accumulator's fraction bits (scale_shift: the shift)
  std::vector<std::int64_t> table{};         // lookup_table: output codes, one per input code from the lowest
  std::shared_ptr<const softmax_rule> softmax_rows{};              // softmax
  std::shared_ptr<const normalization_rule> normalization_rows{};  // layer_norm, rms_norm
  std::optional<mean_rule> mean_runs{};                            // mean: the rule of one run
  std::shared_ptr<const window_mean_rule> window_means{};          // window_mean: a rule per divisor

  // Fraction bits of the accumulator (dot product, matmul, scale_shift): the products'.
  int accumulator_frac() const noexcept {
    return input.frac + (weight ? weight->frac : other_input ? other_input->frac : 0);
  }
};

struct bit_exact_kernel {
  std::string description;  // "linear: int8 x int8, K = 784, accumulator 27 bits in double"
  std::function<void(const kernel_args&)> run;
};

namespace detail {

// A node's entry (an argument, or a result with `result`) when its format is fixed point.
inline std::optional<fixed_fmt> fixed_entry(const node& n, std::string_view entry, bool result = false) {
  const format* f = nullptr;
  if (result) {
    const auto it = n.meta.common.results.find(entry);
    if (it != n.meta.common.results.end()) f = &it->second.precision;
  } else {
    const auto it = n.meta.common.args.find(entry);
    if (it != n.meta.common.args.end())
      if (const auto* t = std::get_if<tensor_meta>(&it->second)) f = &t->precision;
  }
  if (f == nullptr) return std::nullopt;
  if (f->holds<fixed_fmt>()) return f->get<fixed_fmt>();
  return std::nullopt;
}

}  // namespace detail

// The fixed-point format of a node's operand (data_in_<i>, weight, bias) or result
// (data_out_<i>), or none when it is not fixed point: what a user's bit_exact rule reads.
inline std::optional<fixed_fmt> fixed_format_of(const node& n, std::string_view entry) {
  return detail::fixed_entry(n, entry, entry.starts_with("data_out"));
}

}  // namespace mase::eval
