// run_search_mpi under mpirun (2 or 3 ranks): the master's study equals a single process's for
// the same seed, trial by trial, its journal holds every trial once; with 3 ranks, rank 2 stalls
// on its first trial past the timeout, which is re-issued to another rank and the study is still
// the same. Exit status 0 on success. usage: mpirun -np N test_mpi OUTPUT_DIR
#include <mase/ir/builder.hpp>
#include <mase/search/mpi.hpp>
#include <mase/search/study.hpp>

#include "../search_fixtures.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

using namespace mase;
using namespace mase::search;
using namespace mase_search_test;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    const std::filesystem::path dir = argc > 1 ? argv[1] : ".";
    const graph g = small_mlp();
    const evaluation_data data = small_data();
    const search_space space = widths_only_space(g);
    // A user's objective: rank 2 stalls on its first trial, longer than the timeout below.
    bool stalled = false;
    objective stall{"stall", direction::minimize, [&](const trial_view&) {
                      if (rank == 2 && !stalled) {
                        stalled = true;
                        std::this_thread::sleep_for(std::chrono::seconds(4));
                      }
                      return 0.0;
                    }};
    const std::vector<objective> objs{objectives::output_mse(), objectives::average_bitwidth(), stall};
    const std::filesystem::path journal = dir / fmt::format("mpi_{}_ranks.jsonl", size);
    if (rank == 0) {
      std::filesystem::create_directories(dir);
      std::filesystem::remove(journal);
    }
    tpe_sampler sampler;
    const search_options options{.trials = 40, .batch_size = 6, .seed = 7, .journal = rank == 0 ? journal : ""};
    const study distributed = run_search_mpi(g, space, sampler, objs, data, options, {.worker_timeout_seconds = 1.5});
    if (rank == 0) {
      tpe_sampler again;
      search_options local = options;
      local.journal.clear();
      const study single = run_search(g, space, again, objs, data, local);
      bool same = distributed.trials.size() == 40 && single.trials.size() == 40;
      for (std::size_t i = 0; same && i < 40; ++i)
        same = distributed.trials[i].number == i && distributed.trials[i].choices == single.trials[i].choices &&
               distributed.trials[i].values == single.trials[i].values;
      std::ifstream lines(journal);
      std::size_t count = 0;
      for (std::string line; std::getline(lines, line);) ++count;
      fmt::print("mpi: {} ranks, {} trials, {} the single process's; journal {} lines; {} re-issued\n", size,
                 distributed.trials.size(), same ? "identical to" : "DIFFERENT from", count, distributed.reissued);
      if (!same || count != 41 || distributed.reissued != (size >= 3 ? 1u : 0u)) status = 1;
    }
    // An error only the master meets (another search's journal) still lets the workers go.
    search_options other = options;
    other.seed = 8;
    bool refused = false;
    try {
      tpe_sampler third;
      (void)run_search_mpi(g, space, third, objs, data, other, {.worker_timeout_seconds = 1.5});
    } catch (const error& e) {
      refused = rank == 0 && std::string(e.what()).find("written by a different search") != std::string::npos;
    }
    if (rank == 0) {
      fmt::print("mpi: another search's journal {} on rank 0; the workers were released\n",
                 refused ? "refused" : "NOT refused");
      if (!refused) status = 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_mpi (rank %d): %s\n", rank, e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
