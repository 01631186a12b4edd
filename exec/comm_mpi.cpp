#include "exec/comm_mpi.h"

#include <cstdlib>

#ifdef PARITY_HAVE_MPI
#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <thread>

#include "ir/semantics.h"
#endif

namespace parity::exec {

int64_t launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* s = std::getenv(v)) return std::atoll(s);
  return -1;
}

int64_t launcher_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"})
    if (const char* s = std::getenv(v)) return std::atoll(s);
  return 1;
}

#ifndef PARITY_HAVE_MPI

bool mpi_built() { return false; }
bool mpi_init() { return false; }
std::unique_ptr<Communicator> make_mpi_comm() {
  throw Unsupported("this build has no MPI (--ranks mpi)");
}

#else

bool mpi_built() { return true; }

bool mpi_init() {
  int init = 0;
  MPI_Initialized(&init);
  if (init) return false;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  return true;
}

namespace {
using Clock = std::chrono::steady_clock;

template <class F>
MPI_Datatype mpi_type() {
  return std::is_same_v<F, float> ? MPI_FLOAT : MPI_DOUBLE;
}

// Point-to-point wire format: a header of int64 words, the sender's op label,
// then the payload. Element codes: 0 f32, 1 f64.
struct Header {
  int64_t elem = 0;
  std::vector<int64_t> shape;
  std::string label;
};

template <class F>
std::vector<char> encode(const Tensor<F>& x, const std::string& label) {
  std::vector<int64_t> words{std::is_same_v<F, float> ? 0 : 1,
                             static_cast<int64_t>(x.shape.size())};
  words.insert(words.end(), x.shape.begin(), x.shape.end());
  words.push_back(static_cast<int64_t>(label.size()));
  size_t head = words.size() * 8, lab = (label.size() + 7) / 8 * 8;
  std::vector<char> buf(head + lab + x.data.size() * sizeof(F), 0);
  std::memcpy(buf.data(), words.data(), head);
  std::memcpy(buf.data() + head, label.data(), label.size());
  if (!x.data.empty())
    std::memcpy(buf.data() + head + lab, x.data.data(), x.data.size() * sizeof(F));
  return buf;
}

// Returns the payload offset, or 0 for a malformed message.
size_t decode(const std::vector<char>& buf, Header& h) {
  auto word = [&](size_t i) {
    int64_t w = 0;
    if ((i + 1) * 8 <= buf.size()) std::memcpy(&w, buf.data() + i * 8, 8);
    return w;
  };
  h.elem = word(0);
  int64_t rank = word(1);
  if (rank < 0 || rank > 64) return 0;
  for (int64_t k = 0; k < rank; ++k) h.shape.push_back(word(static_cast<size_t>(2 + k)));
  int64_t len = word(static_cast<size_t>(2 + rank));
  size_t head = static_cast<size_t>(3 + rank) * 8, lab = static_cast<size_t>((len + 7) / 8 * 8);
  if (len < 0 || head + lab > buf.size()) return 0;
  h.label.assign(buf.data() + head, static_cast<size_t>(len));
  return head + lab;
}

std::string shape_str(const std::vector<int64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ","));
}

class MpiComm : public Communicator {
 public:
  MpiComm() {
    owns_ = mpi_init();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int r = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    rank_ = r, size_ = n;
    // Separate communicators keep plan messages, collectives of the whole world
    // and result collection from matching each other.
    MPI_Comm_dup(MPI_COMM_WORLD, &p2p_);
    MPI_Comm_dup(MPI_COMM_WORLD, &ctl_);
    int* ub = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub_ = flag && ub ? *ub : 32767;
  }

  ~MpiComm() override {
    // A timed-out call leaves requests that no peer will complete; freeing its
    // communicators or finalizing could then block, so the process skips both.
    if (!orphans_.empty()) return;
    for (auto& [g, c] : groups_) MPI_Comm_free(&c);
    MPI_Comm_free(&p2p_);
    MPI_Comm_free(&ctl_);
    if (owns_) MPI_Finalize();
  }

