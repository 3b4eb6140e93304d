#pragma once
// ordered_map: string keys in insertion order, as MASE's OrderedDicts (args are data_in_0,
// data_in_1, weight, bias in call order). Small maps, so a vector of pairs searched linearly.

#include <mase/core/error.hpp>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

template <class T>
class ordered_map {
public:
  using value_type = std::pair<std::string, T>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  ordered_map() = default;
  // {{"x", x}, {"y", y}}; a repeated key keeps its first position and its last value.
  ordered_map(std::initializer_list<value_type> entries) {
    for (const value_type& e : entries) insert_or_assign(e.first, e.second);
  }

  iterator begin() noexcept { return entries_.begin(); }
  iterator end() noexcept { return entries_.end(); }
  const_iterator begin() const noexcept { return entries_.begin(); }
  const_iterator end() const noexcept { return entries_.end(); }
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }

  iterator find(std::string_view key) noexcept {
    return std::find_if(begin(), end(), [&](const value_type& e) { return e.first == key; });
  }
  const_iterator find(std::string_view key) const noexcept {
    return std::find_if(begin(), end(), [&](const value_type& e) { return e.first == key; });
  }
  bool contains(std::string_view key) const noexcept { return find(key) != end(); }

  // The entry for `key`; a mase::error listing the keys there are if it is missing.
  T& at(std::string_view key) { return const_cast<T&>(std::as_const(*this).at(key)); }
  const T& at(std::string_view key) const {
    const auto it = find(key);
    if (it == end()) throw error(fmt::format("no entry \"{}\"; the entries are: {}", key, key_list()));
    return it->second;
  }

  // The entry for `key`, appended (default-constructed) if it is missing.
  T& operator[](std::string_view key) {
    const auto it = find(key);
    if (it != end()) return it->second;
    return entries_.emplace_back(std::string(key), T{}).second;
  }

  // Sets `key` to `value`, keeping its position if it exists.
  T& insert_or_assign(std::string_view key, T value) { return (*this)[key] = std::move(value); }

  bool erase(std::string_view key) {
    const auto it = find(key);
    if (it == end()) return false;
    entries_.erase(it);
    return true;
  }

  std::string key_list() const {
    if (entries_.empty()) return "(none)";
    std::string list;
    for (const auto& e : entries_) list += (list.empty() ? "" : ", ") + e.first;
    return list;
  }

  friend bool operator==(const ordered_map&, const ordered_map&) = default;

private:
  std::vector<value_type> entries_;
};

}  // namespace mase
