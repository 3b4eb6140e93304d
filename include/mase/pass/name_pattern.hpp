#pragma once
// A regular expression over node names (quantize's by = "regex_name" keys), safe to take from a
// user's config: matching a name takes time polynomial in its length whatever the pattern (a key
// such as "((s*)*)*x" would otherwise backtrack for ages), and a pattern long enough to exhaust
// the stack while compiling is refused. ECMAScript syntax, matched against the whole name.

#include <mase/core/error.hpp>

#include <cstddef>
#include <algorithm>
#include <regex>
#include <string>
#include <string_view>

#include <fmt/core.h>

namespace mase {

// A template only so that std::regex is compiled where a pattern is used (quantize.hpp's pass).
template <class Char = char>
class basic_name_pattern {
public:
  // Node names are short; libstdc++'s regex compiler recurses per nesting level, so a bound on
  // the pattern keeps it far from the stack's end.
  static constexpr std::size_t max_length = 1000;

  // mase::error naming `where` if `pattern` is too long or not a valid regular expression.
  basic_name_pattern(std::basic_string_view<Char> pattern, std::string_view where) {
    if (pattern.size() > max_length)
      throw error(fmt::format("{}: the regular expression is {} characters long; mase takes at most {}", where,
                              pattern.size(), max_length));
    // libstdc++ reads a repetition count into a long without an overflow check (undefined for
    // {99999999999999999999}); a count of more than four digits is refused first.
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] != Char('{')) continue;
      std::size_t digits = 0, longest = 0;
      for (std::size_t j = i + 1; j < pattern.size() && (pattern[j] == Char(',') || (pattern[j] >= Char('0') && pattern[j] <= Char('9'))); ++j) {
        digits = pattern[j] == Char(',') ? 0 : digits + 1;
        longest = std::max(longest, digits);
      }
      if (longest > 4)
        throw error(fmt::format("{}: the regular expression holds a repetition count of more than 4 digits; mase takes "
                                "counts up to 9999", where));
    }
    try {
      regex_ = std::basic_regex<Char>(std::basic_string<Char>(pattern), syntax);
    } catch (const std::regex_error& x) {
      throw error(fmt::format("{}: \"{}\" is not a valid regular expression ({})", where, pattern, x.what()));
    }
  }

  bool matches(std::basic_string_view<Char> name) const { return std::regex_match(name.begin(), name.end(), regex_); }

private:
#ifdef __GLIBCXX__
  // libstdc++'s breadth-first matcher: polynomial time (it refuses back-references instead).
  static constexpr std::regex_constants::syntax_option_type syntax =
      std::regex_constants::ECMAScript | std::regex_constants::__polynomial;
#else
  static constexpr std::regex_constants::syntax_option_type syntax = std::regex_constants::ECMAScript;
#endif
  std::basic_regex<Char> regex_;
};

using name_pattern = basic_name_pattern<char>;

}  // namespace mase
