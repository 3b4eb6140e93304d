#pragma once
// Statistics of tensors fed one sample at a time: MASE's stat.py (reference §2.4) with its names,
// options and result fields, for the profile_statistics pass and for direct use.
//
//   mase::stats::range_min_max r({.dims = mase::stats::stat_dims::all(), .abs = true});
//   for (const tensor& x : samples) r.update(x);
//   mase::statistic s = r.compute();   // {"min", "max", "range", "count"}
//
// Every statistic reduces its samples over `dims`:
// - stat_dims::all(): every element of every sample; results are numbers.
// - stat_dims::elementwise() (MASE's dims=None): each element position across samples; results
//   are lists in the samples' row-major order. Samples must all have the same shape.
// - stat_dims::reduce({d, …}): the listed dims of each sample and across samples; results are
//   lists over the kept dims, row-major. Negative dims count from the end.
// Results are MASE's fields, with "NA" (not_available) exactly where MASE returns "NA" (or None,
// which MASE's TOML writer also spells "NA"). Accumulation is in double (MASE: float32), so
// values agree with MASE to float32 rounding.
//
// Memory: variance_online, range_min_max, range_n_sigma (online) and abs_mean keep a constant
// state (a few doubles per kept position) however many samples arrive. record, variance_precise,
// range_n_sigma (precise) and range_quantile keep every sample, as MASE's do: their definitions
// (a concatenation, a two-pass variance, an order statistic) need the data.
//
// Where MASE's code fails outright (a crash rather than a result) the intended result is given
// instead, noted at each statistic.

#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/suggest.hpp>
#include <mase/core/tensor.hpp>
#include <mase/core/tensor_eigen.hpp>
#include <mase/ir/metadata.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <Eigen/Core>
#include <fmt/core.h>

namespace mase::stats {

// Which dimensions a statistic reduces (MASE's `dims`: "all", None or a list).
class stat_dims {
public:
  enum class mode : std::uint8_t { all, elementwise, listed };

  static stat_dims all() { return {}; }
  static stat_dims elementwise() {
    stat_dims d;
    d.mode_ = mode::elementwise;
    return d;
  }
  static stat_dims reduce(std::vector<int> dims) {
    stat_dims d;
    d.mode_ = mode::listed;
    d.listed_ = std::move(dims);
    return d;
  }

  mode how() const noexcept { return mode_; }
  const std::vector<int>& listed() const noexcept { return listed_; }

  friend bool operator==(const stat_dims&, const stat_dims&) = default;

private:
  mode mode_ = mode::all;
  std::vector<int> listed_;
};

// "all", "none" (element-wise) or "[1, 2]".
inline std::string to_string(const stat_dims& d) {
  switch (d.how()) {
    case stat_dims::mode::all: return "all";
    case stat_dims::mode::elementwise: return "none";
    case stat_dims::mode::listed: break;
  }
  std::string text = "[";
  for (std::size_t i = 0; i < d.listed().size(); ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", d.listed()[i]);
  return text + "]";
}

// range_n_sigma's variance: Welford's online algorithm or the recorded samples' exact variance.
enum class variance_mode : std::uint8_t { online, precise };

// --- options (MASE's constructor arguments; `device` has no meaning here) ------------------

struct record_options {
  static constexpr std::string_view name = "record";
  bool add_new_dim_before_concat = false;
};
struct variance_online_options {
  static constexpr std::string_view name = "variance_online";
  stat_dims dims = stat_dims::all();
};
struct variance_precise_options {
  static constexpr std::string_view name = "variance_precise";
  stat_dims dims = stat_dims::all();
};
struct range_n_sigma_options {
  static constexpr std::string_view name = "range_n_sigma";
  stat_dims dims = stat_dims::all();
  bool abs = false;
  variance_mode var_mode = variance_mode::online;
  double num_sigma = 3;
};
struct range_min_max_options {
  static constexpr std::string_view name = "range_min_max";
  stat_dims dims = stat_dims::all();
  bool abs = false;
};
struct range_quantile_options {
  static constexpr std::string_view name = "range_quantile";
  stat_dims dims = stat_dims::all();
  bool abs = false;
  double quantile = 0.975;
};
struct abs_mean_options {
  static constexpr std::string_view name = "abs_mean";
  stat_dims dims = stat_dims::all();
};

// A statistic with its options; the alternative chosen names the statistic.
using statistic_options = std::variant<record_options, variance_online_options, variance_precise_options,
                                       range_n_sigma_options, range_min_max_options, range_quantile_options,
                                       abs_mean_options>;

// MASE's statistic names (STAT_NAME_TO_CLS), in its order.
inline constexpr std::array<std::string_view, 7> statistic_names{
    record_options::name,        variance_online_options::name, variance_precise_options::name,
    range_n_sigma_options::name, range_min_max_options::name,   range_quantile_options::name,
    abs_mean_options::name};

inline std::string_view statistic_name(const statistic_options& o) {
  return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::name; }, o);
}

