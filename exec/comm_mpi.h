// MPI communicator: one process per rank (run under mpirun). Collectives use
// sub-communicators made by MPI_Comm_split in prepare() and cached per group;
// they run as non-blocking MPI calls polled against the timeout, so a deadlock
// ends with an error instead of a hang. Point-to-point messages carry their
// shape, element type and the sender's op, so a mismatch is named.
#pragma once
#include <memory>

#include "exec/comm.h"

namespace parity::exec {

// Whether this build has MPI (PARITY_HAVE_MPI).
bool mpi_built();
// Initializes MPI if needed (finalized when the communicator is destroyed) and
// returns this process's communicator over MPI_COMM_WORLD. Throws Unsupported
// without MPI.
std::unique_ptr<Communicator> make_mpi_comm();
// This process's rank in MPI_COMM_WORLD when MPI was started by a launcher
// (mpirun sets OMPI_COMM_WORLD_RANK / PMI_RANK), else -1; reads no MPI state.
int64_t launcher_rank();
// The launcher's process count (OMPI_COMM_WORLD_SIZE, PMI_SIZE, ...), 1 when
// the process was not started by one; reads no MPI state.
int64_t launcher_size();
// Initializes MPI (threads funneled) unless it already is: true when this call
// did, and the caller then finalizes it. False without MPI.
bool mpi_init();

}  // namespace parity::exec
