// NCCL communicator for --backend cuda --ranks mpi: one process per GPU,
// bootstrapped through MPI (rank 0's ncclGetUniqueId is broadcast over MPI).
// Values stay in host memory between ops (the kernels run on the CPU except
// matmul): each call copies to the device, runs the NCCL op on a stream and
// copies back, polling the stream against the timeout (a stuck op aborts the
// NCCL communicators and throws). Sub-communicators come from ncclCommSplit in
// prepare(). Point-to-point: NCCL has no tags and matches messages per peer
// pair in order, so each message carries a header (tag, element type, shape)
// that the receiver checks; sends are enqueued without waiting, as ir's
// buffered send, but a peer that never receives stalls the sender's stream.
#pragma once
#include <memory>

#include "exec/comm.h"

namespace parity::exec {

// `boot` is this process's MPI communicator (make_mpi_comm); it carries the
// bootstrap and result collection and is owned by the returned communicator.
// With `bf16`, collective results are rounded to bf16 on the device. Throws
// Unsupported without a CUDA build or a GPU.
std::unique_ptr<Communicator> make_nccl_comm(std::unique_ptr<Communicator> boot, bool bf16);

}  // namespace parity::exec
