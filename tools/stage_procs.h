// `mpirun -np N parity verify ...`: the processes of one MPI job share the
// proving of distinct stages (verify::StageShards); process 0 prints the
// verdict and writes the reports. Outside mpirun (or with one process) this
// does nothing.
#pragma once
#include "verify/staged.h"

namespace parity::cli {

class StageProcesses {
 public:
  StageProcesses();  // initializes MPI when launched by mpirun with more than one process
  ~StageProcesses();
  StageProcesses(const StageProcesses&) = delete;
  StageProcesses& operator=(const StageProcesses&) = delete;

  bool active() const { return count_ > 1; }
  int index() const { return index_; }
  verify::StageShards shards() const;

 private:
  int index_ = 0, count_ = 1;
  bool owns_ = false;
};

}  // namespace parity::cli
