// The search's optional headers, as a user's project links them (find_package(mase
// COMPONENTS pagmo glpk mpi): mase::pagmo, mase::glpk, mase::mpi).
#include <mase/search/ilp.hpp>
#include <mase/search/mpi.hpp>
#include <mase/search/nsga2.hpp>

#include <cstdio>
#include <string>

int main() {
  const std::string nsga2(mase::search::make_nsga2_sampler()->name());
  const std::string ilp(mase::search::make_ilp_sampler()->name());
  int version = 0, subversion = 0;
  MPI_Get_version(&version, &subversion);  // one of the calls MPI allows before MPI_Init
  std::printf("consumer_search_solvers: the %s and %s samplers, GLPK %s, MPI %d.%d\n", nsga2.c_str(), ilp.c_str(),
              glp_version(), version, subversion);
  return nsga2 == "nsga2" && ilp == "ilp" ? 0 : 1;
}