namespace detail {

inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

inline stat_value values_or_na(std::vector<double> v, bool available) {
  return available ? stat_value(std::move(v)) : stat_value(not_available{});
}

inline void check_sample(std::string_view stat, std::span<const float> values, const shape& s) {
  require(values.size() == static_cast<std::size_t>(s.numel()),
          "{}: a sample of shape {} has {} values, but {} were given", stat, to_string(s), s.numel(),
                      values.size());
}

// Offsets (in elements) of every index over the dims `which` of a row-major tensor of shape `s`,
// in row-major order over those dims.
inline std::vector<std::size_t> index_offsets(const shape& s, std::span<const int> which) {
  std::vector<std::size_t> strides(static_cast<std::size_t>(s.size()), 1);
  for (int d = s.size() - 2; d >= 0; --d)
    strides[static_cast<std::size_t>(d)] = strides[static_cast<std::size_t>(d) + 1] * static_cast<std::size_t>(s[d + 1]);
  std::vector<std::size_t> offsets{0};
  for (int d : which) {
    std::vector<std::size_t> next;
    next.reserve(offsets.size() * static_cast<std::size_t>(s[d]));
    for (std::size_t base : offsets)
      for (std::int64_t i = 0; i < s[d]; ++i) next.push_back(base + static_cast<std::size_t>(i) * strides[static_cast<std::size_t>(d)]);
    offsets = std::move(next);
  }
  return offsets;
}

// How a sample splits into kept positions (k) and reduced elements (r): element (k, r) is at
// kept_offsets[k] + reduced_offsets[r]. MASE permutes the kept dims first and flattens the
// reduced ones (sorted) into the last axis; this is the same enumeration without the copy.
struct reduction_layout {
  shape sample;
  shape kept;  // the kept dims' sizes: the shape of a list result
  std::vector<std::size_t> kept_offsets;
  std::vector<std::size_t> reduced_offsets{0};
  bool elementwise = true;  // nothing reduced: kept position k is element k

  std::size_t kept_count() const noexcept { return static_cast<std::size_t>(kept.numel()); }
  std::size_t reduced_count() const noexcept { return reduced_offsets.size(); }

  // Calls f(k, r, value) for every element, r varying fastest.
  template <class F>
  void for_each(const float* x, F&& f) const {
    if (elementwise) {
      for (std::size_t k = 0; k < kept_count(); ++k) f(k, std::size_t{0}, x[k]);
      return;
    }
    for (std::size_t k = 0; k < kept_offsets.size(); ++k)
      for (std::size_t r = 0; r < reduced_offsets.size(); ++r) f(k, r, x[kept_offsets[k] + reduced_offsets[r]]);
  }
};

// The dims a `listed` stat_dims reduces in a sample of rank `rank`: sorted, non-negative.
inline std::vector<int> resolve_dims(std::string_view stat, const stat_dims& dims, int rank) {
  std::vector<int> resolved;
  for (int d : dims.listed()) {
    require(d >= -rank && d < rank, "{} (dims {}): dim {} is out of range for a sample of rank {}", stat,
                                                to_string(dims), d, rank);
    resolved.push_back(d < 0 ? d + rank : d);
  }
  std::sort(resolved.begin(), resolved.end());
  require(std::adjacent_find(resolved.begin(), resolved.end()) == resolved.end(),
          "{} (dims {}): a dim is listed twice", stat, to_string(dims));
  return resolved;
}

inline reduction_layout make_layout(std::string_view stat, const stat_dims& dims, const shape& s) {
  reduction_layout layout;
  layout.sample = s;
  if (dims.how() != stat_dims::mode::listed) {
    layout.kept = s;
    return layout;
  }
  const std::vector<int> reduced = resolve_dims(stat, dims, s.size());
  std::vector<int> kept;
  for (int d = 0; d < s.size(); ++d)
    if (!std::binary_search(reduced.begin(), reduced.end(), d)) {
      kept.push_back(d);
      layout.kept.push_back(s[d]);
    }
  layout.elementwise = false;
  layout.kept_offsets = index_offsets(s, kept);
  layout.reduced_offsets = index_offsets(s, reduced);
  return layout;
}

// Keeps `layout` fitting the samples: rebuilt when a sample's shape changes, whose kept dims must
// still be those of the first sample (the state has one entry per kept position).
inline void fit_layout(std::string_view stat, const stat_dims& dims, reduction_layout& layout, bool first,
                       const shape& s) {
  if (!first && layout.sample == s) return;
  reduction_layout fresh = make_layout(stat, dims, s);
  require(first || fresh.kept == layout.kept,
          "{} (dims {}): a sample of shape {} does not fit the earlier samples of shape {}; {}", stat,
                      to_string(dims), to_string(s), to_string(layout.sample),
                      dims.how() == stat_dims::mode::elementwise ? "element-wise statistics need equal shapes"
                                                                 : "the kept dims must agree");
  layout = std::move(fresh);
}

// |x| into `buffer` (reused between samples), or x itself.
inline std::span<const float> maybe_abs(bool take_abs, std::span<const float> x, std::vector<float>& buffer) {
  if (!take_abs) return x;
  buffer.resize(x.size());
  Eigen::Map<Eigen::ArrayXf>(buffer.data(), static_cast<Eigen::Index>(buffer.size())) =
      Eigen::Map<const Eigen::ArrayXf>(x.data(), static_cast<Eigen::Index>(x.size())).abs();
  return buffer;
}

// Welford's update of one running mean / M2 pair (MASE's VarianceOnline._update).
inline void welford_step(double count_after, double x, double& mean, double& m2) noexcept {
  const double delta = x - mean;
  mean += delta / count_after;
  m2 += delta * (x - mean);
}

// Samples kept for statistics that need them all (MASE's Record and its subclasses). With
// `new_dim` every sample must have the same shape and the data is [samples, *shape]; without it
// samples are concatenated along their dim 0.
class sample_store {
public:
  void add(std::string_view stat, std::span<const float> x, const shape& s, bool new_dim) {
    check_sample(stat, x, s);
    if (samples_ == 0) {
      require(new_dim || s.size() > 0, "{}: a 0-d sample cannot be concatenated along dim 0; set "
                                                   "add_new_dim_before_concat",
                                                   stat);
      require(!new_dim || s.size() < shape::max_rank,
              "{}: a sample of rank {} leaves no room for the sample dim (at most {} dims)", stat, s.size(),
                          shape::max_rank);
      first_ = s;
    } else if (new_dim) {
      require(s == first_, "{}: a sample of shape {} does not match the earlier samples' shape {}; "
                                       "recorded samples are stacked and need equal shapes",
                                       stat, to_string(s), to_string(first_));
    } else {
      require(s.size() == first_.size() && std::equal(s.begin() + 1, s.end(), first_.begin() + 1),
              "{}: a sample of shape {} cannot be concatenated along dim 0 with the earlier samples of "
                          "shape {}; the dims after the first must agree",
                          stat, to_string(s), to_string(first_));
    }
    values_.insert(values_.end(), x.begin(), x.end());
    rows_ += new_dim ? 1 : s[0];
    ++samples_;
  }

