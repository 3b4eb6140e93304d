#pragma once
// "Did you mean …?" for unknown names (nodes, ops): the candidates nearest to a misspelt name.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

namespace detail {
// Levenshtein distance.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}
}  // namespace detail

// The candidates nearest to `name` ("fc1 or fc2"), at most three, when they are near enough to be
// a typo (at most max(2, |name|/3) edits); empty otherwise.
template <class Candidates>
std::string nearest_names(std::string_view name, const Candidates& candidates) {
  std::vector<std::pair<std::size_t, std::string_view>> scored;
  for (const auto& candidate : candidates) {
    const std::string_view c(candidate);
    scored.emplace_back(detail::edit_distance(name, c), c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string near;
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  for (std::size_t i = 0; i < scored.size() && i < 3; ++i)
    if (scored[i].first == scored[0].first && scored[i].first <= limit)
      near += fmt::format("{}{}", near.empty() ? "" : " or ", scored[i].second);
  return near;
}

}  // namespace mase
