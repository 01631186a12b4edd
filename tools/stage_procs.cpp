#include "tools/stage_procs.h"

#include <cstdlib>
#include <string>

#ifdef PARITY_HAVE_MPI
#include <mpi.h>
#endif

namespace parity::cli {

namespace {
// The launcher's process count, read before MPI is initialized so that a
// plain run never starts MPI.
int launched_size() {
  for (const char* k : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"})
    if (const char* v = std::getenv(k)) return std::atoi(v);
  return 1;
}
}  // namespace

StageProcesses::StageProcesses() {
#ifdef PARITY_HAVE_MPI
  if (launched_size() <= 1) return;
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    owns_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &index_);
  MPI_Comm_size(MPI_COMM_WORLD, &count_);
#endif
}

StageProcesses::~StageProcesses() {
#ifdef PARITY_HAVE_MPI
  if (owns_) MPI_Finalize();
#endif
}

verify::StageShards StageProcesses::shards() const {
  verify::StageShards s;
  s.index = index_;
  s.count = count_;
#ifdef PARITY_HAVE_MPI
  if (count_ > 1)
    s.sum = [](std::vector<double>& v) {
      MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    };
#endif
  return s;
}

}  // namespace parity::cli
