#pragma once
// mase::format: the runtime twin of every format descriptor, so that a graph loaded from a file
// can hold any format. It holds the same descriptor structs the compile-time types use, and a
// format is validated when it is made (mase::error naming the format and the rule).

#include <mase/format/binary.hpp>
#include <mase/format/block.hpp>
#include <mase/format/fixed.hpp>
#include <mase/format/log.hpp>
#include <mase/format/minifloat.hpp>

#include <string>
#include <type_traits>
#include <variant>

namespace mase {

using format_variant = std::variant<fixed_fmt, minifloat_fmt, log_fmt, binary_fmt, ternary_fmt, residual_sign_fmt,
                                    block_fp_fmt, block_minifloat_fmt, block_log_fmt, mxint_fmt, mx_fmt>;

namespace detail {
template <class T, class Variant>
struct is_alternative_of : std::false_type {};
template <class T, class... Ts>
struct is_alternative_of<T, std::variant<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};
}  // namespace detail

// (Not `requires { std::get<T>(v); }`: libstdc++ declares get<T> for every T, so clang accepts any type.)
template <class T>
concept format_descriptor = detail::is_alternative_of<std::remove_cv_t<T>, format_variant>::value;

template <class T>
concept elementwise_descriptor =
    format_descriptor<T> && (std::is_same_v<T, fixed_fmt> || std::is_same_v<T, minifloat_fmt> ||
                             std::is_same_v<T, log_fmt> || std::is_same_v<T, binary_fmt> ||
                             std::is_same_v<T, ternary_fmt> || std::is_same_v<T, residual_sign_fmt>);

template <class T>
concept block_descriptor = format_descriptor<T> && !elementwise_descriptor<T>;

std::string to_string(const format_variant& f);

class format {
public:
  // Implicit on purpose: any descriptor is a format. Throws mase::error if it is invalid.
  template <format_descriptor D>
  format(const D& descriptor) : value_(descriptor) {  // NOLINT(google-explicit-constructor)
    validate(descriptor);
  }

  // Any descriptor held in a variant. Throws mase::error if it is invalid.
  explicit format(const format_variant& descriptor) : value_(descriptor) {
    std::visit([](const auto& d) { validate(d); }, descriptor);
  }

  const format_variant& variant() const noexcept { return value_; }

  template <format_descriptor D>
  bool holds() const noexcept { return std::holds_alternative<D>(value_); }

  template <format_descriptor D>
  const D& get() const { return std::get<D>(value_); }

  template <class F>
  decltype(auto) visit(F&& f) const { return std::visit(std::forward<F>(f), value_); }

  bool is_elementwise() const noexcept {
    return std::visit([](const auto& d) { return elementwise_descriptor<std::remove_cvref_t<decltype(d)>>; }, value_);
  }

  friend bool operator==(const format&, const format&) = default;

private:
  template <class D>
  static void validate(const D& descriptor) {
    try {
      check(descriptor);
    } catch (const error& e) {
      throw error(to_string(format_variant(descriptor)) + " is not a valid format: " + e.what());
    }
  }

  format_variant value_;
};

inline std::string to_string(const format& f) { return to_string(f.variant()); }

}  // namespace mase

#include <mase/format/format_string.hpp>
