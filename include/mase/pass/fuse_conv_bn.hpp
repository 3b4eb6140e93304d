#pragma once
// fuse_conv_bn: folds a batch normalisation into the convolution before it (MASE's
// conv_bn_fusion_transform_pass, torch.nn.utils.fusion.fuse_conv_bn_eval). Inference semantics:
// the batch norm's running statistics are constants, so per output channel c
//
//   scale_c = gamma_c / sqrt(running_var_c + eps)
//   W'[c]   = W[c] * scale_c
//   b'_c    = (b_c - running_mean_c) * scale_c + beta_c      (b = 0 for a convolution without bias)
//
// and conv'(x) = batch_norm(conv(x)). Patterns: conv1d -> batch_norm1d and conv2d -> batch_norm2d
// (the vocabulary has no conv3d). A pair is fused only when the convolution's result has exactly
// one reader, the batch norm (otherwise the other readers would see normalised values), and the
// batch norm tracks running statistics (without them it normalises with each batch's own
// statistics, which no constant can hold); the info lists the pairs skipped and why. A batch
// norm without affine parameters has gamma = 1, beta = 0. A convolution without bias becomes one
// with bias. The fused parameters are computed in double and rounded to float once.
//
// Metadata: when the graph has common metadata, the fused convolution's entry is kept as
// add_common_metadata would write it, so the common_metadata fact survives: a "bias" argument
// after "weight" (float32, as add_common_metadata gives a new parameter), and its data_out_0 takes
// the batch norm's format, which is what the pair produced and what the readers' data_in entries
// already say. Its software and hardware sections are cleared: their statistics and Verilog
// parameters described the unfused weights. The pass therefore invalidates software metadata,
// statistics, quantization (formats chosen for the unfused weights; the new bias has none) and
// hardware metadata, so a pipeline must re-establish them after fusing.

#include <mase/core/compiled.hpp>
#include <mase/pass/pipeline.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace mase {

struct fused_conv_bn {
  std::string conv;        // the convolution, which now holds the fused parameters
  std::string batch_norm;  // the batch norm, removed from the graph
  friend bool operator==(const fused_conv_bn&, const fused_conv_bn&) = default;
};

struct skipped_conv_bn {
  std::string conv;
  std::string batch_norm;
  std::string reason;
  friend bool operator==(const skipped_conv_bn&, const skipped_conv_bn&) = default;
};

struct conv_bn_fusion_info {
  std::vector<fused_conv_bn> fused;      // in graph order
  std::vector<skipped_conv_bn> skipped;  // conv -> batch norm pairs left as they were
  friend bool operator==(const conv_bn_fusion_info&, const conv_bn_fusion_info&) = default;
};

// Fuses every conv -> batch norm pair of the graph; returns what was fused and skipped.
MASE_COMPILED_INLINE conv_bn_fusion_info fuse_conv_bn_pairs(graph& g);

struct fuse_conv_bn_pass {
  using needs = facts<>;
  using provides = facts<>;
  using invalidates = facts<fact::software_metadata, fact::statistics, fact::quantized, fact::hardware_metadata>;

  conv_bn_fusion_info run(graph& g) const { return fuse_conv_bn_pairs(g); }
};

inline constexpr fuse_conv_bn_pass fuse_conv_bn{};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/fuse_conv_bn_definitions.hpp>
#endif
