// The thread pool's contract: every index once, even ranges, errors passed to the caller, and
// calls made while the pool is busy run on the calling thread.

#include <mase/core/thread_pool.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

using mase::thread_pool;

TEST_CASE("parallel_for covers the range once, in even contiguous parts", "[threads]") {
  thread_pool pool(4);
  CHECK(pool.size() == 4);
  for (std::size_t count : {0u, 1u, 3u, 4u, 10u, 1001u})
    for (std::size_t threads : {1u, 2u, 4u, 9u}) {
      std::vector<std::atomic<int>> seen(count);
      std::vector<std::atomic<std::size_t>> part_sizes(4);
      pool.parallel_for(count, threads, [&](std::size_t first, std::size_t last, std::size_t part) {
        for (std::size_t i = first; i < last; ++i) ++seen[i];
        part_sizes[part] += last - first;
      });
      for (const auto& s : seen) CHECK(s == 1);
      const std::size_t parts = std::min({threads, pool.size(), count});
      for (std::size_t p = 0; p < 4; ++p) {
        const std::size_t expected = p < parts ? (p + 1) * count / parts - p * count / parts : 0;
        CHECK(part_sizes[p] == expected);
      }
    }
}

TEST_CASE("parallel_for rethrows a range's error and stays usable", "[threads]") {
  thread_pool pool(3);
  CHECK_THROWS_AS(pool.parallel_for(9, 3,
                                    [](std::size_t first, std::size_t, std::size_t) {
                                      if (first >= 6) throw std::runtime_error("the last part fails");
                                    }),
                  std::runtime_error);
  std::atomic<int> sum = 0;
  pool.parallel_for(9, 3, [&](std::size_t first, std::size_t last, std::size_t) {
    for (std::size_t i = first; i < last; ++i) sum += static_cast<int>(i);
  });
  CHECK(sum == 36);
}

TEST_CASE("a parallel_for inside a range runs on its caller's thread", "[threads]") {
  thread_pool pool(2);
  std::atomic<int> inner_calls = 0, inner_parts = 0;
  pool.parallel_for(2, 2, [&](std::size_t, std::size_t, std::size_t) {
    pool.parallel_for(8, 2, [&](std::size_t first, std::size_t last, std::size_t part) {
      ++inner_calls;
      inner_parts += static_cast<int>(part);
      CHECK(first == 0);
      CHECK(last == 8);
    });
  });
  CHECK(inner_calls == 2);
  CHECK(inner_parts == 0);
}