  std::size_t samples() const noexcept { return samples_; }
  std::span<const float> values() const noexcept { return values_; }
  // One sample's shape (with new_dim) or the first sample's (without).
  const shape& sample_shape() const noexcept { return first_; }

  // The concatenation's shape.
  shape data_shape(bool new_dim) const {
    shape out;
    out.push_back(rows_);
    for (int d = new_dim ? 0 : 1; d < first_.size(); ++d) out.push_back(first_[d]);
    return out;
  }

private:
  std::vector<float> values_;
  shape first_;
  std::size_t samples_ = 0;
  std::int64_t rows_ = 0;
};

// Mean and unbiased variance (torch.mean, torch.var) of each kept position of a stacked
// [samples, *shape] store over the samples and the reduced dims.
inline void stacked_mean_var(const sample_store& store, const reduction_layout& layout, std::vector<double>& mean,
                             std::vector<double>& var) {
  const std::size_t kept = layout.kept_count();
  const std::size_t stride = static_cast<std::size_t>(store.sample_shape().numel());
  const double n = static_cast<double>(store.samples() * layout.reduced_count());
  mean.assign(kept, 0.0);
  var.assign(kept, 0.0);
  const float* data = store.values().data();
  for (std::size_t s = 0; s < store.samples(); ++s)
    layout.for_each(data + s * stride, [&](std::size_t k, std::size_t, float x) { mean[k] += x; });
  for (double& m : mean) m /= n;
  for (std::size_t s = 0; s < store.samples(); ++s)
    layout.for_each(data + s * stride, [&](std::size_t k, std::size_t, float x) {
      const double d = x - mean[k];
      var[k] += d * d;
    });
  for (double& v : var) v = n > 1 ? v / (n - 1) : nan;
}

// torch.lerp's formula (exact at both ends).
inline double lerp(double a, double b, double w) noexcept { return w < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w); }

// torch.quantile(v, q) with linear interpolation: the value at rank q·(n−1) of the sorted values,
// interpolated between its neighbours; NaN if any value is NaN. Reorders `v`.
inline double quantile(std::vector<float>& v, double q) {
  if (v.empty() || std::any_of(v.begin(), v.end(), [](float x) { return std::isnan(x); })) return nan;
  const double rank = q * static_cast<double>(v.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(static_cast<std::size_t>(std::ceil(rank)), v.size() - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(below), v.end());
  const double low = v[below];
  // After nth_element everything past `below` is ≥ it; the next order statistic is their minimum.
  const double high = above == below ? low : *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(below) + 1, v.end());
  return lerp(low, high, rank - static_cast<double>(below));
}

}  // namespace detail

// --- the statistics ---------------------------------------------------------------------------

// record: every sample, concatenated along dim 0 (after adding a leading dim when
// add_new_dim_before_concat). Fields: data (the values, row-major; data_shape() gives the shape),
// count (samples), size_in_bytes (4 per value). All "NA" before the first sample (MASE: None).
// Keeps every sample.
class record {
public:
  using options_type = record_options;
  static constexpr std::string_view name = record_options::name;

  record() = default;
  explicit record(record_options o) : options_(o) {}

  void update(const tensor& sample) { update(sample.values(), sample.shape()); }
  void update(std::span<const float> x, const shape& s) { store_.add(name, x, s, options_.add_new_dim_before_concat); }

  statistic compute() const {
    statistic out;
    if (store_.samples() == 0) {
      for (const char* field : {"data", "count", "size_in_bytes"}) out[field] = not_available{};
      return out;
    }
    out["data"] = std::vector<double>(store_.values().begin(), store_.values().end());
    out["count"] = static_cast<double>(store_.samples());
    out["size_in_bytes"] = static_cast<double>(store_.values().size() * sizeof(float));
    return out;
  }

