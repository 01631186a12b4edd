// In-process communicator: one thread per rank, sharing mailboxes (tagged
// point-to-point) and per-group rendezvous rounds (collectives), guarded by one
// mutex and condition variable. Collective results come from ir::eval_collective,
// so their semantics are the verifier's.
#pragma once
#include <memory>

#include "exec/comm.h"

namespace parity::exec {

class ThreadWorld {
 public:
  explicit ThreadWorld(int64_t size);
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  int64_t size() const;
  // The communicator of `rank`, to be used by one thread; it shares the world's state.
  std::unique_ptr<Communicator> comm(int64_t rank);
  // The first failure of any rank, "" while none failed.
  std::string failure() const;

  struct State;

 private:
  std::shared_ptr<State> st_;
};

}  // namespace parity::exec
