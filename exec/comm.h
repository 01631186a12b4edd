// Communicator: what one rank of a running plan uses to talk to the others, with
// NCCL semantics (collectives over an ordered group of global ranks, tagged
// point-to-point). Backends: in-process threads (comm_threads.h), MPI
// (comm_mpi.h), NCCL over MPI (comm_nccl.h). Every wait is bounded by the
// timeout: a call that waits longer throws CommError naming the rank, the op and
// the peers it waits for, so a deadlocking plan ends instead of hanging.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace parity::exec {

template <class F>
using Tensor = ir::Tensor<F>;

// Global ranks in group order: a member's position is its index here (as with
// ir::Mesh::group_along), which is also its rank in an MPI/NCCL sub-communicator.
using Group = std::vector<int64_t>;

enum class ReduceOp { sum, avg, max };
const char* reduce_op_name(ReduceOp op);
std::optional<ReduceOp> parse_reduce_op(const std::string& s);

enum class CollKind { allreduce, allgather, reduce_scatter, all_to_all, broadcast };
const char* coll_kind_name(CollKind k);

// A communication failure: timeout, mismatched calls, a peer that gave up.
struct CommError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A wait past the timeout.
struct CommTimeout : CommError {
  using CommError::CommError;
};

// A call abandoned because another rank failed first (its error is the cause).
struct PeerFailed : CommError {
  using CommError::CommError;
};

// A backend or device this build or machine lacks (exit code 3 in the CLI).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One collective call as a backend sees it. Dims are normalized (non-negative).
struct Collective {
  CollKind kind = CollKind::allreduce;
  ReduceOp op = ReduceOp::sum;            // allreduce, reduce_scatter
  int64_t dim = 0;                        // allgather, reduce_scatter
  int64_t split_dim = 0, concat_dim = 0;  // all_to_all
  int64_t root = 0;                       // broadcast: position in the group
  Group group;
  std::string label;  // the op, for messages: `allreduce -> o (mb=1)`

  // Everything the members must agree on, for mismatch messages.
  std::string signature() const;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  virtual const char* backend() const = 0;

  void set_timeout(double seconds) { timeout_s_ = seconds; }
  double timeout() const { return timeout_s_; }
  // How messages name a rank, e.g. `rank 1 (pp=1)`; default `rank 1`.
  void set_rank_names(std::function<std::string(int64_t)> f) { namer_ = std::move(f); }
  std::string rank_name(int64_t r) const;

  // Announces, on every rank in the same order, the partitions of the world into
  // groups that collectives will use. MPI and NCCL create their sub-communicators
  // here, where all ranks take part (a split is collective over the whole world).
  virtual void prepare(const std::vector<std::vector<Group>>& /*partitions*/) {}

  template <class F>
  Tensor<F> allreduce(const Tensor<F>& x, ReduceOp op, const Group& g, const std::string& label) {
    return run(Collective{CollKind::allreduce, op, 0, 0, 0, 0, g, label}, x);
  }
  template <class F>
  Tensor<F> allgather(const Tensor<F>& x, int64_t dim, const Group& g, const std::string& label) {
    return run(Collective{CollKind::allgather, ReduceOp::sum, dim, 0, 0, 0, g, label}, x);
  }
  template <class F>
  Tensor<F> reduce_scatter(const Tensor<F>& x, int64_t dim, ReduceOp op, const Group& g,
                           const std::string& label) {
    return run(Collective{CollKind::reduce_scatter, op, dim, 0, 0, 0, g, label}, x);
  }
  template <class F>
  Tensor<F> all_to_all(const Tensor<F>& x, int64_t split_dim, int64_t concat_dim, const Group& g,
                       const std::string& label) {
    return run(
        Collective{CollKind::all_to_all, ReduceOp::sum, 0, split_dim, concat_dim, 0, g, label}, x);
  }
  template <class F>
  Tensor<F> broadcast(const Tensor<F>& x, int64_t root, const Group& g, const std::string& label) {
    return run(Collective{CollKind::broadcast, ReduceOp::sum, 0, 0, 0, root, g, label}, x);
  }
  // Checks the call (membership, divisibility) and hands it to the backend.
  template <class F>
  Tensor<F> run(Collective c, const Tensor<F>& x) {
    check(c, x.shape);
    return collective(c, x);
  }

  // Buffered: returns once the value is on its way (as ir's `send`).
  template <class F>
  void send(const Tensor<F>& x, int64_t peer, int64_t tag, const std::string& label) {
    check_peer(peer, label);
    do_send(x, peer, tag, label);
  }
  // Blocks until the message with this tag from `peer` arrives; a message of
  // another shape or element type is an error.
  template <class F>
  Tensor<F> recv(const std::vector<int64_t>& shape, int64_t peer, int64_t tag,
                 const std::string& label) {
    check_peer(peer, label);
    Tensor<F> out;
    out.shape = shape;
    do_recv(out, peer, tag, label);
    return out;
  }

  // Result collection: `root` gets every rank's bytes in rank order (others get {}).
  virtual std::vector<std::string> gather_bytes(const std::string& mine, int64_t root) = 0;
  // Every rank gets `root`'s bytes.
  virtual std::string broadcast_bytes(const std::string& data, int64_t root) = 0;
  // Tells the peers that this rank failed, so they stop waiting for it where the
  // backend can (in-process); elsewhere they end by their own timeout.
  virtual void abort(const std::string& /*why*/) {}

 protected:
  virtual Tensor<float> collective(const Collective& c, const Tensor<float>& x) = 0;
  virtual Tensor<double> collective(const Collective& c, const Tensor<double>& x) = 0;
  virtual void do_send(const Tensor<float>& x, int64_t peer, int64_t tag,
                       const std::string& label) = 0;
  virtual void do_send(const Tensor<double>& x, int64_t peer, int64_t tag,
                       const std::string& label) = 0;
  // `out.shape` holds the expected shape.
  virtual void do_recv(Tensor<float>& out, int64_t peer, int64_t tag, const std::string& label) = 0;
  virtual void do_recv(Tensor<double>& out, int64_t peer, int64_t tag,
                       const std::string& label) = 0;

  // `rank 1 (pp=1): timed out after 2 s at 'recv -> a' waiting for rank 0 (pp=0) (tag 3)`
  CommTimeout timeout_error(const std::string& label, const std::vector<int64_t>& waiting_for,
                            const std::string& detail = "") const;
  // Prefixes this rank's name.
  CommError error(const std::string& msg) const;

 private:
  void check(Collective& c, const std::vector<int64_t>& shape) const;
  void check_peer(int64_t peer, const std::string& label) const;

  double timeout_s_ = 30;
  std::function<std::string(int64_t)> namer_;
};

// Layout helpers shared by the backends that move flat buffers (MPI, NCCL):
// chunk i of `x` along `dim` (of n equal chunks), every chunk contiguous in order.
template <class F>
std::vector<F> pack_chunks(const Tensor<F>& x, int64_t dim, int64_t n);
// The inverse view: n blocks of `block_shape`, concatenated along `dim`.
template <class F>
Tensor<F> concat_blocks(const std::vector<F>& flat, const std::vector<int64_t>& block_shape,
                        int64_t dim, int64_t n);
// The shape of one of n chunks along `dim`.
std::vector<int64_t> chunk_shape(std::vector<int64_t> shape, int64_t dim, int64_t n);

}  // namespace parity::exec