  // The concatenation as a tensor (empty before the first sample).
  tensor data() const {
    if (store_.samples() == 0) return {};
    return tensor(data_shape(), std::vector<float>(store_.values().begin(), store_.values().end()));
  }
  shape data_shape() const { return store_.data_shape(options_.add_new_dim_before_concat); }

private:
  record_options options_;
  detail::sample_store store_;
};

// variance_online: Welford's running mean and variance, in constant memory. Fields: mean,
// variance (M2 / count, the biased variance), count; {mean: NA, variance: NA} while count < 2.
// - all: each sample is merged as a batch (Chan's update) as MASE does, **with MASE's quirk**:
//   the batch's M2 is taken as its unbiased variance times n (not n−1), so the result exceeds the
//   population variance of all elements by (Σ_b var_b)/N and depends on how the data is split
//   into samples; a one-element sample has an undefined unbiased variance and makes the result
//   NaN, as in MASE. count = number of elements.
// - elementwise: Welford per element over samples; count = samples.
// - listed: Welford per kept position over the reduced elements of every sample; count =
//   samples × reduced elements per sample.
class variance_online {
public:
  using options_type = variance_online_options;
  static constexpr std::string_view name = variance_online_options::name;

  variance_online() = default;
  explicit variance_online(variance_online_options o) : options_(std::move(o)) {}

  void update(const tensor& sample) { update(sample.values(), sample.shape()); }
  void update(std::span<const float> x, const shape& s) {
    detail::check_sample(name, x, s);
    if (options_.dims.how() == stat_dims::mode::all) {
      if (x.empty()) return;  // nothing to merge (MASE would poison its state with a NaN mean)
      const auto values = Eigen::Map<const Eigen::ArrayXf>(x.data(), static_cast<Eigen::Index>(x.size())).cast<double>();
      const auto n = static_cast<double>(x.size());
      const double batch_mean = values.sum() / n;
      const double batch_var = n > 1 ? (values - batch_mean).square().sum() / (n - 1) : detail::nan;
      const double delta = batch_mean - mean_;
      mean_ += delta * n / (count_ + n);
      m2_ += batch_var * n + delta * delta * count_ * n / (count_ + n);
      count_ += n;
      return;
    }
    detail::fit_layout(name, options_.dims, layout_, count_ == 0 && means_.empty(), s);
    means_.resize(layout_.kept_count(), 0.0);
    m2s_.resize(layout_.kept_count(), 0.0);
    const double before = count_;
    layout_.for_each(x.data(), [&](std::size_t k, std::size_t r, float v) {
      detail::welford_step(before + static_cast<double>(r) + 1, v, means_[k], m2s_[k]);
    });
    count_ += static_cast<double>(layout_.reduced_count());
  }

  statistic compute() const {
    statistic out;
    if (count_ < 2) {
      out["mean"] = not_available{};
      out["variance"] = not_available{};
      return out;
    }
    if (options_.dims.how() == stat_dims::mode::all) {
      out["mean"] = mean_;
      out["variance"] = m2_ / count_;
    } else {
      std::vector<double> var(m2s_.size());
      std::transform(m2s_.begin(), m2s_.end(), var.begin(), [&](double m) { return m / count_; });
      out["mean"] = means_;
      out["variance"] = std::move(var);
    }
    out["count"] = count_;
    return out;
  }

  double count() const noexcept { return count_; }

private:
  variance_online_options options_;
  double count_ = 0;
  double mean_ = 0;  // dims all
  double m2_ = 0;
  detail::reduction_layout layout_;  // elementwise and listed
  std::vector<double> means_;
  std::vector<double> m2s_;
};

// variance_precise: records the samples (stacked on a new leading dim) and computes torch.mean
// and the unbiased torch.var. Fields: mean, variance, count. Keeps every sample.
// - all: over every element; count = elements (variance NaN for a single element, as torch).
// - elementwise: over samples; count = samples; mean and variance NA while samples < 2.
// - listed: over samples and the reduced dims; count = samples × reduced elements; NA while
//   count < 2 (MASE means this but calls a misspelt `.nelements()` and fails).
// Before the first sample: {mean: NA, variance: NA, count: 0} (MASE fails on its empty data).
class variance_precise {
public:
  using options_type = variance_precise_options;
  static constexpr std::string_view name = variance_precise_options::name;

  variance_precise() = default;
  explicit variance_precise(variance_precise_options o) : options_(std::move(o)) {}

  void update(const tensor& sample) { update(sample.values(), sample.shape()); }
  void update(std::span<const float> x, const shape& s) {
    if (options_.dims.how() == stat_dims::mode::listed) (void)detail::resolve_dims(name, options_.dims, s.size());
    store_.add(name, x, s, true);
  }

  statistic compute() const {
    statistic out;
    if (store_.samples() == 0) {
      out["mean"] = not_available{};
      out["variance"] = not_available{};
      out["count"] = 0.0;
      return out;
    }
    if (options_.dims.how() == stat_dims::mode::all) {
      const std::span<const float> v = store_.values();
      const auto values = Eigen::Map<const Eigen::ArrayXf>(v.data(), static_cast<Eigen::Index>(v.size())).cast<double>();
      const auto n = static_cast<double>(v.size());
      const double mean = v.empty() ? detail::nan : values.sum() / n;
      out["mean"] = mean;
      out["variance"] = n > 1 ? (values - mean).square().sum() / (n - 1) : detail::nan;
      out["count"] = n;
      return out;
    }
    const detail::reduction_layout layout = detail::make_layout(name, options_.dims, store_.sample_shape());
    const double count = static_cast<double>(store_.samples() * layout.reduced_count());
    std::vector<double> mean, var;
    detail::stacked_mean_var(store_, layout, mean, var);
    out["mean"] = detail::values_or_na(std::move(mean), count >= 2);
    out["variance"] = detail::values_or_na(std::move(var), count >= 2);
    out["count"] = count;
    return out;
  }

private:
  variance_precise_options options_;
  detail::sample_store store_;
};

