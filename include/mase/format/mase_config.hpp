#pragma once
// MASE's quantization config keys -> mase formats.
//
// A MASE quantize config (`[passes.quantize.default.config]` in its TOML files) names the
// arithmetic (`name = "integer"`) and gives per-operand keys `<operand>_<suffix>`, e.g.
// `data_in_width = 8`, `data_in_frac_width = 3`, `weight_block_size = [1, 16]`. This maps one
// operand of such a config to a format. The operand decides MASE's blocking: `weight` and
// `bias` are blocked as weights (skip_first_dim = false), `data_in_*` / `data_out_*` as activations.
//
// The formats are mase's arithmetically right ones (docs/formats.md lists every difference);
// mase::compat reproduces MASE's own quantizers where its exact quirks are wanted. Defined in
// format/mase_config_definitions.hpp (in the compiled mode, once, in mase::mase).

#include <mase/core/compiled.hpp>
#include <mase/format/format.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mase {

// One key's value in a MASE quantize config (distinct from metadata's config_value, an op attribute).
using quant_config_value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>>;
using quant_config = std::map<std::string, quant_config_value, std::less<>>;

// The format of `operand` ("data_in", "weight", "bias", "data_out", or "data_in_0" style names
// MASE also uses) in a MASE quantization config.
MASE_COMPILED_INLINE format format_from_mase_config(const quant_config& config, std::string_view operand);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/format/mase_config_definitions.hpp>
#endif
