#pragma once
// The mase tool's own option strings, parsed without the rest of the tool: NAME=VALUE
// assignments (--input NAME=FILE, --input-shape NAME=DIMS) and --input-shape's dimension lists.
// Kept apart from cli.hpp so that the fuzz target (tests/fuzz/fuzz_cli_options.cpp) parses
// exactly what the tool parses. Every malformed string is a usage_error quoting it.

#include <mase/core/ordered_map.hpp>
#include <mase/core/shape.hpp>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace mase_cli {

// Bad usage found after CLI11's own checks (e.g. options that need each other): reported like
// CLI11's errors, with exit status 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "NAME=VALUE" split at the first '='; a usage_error naming `option` when malformed.
inline std::pair<std::string, std::string> split_assignment(std::string_view text, std::string_view option) {
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0 || equals + 1 == text.size())
    throw usage_error(fmt::format("{} takes NAME=VALUE, not \"{}\"", option, text));
  return {std::string(text.substr(0, equals)), std::string(text.substr(equals + 1))};
}

// "1,3,224,224" → [1, 3, 224, 224]; `whole` is the option's text, quoted in errors.
inline mase::shape parse_dims(std::string_view text, std::string_view whole) {
  mase::shape dims;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    std::int64_t d = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (ec != std::errc() || end != item.data() + item.size() || d < 1)
      throw usage_error(fmt::format("--input-shape \"{}\": \"{}\" is not a positive integer; write the dimensions "
                                    "as NAME=1,3,224,224",
                                    whole, item));
    if (dims.size() == mase::shape::max_rank)
      throw usage_error(fmt::format("--input-shape \"{}\": at most {} dimensions", whole, mase::shape::max_rank));
    dims.push_back(d);
    if (comma == std::string_view::npos) return dims;
    start = comma + 1;
  }
}

// Every --input-shape option, by input name (what onnx::import_options::input_shapes takes).
inline mase::ordered_map<mase::shape> parse_input_shapes(const std::vector<std::string>& options) {
  mase::ordered_map<mase::shape> shapes;
  for (const std::string& text : options) {
    const auto [name, dims] = split_assignment(text, "--input-shape");
    if (shapes.contains(name)) throw usage_error(fmt::format("--input-shape gives \"{}\" twice", name));
    shapes.insert_or_assign(name, parse_dims(dims, text));
  }
  return shapes;
}

}  // namespace mase_cli
