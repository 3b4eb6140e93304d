#include <mase/core/error.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>

TEST_CASE("mase::require throws mase::error carrying the message, and nothing when the condition holds") {
  CHECK_NOTHROW(mase::require(true, "unused"));
  CHECK_THROWS_AS(mase::require(false, "layer fc1: weight must be 2-D"), mase::error);
  CHECK_THROWS_WITH(mase::require(false, "layer fc1: weight must be 2-D"), "layer fc1: weight must be 2-D");
  // Catchable as the standard exception it derives from, for programs that embed mase.
  CHECK_THROWS_AS(mase::require(false, "x"), std::runtime_error);
}
