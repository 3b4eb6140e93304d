#pragma once
// What the hardware flow reads of a node's streams, shared by the hardware-metadata pass
// (pass/add_hardware_metadata.hpp), the component descriptors, the cost model and the emitter:
// which inputs are streams, an entry's metadata and fixed-point format, MASE's per-tensor
// parameters, samples and batches, channels-last entries, slices by whole beats.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/format/fixed.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mase {

namespace verilog {
struct component;  // verilog/component.hpp
}  // namespace verilog

// The modules a component's module instantiates, itself included: of mase's module by its name,
// or of a component's descriptor (a user's, hardware_mapping::component).
MASE_COMPILED_INLINE std::vector<std::string> hardware_dependence_files(std::string_view module);
MASE_COMPILED_INLINE std::vector<std::string> hardware_dependence_files(const verilog::component& c);

// The inputs of a component node that are streams (the rest are constants it takes as parameters).
MASE_COMPILED_INLINE std::size_t stream_input_count(const node& n);

// Whether input i of a component node is a stream: one of its stream inputs whose producer is
// not a constant the component holds itself (hardware_mapping::constant_operands).
MASE_COMPILED_INLINE bool is_stream_input(const graph& g, const node& n, std::size_t i);

// Whether a permute keeps its elements in their row-major order: it moves only dimensions of
// size 1 (nn.MultiheadAttention's exports swap the batch of 1 with the sequence). Its stream is
// then its input's.
MASE_COMPILED_INLINE bool keeps_element_order(const node& n);

// Whether the node is wired through in hardware: its op's hardware facet has no module (flatten,
// reshape, view, dropout, identity: the same row-major stream).
MASE_COMPILED_INLINE bool is_implicit_in_hardware(const node& n);

// The largest divisor of size that is at most limit (at least 1).
constexpr std::int64_t largest_divisor_at_most(std::int64_t size, std::int64_t limit) noexcept {
  for (std::int64_t d = std::min(size, limit); d > 1; --d)
    if (size % d == 0) return d;
  return 1;
}

namespace detail {

MASE_COMPILED_INLINE std::string upper(std::string_view s);

MASE_COMPILED_INLINE const tensor_meta* entry_meta(const node& n, std::string_view entry);

// The fixed-point format of an entry, or an error naming the node and entry.
MASE_COMPILED_INLINE fixed_fmt hardware_format(const node& n, std::string_view entry);

// X_PRECISION_0/1, X_TENSOR_SIZE_DIM_d and X_PARALLELISM_DIM_d (d = 0 innermost).
MASE_COMPILED_INLINE void add_tensor_parameters(ordered_map<verilog_value>& params, const node& n, std::string_view entry,
                                                std::vector<std::int64_t> parallelism);

// A 2-D window attribute (kernel_size, stride, …) along y (0) or x (1): one entry serves both.
MASE_COMPILED_INLINE std::int64_t window_dim(const dims& d, int axis, std::int64_t fallback);

MASE_COMPILED_INLINE std::int64_t innermost(const node& n, std::string_view entry);

// Whether n takes or gives a rank-4 tensor (a map).
MASE_COMPILED_INLINE bool takes_or_gives_a_map(const node& n);

// Whether an entry of n is a rank-4 stream that runs channels-last (hardware_meta::channels_last).
MASE_COMPILED_INLINE bool channels_last_entry(const node& n, std::string_view entry);

// The innermost dimension of an entry's stream order: C for a channels-last [N, C, H, W].
MASE_COMPILED_INLINE std::int64_t stream_innermost(const node& n, std::string_view entry);

// An error naming n where it takes or gives a channels-last map and its component cannot.
MASE_COMPILED_INLINE void check_channels_last_support(const graph& g, const node& n);

// The samples the graph's tensors hold: its inputs' leading dimension (the batch), streamed one
// sample after another. At batch 1 each tensor is one sample, whatever its leading dimension (an
// export that moved or merged the batch, as nn.MultiheadAttention's does).
MASE_COMPILED_INLINE std::int64_t hardware_batch(const graph& g);

// Elements of one sample of a tensor of shape s.
MASE_COMPILED_INLINE std::int64_t per_sample(const shape& s, std::int64_t batch);

// A tensor's shape as samples: at batch 1 the whole tensor is one sample, so a leading 1 is added
// and every dimension of s is within it; otherwise s, whose leading dimension is the batch.
MASE_COMPILED_INLINE shape sample_shape(const shape& s, std::int64_t batch);

// A dimension of s (negative counts from the end) as a dimension of sample_shape(s, batch).
MASE_COMPILED_INLINE std::int64_t sample_dim(std::int64_t dim, const shape& s, std::int64_t batch);

// A slice whose kept elements are whole beats of a stream `lanes` wide: of every `period` beats
// (one index of the dimensions before the sliced one), beats first .. first + kept - 1.
struct beat_slice {
  std::int64_t period = 0, first = 0, kept = 0;
};

MASE_COMPILED_INLINE std::optional<beat_slice> slice_by_beats(const node& n, std::int64_t batch, std::int64_t lanes);

// Whether a constant with a batch dimension holds the same values in every sample (an export
// that folded a batch-sized constant, such as BERT's token-type embedding of zeros).
MASE_COMPILED_INLINE bool same_in_every_sample(const node& constant);

// KERNEL_X/Y, STRIDE_X/Y, PADDING_X/Y and DILATION_X/Y of a window sweep.
MASE_COMPILED_INLINE void add_window_parameters(ordered_map<verilog_value>& params, const dims& kernel,
                                                const dims& stride, const dims& padding, const dims& dilation);

// A conv or pool node that mase_window_sweep gives a ring of rows (windows_read_one_channel).
MASE_COMPILED_INLINE bool sweeps_rows(const node& n);

}  // namespace detail

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/verilog/stream_metadata_definitions.hpp>
#endif
