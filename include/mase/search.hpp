#pragma once
// Exploration: mixed-precision search over per-node formats (docs/search.md). Not part of
// mase.hpp: it compiles the evaluator, the quantize pass, nlohmann::json and toml++.
//
//   search_space (space.hpp)   what may vary: per node, type or pattern, MASE config key lists
//   samplers (sampler.hpp)     random, grid, TPE, qmc (qmc.hpp), NSGA-III (nsga3.hpp)
//   objectives (objective.hpp) accuracy, loss, agreement, output MSE, bits, BOPs, size, yours
//   run_search (study.hpp)     batches on threads, the journal (journal.hpp), the Pareto front
//   search_config (config.hpp) MASE's search TOML
//   pareto_csv, pareto_svg (report.hpp) the outputs
#include <mase/search/config.hpp>
#include <mase/search/hardware_objective.hpp>
#include <mase/search/journal.hpp>
#include <mase/search/nsga3.hpp>
#include <mase/search/objective.hpp>
#include <mase/search/pareto.hpp>
#include <mase/search/qmc.hpp>
#include <mase/search/report.hpp>
#include <mase/search/sampler.hpp>
#include <mase/search/space.hpp>
#include <mase/search/strategy.hpp>
#include <mase/search/study.hpp>
