#pragma once
// mase::error: the one exception type of the library. Its message names what was wrong
// (file, node, field, format string) and how to fix it.

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/core.h>

namespace mase {

class error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Throws mase::error when `condition` is false. Kept out of line of the hot paths:
// callers validate once per array or per format, never per element.
inline void require(bool condition, const std::string& message) {
  if (!condition) throw error(message);
}

// The same with a message formatted (fmt) only when it is thrown, so a check that passes
// allocates nothing: require(ok, "node {} has no input {}", name, i).
template <class Arg, class... Args>
void require(bool condition, fmt::format_string<Arg, Args...> message, Arg&& arg, Args&&... args) {
  if (!condition) throw error(fmt::format(message, std::forward<Arg>(arg), std::forward<Args>(args)...));
}

}  // namespace mase
