#include "tools/stage_procs.h"

#include <string>

#include "exec/comm_mpi.h"

#ifdef PARITY_HAVE_MPI
#include <mpi.h>
#endif

namespace parity::cli {

StageProcesses::StageProcesses() {
#ifdef PARITY_HAVE_MPI
  // The launcher's count is read first, so that a plain run never starts MPI.
  if (exec::launcher_size() <= 1) return;
  owns_ = exec::mpi_init();
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