// range_n_sigma: mean ± num_sigma·σ from variance_online or variance_precise (var_mode), of |x|
// when abs. Fields: min, max, range (max − min), count; min, max and range NA when the variance
// is. Memory as the chosen variance statistic. Of MASE's forms only var_mode "precise" with dims
// "all" runs: its constructor resets the online count to None (Record's __init__ runs after
// VarianceOnline's), and σ is taken with math.sqrt, which accepts one number only. Here every
// form works, σ per position, with the count reported also when the variance is NA.
class range_n_sigma {
public:
  using options_type = range_n_sigma_options;
  static constexpr std::string_view name = range_n_sigma_options::name;

  range_n_sigma() : range_n_sigma(range_n_sigma_options{}) {}
  explicit range_n_sigma(range_n_sigma_options o)
      : options_(std::move(o)), online_({.dims = options_.dims}), precise_({.dims = options_.dims}) {}

  void update(const tensor& sample) { update(sample.values(), sample.shape()); }
  void update(std::span<const float> x, const shape& s) {
    detail::check_sample(name, x, s);
    const std::span<const float> v = detail::maybe_abs(options_.abs, x, abs_buffer_);
    if (options_.var_mode == variance_mode::online) online_.update(v, s);
    else precise_.update(v, s);
  }

  statistic compute() const {
    const bool online = options_.var_mode == variance_mode::online;
    const statistic var = online ? online_.compute() : precise_.compute();
    const stat_value count = var.contains("count") ? var.at("count") : stat_value(online_.count());
    statistic out;
    if (std::holds_alternative<not_available>(var.at("variance"))) {
      for (const char* field : {"min", "max", "range"}) out[field] = not_available{};
      out["count"] = count;
      return out;
    }
    const auto bounds = [&](double mean, double variance, double& lo, double& hi, double& range) {
      const double sigma = std::sqrt(variance);
      lo = mean - options_.num_sigma * sigma;
      hi = mean + options_.num_sigma * sigma;
      range = hi - lo;
    };
    if (const double* mean = std::get_if<double>(&var.at("mean"))) {
      double lo = 0, hi = 0, range = 0;
      bounds(*mean, std::get<double>(var.at("variance")), lo, hi, range);
      out["min"] = lo;
      out["max"] = hi;
      out["range"] = range;
    } else {
      const auto& means = std::get<std::vector<double>>(var.at("mean"));
      const auto& variances = std::get<std::vector<double>>(var.at("variance"));
      std::vector<double> lo(means.size()), hi(means.size()), range(means.size());
      for (std::size_t i = 0; i < means.size(); ++i) bounds(means[i], variances[i], lo[i], hi[i], range[i]);
      out["min"] = std::move(lo);
      out["max"] = std::move(hi);
      out["range"] = std::move(range);
    }
    out["count"] = count;
    return out;
  }

private:
  range_n_sigma_options options_;
  variance_online online_;
  variance_precise precise_;
  std::vector<float> abs_buffer_;
};

// range_min_max: running minimum and maximum (of |x| when abs), in constant memory; NaN
// propagates as in torch.min/max. Fields: min, max, range (NA while count < 2), count; min and
// max are NA before the first sample (MASE: None).
// - all: over every element; count = elements.
// - elementwise: per element over samples; count = samples.
// - listed: per kept position over the reduced dims of every sample; count = samples × reduced
//   elements per sample (MASE's listed form calls torch.min(x, dim) and fails).
class range_min_max {
public:
  using options_type = range_min_max_options;
  static constexpr std::string_view name = range_min_max_options::name;

  range_min_max() = default;
  explicit range_min_max(range_min_max_options o) : options_(std::move(o)) {}

  void update(const tensor& sample) { update(sample.values(), sample.shape()); }
  void update(std::span<const float> x, const shape& s) {
    detail::check_sample(name, x, s);
    const std::span<const float> v = detail::maybe_abs(options_.abs, x, abs_buffer_);
    if (options_.dims.how() == stat_dims::mode::all) {
      if (v.empty()) return;
      const Eigen::Map<const Eigen::ArrayXf> values(v.data(), static_cast<Eigen::Index>(v.size()));
      const double lo = values.minCoeff<Eigen::PropagateNaN>();
      const double hi = values.maxCoeff<Eigen::PropagateNaN>();
      min_ = count_ == 0 ? lo : keep_min(min_, lo);
      max_ = count_ == 0 ? hi : keep_max(max_, hi);
      count_ += static_cast<double>(v.size());
      return;
    }
    const bool first = mins_.empty();
    detail::fit_layout(name, options_.dims, layout_, first, s);
    if (first) {
      mins_.assign(layout_.kept_count(), std::numeric_limits<double>::infinity());
      maxs_.assign(layout_.kept_count(), -std::numeric_limits<double>::infinity());
    }
    layout_.for_each(v.data(), [&](std::size_t k, std::size_t, float value) {
      mins_[k] = keep_min(mins_[k], value);
      maxs_[k] = keep_max(maxs_[k], value);
    });
    count_ += static_cast<double>(layout_.reduced_count());
  }

