#pragma once
// Metadata equality (ir/metadata.hpp declares it): inline in the header-only mode, compiled once
// in mase::mase (src/vocabulary.cpp) otherwise.

#include <mase/ir/metadata.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/ir/metadata.hpp> instead"
#endif

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <tuple>
#include <variant>
#include <vector>

namespace mase {

namespace detail {
// Metadata compares bit for bit, as tensors do: a NaN statistic equals itself and -0 differs from
// +0, so a graph equals its reloaded checkpoint exactly when nothing was lost.
inline bool same_field(double a, double b) noexcept { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }
inline bool same_field(const tensor& a, const tensor& b) { return a.identical(b); }
template <class T>
bool same_field(const T& a, const T& b);
template <class T>
bool same_field(const std::optional<T>& a, const std::optional<T>& b);
template <class T>
bool same_field(const std::vector<T>& a, const std::vector<T>& b);
template <class... T>
bool same_field(const std::variant<T...>& a, const std::variant<T...>& b);
template <class T>
bool same_field(const ordered_map<T>& a, const ordered_map<T>& b);

template <class T>
bool same_field(const T& a, const T& b) {
  return a == b;  // a described struct's own operator==, or the value's
}
template <class T>
bool same_field(const std::optional<T>& a, const std::optional<T>& b) {
  return a.has_value() == b.has_value() && (!a || same_field(*a, *b));
}
template <class T>
bool same_field(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const T& x, const T& y) { return same_field(x, y); });
}
template <class... T>
bool same_field(const std::variant<T...>& a, const std::variant<T...>& b) {
  return a.index() == b.index() &&
         std::visit([&](const auto& x) { return same_field(x, std::get<std::decay_t<decltype(x)>>(b)); }, a);
}
// Same keys in the same order, values the same.
template <class T>
bool same_field(const ordered_map<T>& a, const ordered_map<T>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
           return x.first == y.first && same_field(x.second, y.second);
         });
}
// Every listed field the same.
template <described_metadata S>
bool same_fields(const S& a, const S& b) {
  return std::apply([&](const auto&... f) { return (same_field(a.*f.member, b.*f.member) && ...); }, S::fields());
}
}  // namespace detail

MASE_COMPILED_INLINE bool operator==(const tensor_meta& a, const tensor_meta& b) { return detail::same_fields(a, b); }
MASE_COMPILED_INLINE bool operator==(const common_meta& a, const common_meta& b) { return detail::same_fields(a, b); }
MASE_COMPILED_INLINE bool operator==(const software_entry& a, const software_entry& b) { return detail::same_fields(a, b); }
MASE_COMPILED_INLINE bool operator==(const software_meta& a, const software_meta& b) { return detail::same_fields(a, b); }
MASE_COMPILED_INLINE bool operator==(const interface_entry& a, const interface_entry& b) { return detail::same_fields(a, b); }
MASE_COMPILED_INLINE bool operator==(const hardware_meta& a, const hardware_meta& b) { return detail::same_fields(a, b); }
MASE_COMPILED_INLINE bool operator==(const node_metadata& a, const node_metadata& b) { return detail::same_fields(a, b); }

// Each fields() names every member of its struct (checked once, where the definitions compile).
namespace detail {
// The members of an aggregate, counted by how many initializers (each of any type) it takes.
struct any_member {
  template <class T>
  operator T() const;  // only named in unevaluated initializers
};
template <class T, class... Initializers>
consteval std::size_t aggregate_members() {
  if constexpr (requires { T{Initializers{}..., any_member{}}; }) return aggregate_members<T, Initializers..., any_member>();
  else return sizeof...(Initializers);
}
template <described_metadata S>
inline constexpr bool lists_every_member = std::tuple_size_v<decltype(S::fields())> == aggregate_members<S>();
}  // namespace detail

static_assert(detail::lists_every_member<tensor_meta>, "tensor_meta::fields() must list every member");
static_assert(detail::lists_every_member<common_meta>, "common_meta::fields() must list every member");
static_assert(detail::lists_every_member<software_entry>, "software_entry::fields() must list every member");
static_assert(detail::lists_every_member<software_meta>, "software_meta::fields() must list every member");
static_assert(detail::lists_every_member<interface_entry>, "interface_entry::fields() must list every member");
static_assert(detail::lists_every_member<hardware_meta>, "hardware_meta::fields() must list every member");
static_assert(detail::lists_every_member<node_metadata>, "node_metadata::fields() must list every member");

}  // namespace mase