  int64_t rank() const override { return rank_; }
  int64_t size() const override { return size_; }
  const char* backend() const override { return "mpi"; }

  void prepare(const std::vector<std::vector<Group> >& partitions) override {
    for (const auto& part : partitions) {
      int color = MPI_UNDEFINED, key = 0;
      for (size_t i = 0; i < part.size(); ++i) {
        auto it = std::find(part[i].begin(), part[i].end(), rank_);
        if (it != part[i].end())
          color = static_cast<int>(i), key = static_cast<int>(it - part[i].begin());
      }
      MPI_Comm c = MPI_COMM_NULL;
      check(MPI_Comm_split(MPI_COMM_WORLD, color, key, &c), "MPI_Comm_split");
      if (c == MPI_COMM_NULL) continue;
      const Group& g = part[static_cast<size_t>(color)];
      if (groups_.count(g))
        MPI_Comm_free(&c);
      else
        groups_[g] = c;
    }
  }

  std::vector<std::string> gather_bytes(const std::string& mine, int64_t root) override {
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(static_cast<size_t>(size_));
    MPI_Request req;
    check(
        MPI_Igather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, static_cast<int>(root), ctl_, &req),
        "MPI_Igather");
    wait(req, "result gather", others(), {});
    std::vector<int> displs(lens.size(), 0);
    for (size_t i = 1; i < lens.size(); ++i) displs[i] = displs[i - 1] + lens[i - 1];
    auto buf = std::make_shared<std::vector<char> >(
        rank_ == root ? static_cast<size_t>(displs.back() + lens.back()) : 0);
    auto in = std::make_shared<std::string>(mine);
    check(MPI_Igatherv(in->data(), len, MPI_BYTE, buf->data(), lens.data(), displs.data(), MPI_BYTE,
                       static_cast<int>(root), ctl_, &req),
          "MPI_Igatherv");
    wait(req, "result gather", others(), {buf, in});
    if (rank_ != root) return {};
    std::vector<std::string> out;
    for (size_t i = 0; i < lens.size(); ++i)
      out.emplace_back(buf->data() + displs[i], static_cast<size_t>(lens[i]));
    return out;
  }

  std::string broadcast_bytes(const std::string& data, int64_t root) override {
    auto len = std::make_shared<int64_t>(static_cast<int64_t>(data.size()));
    MPI_Request req;
    check(MPI_Ibcast(len.get(), 1, MPI_INT64_T, static_cast<int>(root), ctl_, &req), "MPI_Ibcast");
    wait(req, "result broadcast", others(), {len});
    auto buf = std::make_shared<std::string>(
        rank_ == root ? data : std::string(static_cast<size_t>(*len), '\0'));
    check(MPI_Ibcast(buf->data(), static_cast<int>(*len), MPI_BYTE, static_cast<int>(root), ctl_,
                     &req),
          "MPI_Ibcast");
    wait(req, "result broadcast", others(), {buf});
    return *buf;
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
    send_bytes(encode(x, label), peer, tag, label);
  }
  void do_send(const Tensor<double>& x, int64_t peer, int64_t tag,
               const std::string& label) override {
    send_bytes(encode(x, label), peer, tag, label);
  }
  void do_recv(Tensor<float>& out, int64_t peer, int64_t tag, const std::string& label) override {
    recv_into(out, peer, tag, label);
  }
  void do_recv(Tensor<double>& out, int64_t peer, int64_t tag, const std::string& label) override {
    recv_into(out, peer, tag, label);
  }

 private:
  void check(int rc, const char* what) const {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw error(fmt::format("{} failed: {}", what, std::string(msg, static_cast<size_t>(len))));
  }

  std::vector<int64_t> others() const {
    std::vector<int64_t> v;
    for (int64_t r = 0; r < size_; ++r)
      if (r != rank_) v.push_back(r);
    return v;
  }

  // Polls `req` until done or the timeout; on timeout the buffers it uses are
  // kept alive (MPI may still write them) and the error names the peers.
  void wait(MPI_Request& req, const std::string& label, const std::vector<int64_t>& peers,
            std::vector<std::shared_ptr<void> > keep, const std::string& detail = "") {
    auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(timeout()));
    for (int spins = 0;; ++spins) {
      int done = 0;
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      if (Clock::now() > end) {
        for (auto& k : keep) orphans_.push_back(std::move(k));
        orphans_.push_back(nullptr);  // marks that a request was abandoned
        throw timeout_error(label, peers, detail);
      }
      if (spins > 200) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  int checked_tag(int64_t tag, const std::string& label) const {
    if (tag < 0 || tag > tag_ub_)
      throw error(
          fmt::format("tag {} at '{}' is outside MPI's range [0, {}]", tag, label, tag_ub_));
    return static_cast<int>(tag);
  }

  void send_bytes(std::vector<char> bytes, int64_t peer, int64_t tag, const std::string& label) {
    auto buf = std::make_shared<std::vector<char> >(std::move(bytes));
    if (buf->size() > static_cast<size_t>(INT_MAX))
      throw error(fmt::format("message at '{}' exceeds 2 GiB", label));
    MPI_Request req;
    check(MPI_Isend(buf->data(), static_cast<int>(buf->size()), MPI_BYTE, static_cast<int>(peer),
                    checked_tag(tag, label), p2p_, &req),
          "MPI_Isend");
    // Buffered semantics: the send completes in the background; its buffer lives
    // in `sends_` until then.
    sends_.emplace_back(req, buf);
    for (auto it = sends_.begin(); it != sends_.end();) {
      int done = 0;
      MPI_Test(&it->first, &done, MPI_STATUS_IGNORE);
      it = done ? sends_.erase(it) : std::next(it);
    }
  }

  template <class F>
  void recv_into(Tensor<F>& out, int64_t peer, int64_t tag, const std::string& label) {
    int t = checked_tag(tag, label);
    auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(timeout()));
    MPI_Status st;
    for (int spins = 0;; ++spins) {
      int flag = 0;
      check(MPI_Iprobe(static_cast<int>(peer), t, p2p_, &flag, &st), "MPI_Iprobe");
      if (flag) break;
      if (Clock::now() > end) throw timeout_error(label, {peer}, fmt::format("(tag {})", tag));
      if (spins > 200) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    std::vector<char> buf(static_cast<size_t>(count));
    check(MPI_Recv(buf.data(), count, MPI_BYTE, static_cast<int>(peer), t, p2p_, MPI_STATUS_IGNORE),
          "MPI_Recv");
    Header h;
    size_t off = decode(buf, h);
    int64_t want = std::is_same_v<F, float> ? 0 : 1;
    if (off == 0)
      throw error(
          fmt::format("receives a malformed message from {} at '{}'", rank_name(peer), label));
    if (h.elem != want || h.shape != out.shape)
      throw error(fmt::format("receives {}{} at '{}' but {} sends {}{} at '{}'",
                              want ? "f64" : "f32", shape_str(out.shape), label, rank_name(peer),
                              h.elem ? "f64" : "f32", shape_str(h.shape), h.label));
    out.data.resize(static_cast<size_t>(ir::sem::num_el(out.shape)));
    if (buf.size() - off != out.data.size() * sizeof(F))
      throw error(
          fmt::format("receives a truncated message from {} at '{}'", rank_name(peer), label));
    if (!out.data.empty())
      std::memcpy(out.data.data(), buf.data() + off, out.data.size() * sizeof(F));
  }

  MPI_Comm group_comm(const Group& g) {
    if (auto it = groups_.find(g); it != groups_.end()) return it->second;
    // Not announced by prepare(): MPI_Comm_create_group involves the members only
    // (but blocks until they all arrive).
    MPI_Group world, sub;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    std::vector<int> ranks(g.begin(), g.end());
    MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &sub);
    MPI_Comm c;
    check(MPI_Comm_create_group(MPI_COMM_WORLD, sub, 1, &c), "MPI_Comm_create_group");
    MPI_Group_free(&sub);
    MPI_Group_free(&world);
    return groups_[g] = c;
  }

  template <class F>
  Tensor<F> coll(const Collective& c, const Tensor<F>& x) {
    MPI_Comm comm = group_comm(c.group);
    const int64_t n = static_cast<int64_t>(c.group.size()), cnt = x.size();
    if (cnt > INT_MAX) throw error(fmt::format("'{}' moves more than 2^31 elements", c.label));
    const MPI_Datatype t = mpi_type<F>();
    const MPI_Op op = c.op == ReduceOp::max ? MPI_MAX : MPI_SUM;
    std::vector<int64_t> peers;
    for (int64_t m : c.group)
      if (m != rank_) peers.push_back(m);
    auto in = std::make_shared<std::vector<F> >();
    auto out = std::make_shared<std::vector<F> >();
    MPI_Request req;
    Tensor<F> res;
    res.shape = x.shape;
    auto scale_avg = [&](std::vector<F>& v) {
      if (c.op != ReduceOp::avg) return;
      const F f = static_cast<F>(1.0 / static_cast<double>(n));  // as ir::eval_collective
      for (auto& e : v) e = f * e;
    };
    switch (c.kind) {
      case CollKind::allreduce:
        *in = x.data;
        out->resize(in->size());
        check(MPI_Iallreduce(in->data(), out->data(), static_cast<int>(cnt), t, op, comm, &req),
              "MPI_Iallreduce");
        wait(req, c.label, peers, {in, out});
        scale_avg(*out);
        res.data = std::move(*out);
        return res;
      case CollKind::allgather:
        *in = x.data;
        out->resize(static_cast<size_t>(cnt * n));
        check(MPI_Iallgather(in->data(), static_cast<int>(cnt), t, out->data(),
                             static_cast<int>(cnt), t, comm, &req),
              "MPI_Iallgather");
        wait(req, c.label, peers, {in, out});
        return concat_blocks(*out, x.shape, c.dim, n);
      case CollKind::reduce_scatter:
        *in = pack_chunks(x, c.dim, n);
        out->resize(static_cast<size_t>(cnt / n));
        check(MPI_Ireduce_scatter_block(in->data(), out->data(), static_cast<int>(cnt / n), t, op,
                                        comm, &req),
              "MPI_Ireduce_scatter_block");
        wait(req, c.label, peers, {in, out});
        scale_avg(*out);
        res.shape = chunk_shape(x.shape, c.dim, n);
        res.data = std::move(*out);
        return res;
      case CollKind::all_to_all:
        *in = pack_chunks(x, c.split_dim, n);
        out->resize(in->size());
        check(MPI_Ialltoall(in->data(), static_cast<int>(cnt / n), t, out->data(),
                            static_cast<int>(cnt / n), t, comm, &req),
              "MPI_Ialltoall");
        wait(req, c.label, peers, {in, out});
        return concat_blocks(*out, chunk_shape(x.shape, c.split_dim, n), c.concat_dim, n);
      case CollKind::broadcast:
        *out = x.data;
        check(
            MPI_Ibcast(out->data(), static_cast<int>(cnt), t, static_cast<int>(c.root), comm, &req),
            "MPI_Ibcast");
        wait(req, c.label, peers, {out});
        res.data = std::move(*out);
        return res;
    }
    throw error("unknown collective");
  }

  int64_t rank_ = 0, size_ = 1;
  bool owns_ = false;
  int tag_ub_ = 32767;
  MPI_Comm p2p_ = MPI_COMM_NULL, ctl_ = MPI_COMM_NULL;
  std::map<Group, MPI_Comm> groups_;
  std::vector<std::pair<MPI_Request, std::shared_ptr<std::vector<char> > > > sends_;
  std::vector<std::shared_ptr<void> > orphans_;
};
}  // namespace

std::unique_ptr<Communicator> make_mpi_comm() { return std::make_unique<MpiComm>(); }

#endif

}  // namespace parity::exec