  statistic compute() const {
    statistic out;
    const bool all = options_.dims.how() == stat_dims::mode::all;
    const bool seen = all ? count_ > 0 : !mins_.empty();
    if (!seen) {
      out["min"] = not_available{};
      out["max"] = not_available{};
    } else if (all) {
      out["min"] = min_;
      out["max"] = max_;
    } else {
      out["min"] = mins_;
      out["max"] = maxs_;
    }
    if (count_ < 2) {
      out["range"] = not_available{};
    } else if (all) {
      out["range"] = max_ - min_;
    } else {
      std::vector<double> range(mins_.size());
      for (std::size_t i = 0; i < range.size(); ++i) range[i] = maxs_[i] - mins_[i];
      out["range"] = std::move(range);
    }
    out["count"] = count_;
    return out;
  }

private:
  static double keep_min(double current, double x) noexcept { return std::isnan(x) || x < current ? x : current; }
  static double keep_max(double current, double x) noexcept { return std::isnan(x) || x > current ? x : current; }

  range_min_max_options options_;
  double count_ = 0;
  double min_ = 0;  // dims all
  double max_ = 0;
  detail::reduction_layout layout_;  // elementwise and listed
  std::vector<double> mins_;
  std::vector<double> maxs_;
  std::vector<float> abs_buffer_;
};

// range_quantile: min = the (1 − quantile) quantile, max = the quantile quantile (torch.quantile,
// linear interpolation) of the recorded samples (|x| when abs). Fields: min, max, range, count.
// Keeps every sample.
// - all: over every element; count = elements.
// - elementwise: per element over samples; count = samples; min, max, range NA while count < 2.
// - listed: per kept position over samples and reduced dims; count = samples × reduced elements.
// Before the first sample: min, max, range NA and count 0 (MASE fails on its empty data).
class range_quantile {
public:
  using options_type = range_quantile_options;
  static constexpr std::string_view name = range_quantile_options::name;

  range_quantile() = default;
  explicit range_quantile(range_quantile_options o) : options_(std::move(o)) {
    require(options_.quantile >= 0 && options_.quantile <= 1,
            "range_quantile: quantile must be in [0, 1], not {}", options_.quantile);
  }

  void update(const tensor& sample) { update(sample.values(), sample.shape()); }
  void update(std::span<const float> x, const shape& s) {
    detail::check_sample(name, x, s);
    if (options_.dims.how() == stat_dims::mode::listed) (void)detail::resolve_dims(name, options_.dims, s.size());
    // |x| is taken as samples arrive rather than over the data at the end: the same values.
    store_.add(name, detail::maybe_abs(options_.abs, x, abs_buffer_), s, true);
  }

  statistic compute() const {
    statistic out;
    const double low_q = 1 - options_.quantile;
    const double high_q = options_.quantile;
    if (store_.samples() == 0) {
      for (const char* field : {"min", "max", "range"}) out[field] = not_available{};
      out["count"] = 0.0;
      return out;
    }
    if (options_.dims.how() == stat_dims::mode::all) {
      std::vector<float> values(store_.values().begin(), store_.values().end());
      const double lo = detail::quantile(values, low_q);
      const double hi = detail::quantile(values, high_q);
      out["min"] = lo;
      out["max"] = hi;
      out["range"] = hi - lo;
      out["count"] = static_cast<double>(values.size());
      return out;
    }
    const detail::reduction_layout layout = detail::make_layout(name, options_.dims, store_.sample_shape());
    const std::size_t per_position = store_.samples() * layout.reduced_count();
    const auto count = static_cast<double>(per_position);
    if (options_.dims.how() == stat_dims::mode::elementwise && count < 2) {
      for (const char* field : {"min", "max", "range"}) out[field] = not_available{};
      out["count"] = count;
      return out;
    }
    // Gather each kept position's values (over samples, then reduced elements) and select.
    const std::size_t kept = layout.kept_count();
    const std::size_t stride = static_cast<std::size_t>(store_.sample_shape().numel());
    std::vector<float> gathered(kept * per_position);
    const float* data = store_.values().data();
    for (std::size_t s = 0; s < store_.samples(); ++s)
      layout.for_each(data + s * stride, [&](std::size_t k, std::size_t r, float v) {
        gathered[k * per_position + s * layout.reduced_count() + r] = v;
      });
    std::vector<double> lo(kept), hi(kept), range(kept);
    std::vector<float> slice;
    for (std::size_t k = 0; k < kept; ++k) {
      const auto begin = gathered.begin() + static_cast<std::ptrdiff_t>(k * per_position);
      slice.assign(begin, begin + static_cast<std::ptrdiff_t>(per_position));
      lo[k] = detail::quantile(slice, low_q);
      hi[k] = detail::quantile(slice, high_q);
      range[k] = hi[k] - lo[k];
    }
    out["min"] = std::move(lo);
    out["max"] = std::move(hi);
    out["range"] = std::move(range);
    out["count"] = count;
    return out;
  }

private:
  range_quantile_options options_;
  detail::sample_store store_;
  std::vector<float> abs_buffer_;
};

