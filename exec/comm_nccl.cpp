#include "exec/comm_nccl.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "exec/cuda_kernels.h"
#include "ir/semantics.h"

namespace parity::exec {

namespace {
using Clock = std::chrono::steady_clock;

template <class F>
ncclDataType_t nccl_type() {
  return std::is_same_v<F, float> ? ncclFloat32 : ncclFloat64;
}

// Point-to-point header: tag, element code (0 f32, 1 f64), rank, dims.
constexpr int kHeaderWords = 16;

std::string shape_str(const std::vector<int64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ","));
}

class NcclComm : public Communicator {
 public:
  NcclComm(std::unique_ptr<Communicator> boot, bool bf16) : boot_(std::move(boot)), bf16_(bf16) {
    int ndev = cuda::device_count();
    if (ndev == 0) throw Unsupported("no CUDA device (--backend cuda)");
    // One GPU per process: the launcher's node-local rank picks it. NCCL
    // refuses two ranks of one communicator on one device ("invalid usage"),
    // so more ranks on a node than it has GPUs is said up front, by name.
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!local) local = std::getenv("MPI_LOCALRANKID");  // MPICH, Intel MPI
    const char* nlocal = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!nlocal) nlocal = std::getenv("MPI_LOCALNRANKS");
    if (nlocal && std::atoll(nlocal) > ndev)
      throw Unsupported(fmt::format(
          "--backend cuda with --ranks mpi needs one GPU per rank: {} ranks on this node, {} "
          "visible CUDA device{} (run the plan's ranks by threads, or on more GPUs)",
          nlocal, ndev, ndev == 1 ? "" : "s"));
    int dev = static_cast<int>((local ? std::atoll(local) : boot_->rank()) % ndev);
    cuda_check(cudaSetDevice(dev), "cudaSetDevice");
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ncclUniqueId id;
    std::string bytes;
    if (boot_->rank() == 0) {
      nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
      bytes.assign(reinterpret_cast<const char*>(&id), sizeof id);
    }
    bytes = boot_->broadcast_bytes(bytes, 0);  // MPI_Bcast of the id
    if (bytes.size() != sizeof id) throw error("bad NCCL unique id from rank 0");
    std::memcpy(&id, bytes.data(), sizeof id);
    nccl_check(ncclCommInitRank(&world_, static_cast<int>(boot_->size()), id,
                                static_cast<int>(boot_->rank())),
               "ncclCommInitRank");
  }

  ~NcclComm() override {
    for (auto& [g, c] : groups_) broken_ ? ncclCommAbort(c) : ncclCommDestroy(c);
    if (world_) broken_ ? ncclCommAbort(world_) : ncclCommDestroy(world_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int64_t rank() const override { return boot_->rank(); }
  int64_t size() const override { return boot_->size(); }
  const char* backend() const override { return "nccl"; }

  void prepare(const std::vector<std::vector<Group>>& partitions) override {
    for (const auto& part : partitions) {
      int color = NCCL_SPLIT_NOCOLOR, key = 0;
      for (size_t i = 0; i < part.size(); ++i) {
        auto it = std::find(part[i].begin(), part[i].end(), rank());
        if (it != part[i].end())
          color = static_cast<int>(i), key = static_cast<int>(it - part[i].begin());
      }
      ncclComm_t c = nullptr;
      nccl_check(ncclCommSplit(world_, color, key, &c, nullptr), "ncclCommSplit");
      if (!c) continue;
      const Group& g = part[static_cast<size_t>(color)];
      if (groups_.count(g))
        ncclCommDestroy(c);
      else
        groups_[g] = c;
    }
  }

  std::vector<std::string> gather_bytes(const std::string& mine, int64_t root) override {
    boot_->set_timeout(timeout());
    return boot_->gather_bytes(mine, root);
  }
  std::string broadcast_bytes(const std::string& data, int64_t root) override {
    boot_->set_timeout(timeout());
    return boot_->broadcast_bytes(data, root);
  }

 protected:
  Tensor<float> collective(const Collective& c, const Tensor<float>& x) override {
    return coll(c, x);
  }
  Tensor<double> collective(const Collective& c, const Tensor<double>& x) override {
    return coll(c, x);
  }
  void do_send(const Tensor<float>& x, int64_t peer, int64_t tag,
               const std::string& label) override {
    send_t(x, peer, tag, label);
  }
  void do_send(const Tensor<double>& x, int64_t peer, int64_t tag,
               const std::string& label) override {
    send_t(x, peer, tag, label);
  }
  void do_recv(Tensor<float>& out, int64_t peer, int64_t tag, const std::string& label) override {
    recv_t(out, peer, tag, label);
  }
  void do_recv(Tensor<double>& out, int64_t peer, int64_t tag, const std::string& label) override {
    recv_t(out, peer, tag, label);
  }

 private:
  void cuda_check(cudaError_t e, const char* what) const {
    if (e != cudaSuccess) throw error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
  }
  void nccl_check(ncclResult_t r, const char* what) const {
    if (r != ncclSuccess && r != ncclInProgress)
      throw error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
  }

  // A device buffer freed on the stream, after the work queued before it.
  struct Dev {
    Dev(size_t bytes, cudaStream_t s) : s(s) {
      if (bytes && cudaMallocAsync(&p, bytes, s) != cudaSuccess)
        throw std::runtime_error("cudaMallocAsync failed");
    }
    ~Dev() {
      if (p) cudaFreeAsync(p, s);
    }
    Dev(const Dev&) = delete;
    Dev& operator=(const Dev&) = delete;
    void* p = nullptr;
    cudaStream_t s;
  };

  // Waits for the stream, polling against the timeout. On timeout the NCCL
  // communicators are aborted (their kernels would never finish) and unusable.
  void sync(const std::string& label, const std::vector<int64_t>& peers,
            const std::string& detail = "") {
    auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(timeout()));
    for (int spins = 0;; ++spins) {
      cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) cuda_check(e, "cudaStreamQuery");
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(world_, &async);
      if (async != ncclSuccess && async != ncclInProgress) nccl_check(async, label.c_str());
      if (Clock::now() > end) {
        broken_ = true;
        for (auto& [g, c] : groups_) ncclCommAbort(c);
        ncclCommAbort(world_);
        groups_.clear();
        world_ = nullptr;
        throw timeout_error(label, peers, detail);
      }
      if (spins > 200) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    pending_.clear();  // sends queued earlier are complete
  }

  void usable() const {
    if (broken_) throw error("NCCL communicators were aborted after an earlier timeout");
  }

  ncclComm_t group_comm(const Collective& c) const {
    auto it = groups_.find(c.group);
    if (it == groups_.end())
      throw error(fmt::format(
          "the group of '{}' was not announced by prepare() (NCCL splits need every rank)",
          c.label));
    return it->second;
  }

  template <class F>
  Tensor<F> coll(const Collective& c, const Tensor<F>& x) {
    usable();
    ncclComm_t comm = group_comm(c);
    const int64_t n = static_cast<int64_t>(c.group.size()), cnt = x.size();
    const ncclDataType_t t = nccl_type<F>();
    const ncclRedOp_t op = c.op == ReduceOp::max ? ncclMax : ncclSum;
    std::vector<int64_t> peers;
    for (int64_t m : c.group)
      if (m != rank()) peers.push_back(m);
    // Chunked layouts are packed on the host so every NCCL buffer is contiguous.
    std::vector<F> host = c.kind == CollKind::reduce_scatter ? pack_chunks(x, c.dim, n)
                          : c.kind == CollKind::all_to_all   ? pack_chunks(x, c.split_dim, n)
                                                             : x.data;
    size_t out_n = c.kind == CollKind::allgather        ? static_cast<size_t>(cnt * n)
                   : c.kind == CollKind::reduce_scatter ? static_cast<size_t>(cnt / n)
                                                        : static_cast<size_t>(cnt);
    Dev in(host.size() * sizeof(F), stream_), out(out_n * sizeof(F), stream_);
    F* dout = static_cast<F*>(out.p);
    cuda_check(cudaMemcpyAsync(in.p, host.data(), host.size() * sizeof(F), cudaMemcpyHostToDevice,
                               stream_),
               "cudaMemcpyAsync");
    size_t cn = static_cast<size_t>(cnt);
    switch (c.kind) {
      case CollKind::allreduce:
        nccl_check(ncclAllReduce(in.p, dout, cn, t, op, comm, stream_), "ncclAllReduce");
        break;
      case CollKind::allgather:
        nccl_check(ncclAllGather(in.p, dout, cn, t, comm, stream_), "ncclAllGather");
        break;
      case CollKind::reduce_scatter:
        nccl_check(ncclReduceScatter(in.p, dout, cn / static_cast<size_t>(n), t, op, comm, stream_),
                   "ncclReduceScatter");
        break;
      case CollKind::all_to_all: {
        size_t block = cn / static_cast<size_t>(n);
        nccl_check(ncclGroupStart(), "ncclGroupStart");
        for (int64_t j = 0; j < n; ++j) {
          nccl_check(ncclSend(static_cast<F*>(in.p) + j * static_cast<int64_t>(block), block, t,
                              static_cast<int>(j), comm, stream_),
                     "ncclSend");
          nccl_check(ncclRecv(dout + j * static_cast<int64_t>(block), block, t, static_cast<int>(j),
                              comm, stream_),
                     "ncclRecv");
        }
        nccl_check(ncclGroupEnd(), "ncclGroupEnd");
        break;
      }
      case CollKind::broadcast:
        nccl_check(ncclBroadcast(in.p, dout, cn, t, static_cast<int>(c.root), comm, stream_),
                   "ncclBroadcast");
        break;
    }
    // avg as ir::eval_collective: the sum times 1/n (ncclAvg divides instead).
    if (c.op == ReduceOp::avg &&
        (c.kind == CollKind::allreduce || c.kind == CollKind::reduce_scatter))
      cuda::scale_device(dout, out_n, static_cast<F>(1.0 / static_cast<double>(n)), stream_);
    if constexpr (std::is_same_v<F, float>)
      if (bf16_) cuda::round_bf16_device(dout, out_n, stream_);
    std::vector<F> res(out_n);
    cuda_check(
        cudaMemcpyAsync(res.data(), dout, out_n * sizeof(F), cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync");
    sync(c.label, peers);
    switch (c.kind) {
      case CollKind::allgather:
        return concat_blocks(res, x.shape, c.dim, n);
      case CollKind::all_to_all:
        return concat_blocks(res, chunk_shape(x.shape, c.split_dim, n), c.concat_dim, n);
      case CollKind::reduce_scatter: {
        Tensor<F> r;
        r.shape = chunk_shape(x.shape, c.dim, n);
        r.data = std::move(res);
        return r;
      }
      default: {
        Tensor<F> r;
        r.shape = x.shape;
        r.data = std::move(res);
        return r;
      }
    }
  }

  template <class F>
  void send_t(const Tensor<F>& x, int64_t peer, int64_t tag, const std::string& label) {
    usable();
    if (x.rank() > kHeaderWords - 3)
      throw error(fmt::format("'{}' sends a value of rank above {}", label, kHeaderWords - 3));
    auto head = std::make_shared<std::vector<int64_t>>(kHeaderWords, 0);
    (*head)[0] = tag, (*head)[1] = std::is_same_v<F, float> ? 0 : 1,
    (*head)[2] = static_cast<int64_t>(x.rank());
    for (size_t k = 0; k < x.rank(); ++k) (*head)[3 + k] = x.shape[k];
    auto body = std::make_shared<std::vector<F>>(x.data);
    auto dh = std::make_shared<Dev>(kHeaderWords * sizeof(int64_t), stream_);
    auto db = std::make_shared<Dev>(body->size() * sizeof(F), stream_);
    cuda_check(cudaMemcpyAsync(dh->p, head->data(), kHeaderWords * sizeof(int64_t),
                               cudaMemcpyHostToDevice, stream_),
               "cudaMemcpyAsync");
    cuda_check(cudaMemcpyAsync(db->p, body->data(), body->size() * sizeof(F),
                               cudaMemcpyHostToDevice, stream_),
               "cudaMemcpyAsync");
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    nccl_check(ncclSend(dh->p, kHeaderWords, ncclInt64, static_cast<int>(peer), world_, stream_),
               "ncclSend");
    nccl_check(
        ncclSend(db->p, body->size(), nccl_type<F>(), static_cast<int>(peer), world_, stream_),
        "ncclSend");
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    // Not waited for (buffered semantics): the buffers live until the next sync.
    pending_.push_back(head);
    pending_.push_back(body);
    pending_.push_back(dh);
    pending_.push_back(db);
  }

  template <class F>
  void recv_t(Tensor<F>& out, int64_t peer, int64_t tag, const std::string& label) {
    usable();
    std::vector<int64_t> head(kHeaderWords, 0);
    {
      Dev dh(kHeaderWords * sizeof(int64_t), stream_);
      nccl_check(ncclRecv(dh.p, kHeaderWords, ncclInt64, static_cast<int>(peer), world_, stream_),
                 "ncclRecv");
      cuda_check(cudaMemcpyAsync(head.data(), dh.p, kHeaderWords * sizeof(int64_t),
                                 cudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync");
      sync(label, {peer}, fmt::format("(tag {})", tag));
    }
    std::vector<int64_t> shape(
        head.begin() + 3, head.begin() + 3 + std::clamp<int64_t>(head[2], 0, kHeaderWords - 3));
    int64_t want = std::is_same_v<F, float> ? 0 : 1;
    if (head[0] != tag)
      throw error(
          fmt::format("expects tag {} from {} at '{}' but the next message carries tag {} (NCCL "
                      "delivers in order)",
                      tag, rank_name(peer), label, head[0]));
    if (head[1] != want || shape != out.shape)
      throw error(fmt::format("receives {}{} at '{}' but {} sends {}{}", want ? "f64" : "f32",
                              shape_str(out.shape), label, rank_name(peer), head[1] ? "f64" : "f32",
                              shape_str(shape)));
    out.data.resize(static_cast<size_t>(ir::sem::num_el(out.shape)));
    Dev db(out.data.size() * sizeof(F), stream_);
    nccl_check(
        ncclRecv(db.p, out.data.size(), nccl_type<F>(), static_cast<int>(peer), world_, stream_),
        "ncclRecv");
    cuda_check(cudaMemcpyAsync(out.data.data(), db.p, out.data.size() * sizeof(F),
                               cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync");
    sync(label, {peer}, fmt::format("(tag {})", tag));
  }

  std::unique_ptr<Communicator> boot_;
  bool bf16_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t world_ = nullptr;
  std::map<Group, ncclComm_t> groups_;
  std::vector<std::shared_ptr<void>> pending_;
  bool broken_ = false;
};
}  // namespace

std::unique_ptr<Communicator> make_nccl_comm(std::unique_ptr<Communicator> boot, bool bf16) {
  return std::make_unique<NcclComm>(std::move(boot), bf16);
}

}  // namespace parity::exec