// abs_mean: the running mean of |x| (used by MASE's ternary quantizer), in constant memory.
// Fields: abs_mean, count; only {abs_mean: NA} while count < 2.
// - all: over every element; count = elements.
// - elementwise: per element over samples; count = samples.
// - listed: per kept position over the reduced elements of every sample.
class abs_mean {
public:
  using options_type = abs_mean_options;
  static constexpr std::string_view name = abs_mean_options::name;

  abs_mean() = default;
  explicit abs_mean(abs_mean_options o) : options_(std::move(o)) {}

  void update(const tensor& sample) { update(sample.values(), sample.shape()); }
  void update(std::span<const float> x, const shape& s) {
    detail::check_sample(name, x, s);
    if (options_.dims.how() == stat_dims::mode::all) {
      if (x.empty()) return;
      const auto n = static_cast<double>(x.size());
      const double batch_mean =
          Eigen::Map<const Eigen::ArrayXf>(x.data(), static_cast<Eigen::Index>(x.size())).abs().cast<double>().sum() / n;
      mean_ = (count_ * mean_ + n * batch_mean) / (count_ + n);
      count_ += n;
      return;
    }
    detail::fit_layout(name, options_.dims, layout_, means_.empty(), s);
    means_.resize(layout_.kept_count(), 0.0);
    const double before = count_;
    layout_.for_each(x.data(), [&](std::size_t k, std::size_t r, float v) {
      const double c = before + static_cast<double>(r) + 1;
      means_[k] = ((c - 1) * means_[k] + std::fabs(static_cast<double>(v))) / c;
    });
    count_ += static_cast<double>(layout_.reduced_count());
  }

  statistic compute() const {
    statistic out;
    if (count_ < 2) {
      out["abs_mean"] = not_available{};
      return out;
    }
    if (options_.dims.how() == stat_dims::mode::all) out["abs_mean"] = mean_;
    else out["abs_mean"] = means_;
    out["count"] = count_;
    return out;
  }

private:
  abs_mean_options options_;
  double count_ = 0;
  double mean_ = 0;
  detail::reduction_layout layout_;
  std::vector<double> means_;
};

// --- chosen at run time ------------------------------------------------------------------------

namespace detail {
using any_statistic_alternatives =
    std::variant<record, variance_online, variance_precise, range_n_sigma, range_min_max, range_quantile, abs_mean>;

// The statistic whose options_type is Options, made from them.
template <class Options>
any_statistic_alternatives make_alternative(const Options& o) {
  any_statistic_alternatives out;
  [&]<class... Stats>(std::type_identity<std::variant<Stats...>>) {
    ([&] {
      if constexpr (std::is_same_v<typename Stats::options_type, Options>) out.template emplace<Stats>(o);
    }(), ...);
  }(std::type_identity<any_statistic_alternatives>{});
  return out;
}
}  // namespace detail

// Any of the statistics, made from its options.
class any_statistic {
public:
  explicit any_statistic(const statistic_options& options)
      : stat_(std::visit([](const auto& o) { return detail::make_alternative(o); }, options)) {}

  std::string_view name() const {
    return std::visit([](const auto& s) { return std::decay_t<decltype(s)>::name; }, stat_);
  }
  void update(const tensor& sample) { update(sample.values(), sample.shape()); }
  void update(std::span<const float> x, const shape& s) {
    std::visit([&](auto& stat) { stat.update(x, s); }, stat_);
  }
  statistic compute() const {
    return std::visit([](const auto& stat) { return stat.compute(); }, stat_);
  }

private:
  detail::any_statistic_alternatives stat_;
};

// --- from a name and an option map (the TOML and CLI layer) -----------------------------------

// An option's value as a config file spells it: dims = "all" | "none" | [1, 2]; abs = true;
// var_mode = "online" | "precise"; num_sigma = 3; quantile = 0.975; add_new_dim_before_concat.
// MASE's `device` is accepted (a string) and ignored: everything runs where the tensors are.
using option_value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>>;
using option_map = ordered_map<option_value>;

namespace detail {

inline std::string describe(const option_value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return fmt::format("\"{}\"", x);
        else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          std::string text = "[";
          for (std::size_t i = 0; i < x.size(); ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", x[i]);
          return text + "]";
        } else return fmt::format("{}", x);
      },
      v);
}

// Reads the options of one statistic, rejecting keys it does not take.
class option_reader {
public:
  option_reader(std::string_view stat, const option_map& options, std::initializer_list<std::string_view> known)
      : stat_(stat), options_(options) {
    std::vector<std::string_view> accepted(known);
    accepted.push_back("device");
    for (const auto& [key, value] : options) {
      if (std::find(accepted.begin(), accepted.end(), key) == accepted.end()) {
        std::string list;
        for (std::string_view k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
        const std::string near = nearest_names(key, accepted);
        throw error(fmt::format("statistic {} has no option \"{}\"{}; its options are {} (and device, ignored)", stat,
                                key, near.empty() ? "" : fmt::format(" (did you mean {}?)", near),
                                list.empty() ? "none" : list));
      }
      if (key == "device")
        require(std::holds_alternative<std::string>(value),
                "statistic {}: option \"device\" must be a string, not {}", stat, describe(value));
    }
  }

  void read(std::string_view key, bool& out) const {
    if (const option_value* v = find(key)) out = as<bool>(key, *v, "true or false");
  }
  void read(std::string_view key, double& out) const {
    if (const option_value* v = find(key)) {
      if (const auto* i = std::get_if<std::int64_t>(v)) out = static_cast<double>(*i);
      else out = as<double>(key, *v, "a number");
    }
  }
  void read(std::string_view key, variance_mode& out) const {
    const option_value* v = find(key);
    if (v == nullptr) return;
    const std::string& text = as<std::string>(key, *v, "\"online\" or \"precise\"");
    if (text == "online") out = variance_mode::online;
    else if (text == "precise") out = variance_mode::precise;
    else fail(key, *v, "\"online\" or \"precise\"");
  }
  void read(std::string_view key, stat_dims& out) const {
    const option_value* v = find(key);
    if (v == nullptr) return;
    constexpr std::string_view expected = "\"all\", \"none\" (element-wise) or a list of dims";
    if (const auto* text = std::get_if<std::string>(v)) {
      // "NA" is how MASE's TOML files write None.
      if (*text == "all") out = stat_dims::all();
      else if (*text == "none" || *text == "None" || *text == "NA") out = stat_dims::elementwise();
      else fail(key, *v, expected);
    } else if (const auto* list = std::get_if<std::vector<std::int64_t>>(v)) {
      std::vector<int> dims;
      for (std::int64_t d : *list) {
        if (d < -shape::max_rank || d >= shape::max_rank) fail(key, *v, expected);
        dims.push_back(static_cast<int>(d));
      }
      out = stat_dims::reduce(std::move(dims));
    } else {
      fail(key, *v, expected);
    }
  }

private:
  const option_value* find(std::string_view key) const {
    const auto it = options_.find(key);
    return it == options_.end() ? nullptr : &it->second;
  }
  template <class T>
  const T& as(std::string_view key, const option_value& v, std::string_view expected) const {
    if (const T* x = std::get_if<T>(&v)) return *x;
    fail(key, v, expected);
  }
  [[noreturn]] void fail(std::string_view key, const option_value& v, std::string_view expected) const {
    throw error(fmt::format("statistic {}: option \"{}\" must be {}, not {}", stat_, key, expected, describe(v)));
  }

  std::string_view stat_;
  const option_map& options_;
};

}  // namespace detail

// The statistic called `name` (MASE's stat names) with the given options; mase::error naming an
// unknown statistic or option, or an option of the wrong kind.
inline statistic_options parse_statistic(std::string_view name, const option_map& options = {}) {
  if (name == record_options::name) {
    const detail::option_reader in(name, options, {"add_new_dim_before_concat"});
    record_options o;
    in.read("add_new_dim_before_concat", o.add_new_dim_before_concat);
    return o;
  }
  if (name == variance_online_options::name) {
    const detail::option_reader in(name, options, {"dims"});
    variance_online_options o;
    in.read("dims", o.dims);
    return o;
  }
  if (name == variance_precise_options::name) {
    const detail::option_reader in(name, options, {"dims"});
    variance_precise_options o;
    in.read("dims", o.dims);
    return o;
  }
  if (name == range_n_sigma_options::name) {
    const detail::option_reader in(name, options, {"dims", "abs", "var_mode", "num_sigma"});
    range_n_sigma_options o;
    in.read("dims", o.dims);
    in.read("abs", o.abs);
    in.read("var_mode", o.var_mode);
    in.read("num_sigma", o.num_sigma);
    return o;
  }
  if (name == range_min_max_options::name) {
    const detail::option_reader in(name, options, {"dims", "abs"});
    range_min_max_options o;
    in.read("dims", o.dims);
    in.read("abs", o.abs);
    return o;
  }
  if (name == range_quantile_options::name) {
    const detail::option_reader in(name, options, {"dims", "abs", "quantile"});
    range_quantile_options o;
    in.read("dims", o.dims);
    in.read("abs", o.abs);
    in.read("quantile", o.quantile);
    require(o.quantile >= 0 && o.quantile <= 1,
            "statistic range_quantile: option \"quantile\" must be in [0, 1], not {}", o.quantile);
    return o;
  }
  if (name == abs_mean_options::name) {
    const detail::option_reader in(name, options, {"dims"});
    abs_mean_options o;
    in.read("dims", o.dims);
    return o;
  }
  std::string list;
  for (std::string_view n : statistic_names) list += fmt::format("{}{}", list.empty() ? "" : ", ", n);
  const std::string near = nearest_names(name, statistic_names);
  throw error(fmt::format("unknown statistic \"{}\"{}; the statistics are {}", name,
                          near.empty() ? "" : fmt::format(" (did you mean {}?)", near), list));
}

inline any_statistic make_statistic(std::string_view name, const option_map& options = {}) {
  return any_statistic(parse_statistic(name, options));
}

// Statistics by name, as MASE's weight_statistics / activation_statistics dicts give them.
inline std::vector<statistic_options> parse_statistics(const ordered_map<option_map>& by_name) {
  std::vector<statistic_options> out;
  for (const auto& [name, options] : by_name) out.push_back(parse_statistic(name, options));
  return out;
}

}  // namespace mase::stats
