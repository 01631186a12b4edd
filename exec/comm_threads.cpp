#include "exec/comm_threads.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <variant>

#include "ir/interp.h"
#include "ir/num_domain.h"

namespace parity::exec {

namespace {
using Value = std::variant<Tensor<float>, Tensor<double>, std::string>;
using Clock = std::chrono::steady_clock;

// Tags below every plan tag, for result collection.
constexpr int64_t kGatherTag = std::numeric_limits<int64_t>::min();
constexpr int64_t kBcastTag = kGatherTag + 1;

struct Msg {
  Value v;
  std::string label;  // the sender's op
};

// One collective of one group: members arrive, the last computes everyone's result.
struct Round {
  std::vector<std::optional<Collective>> calls;
  std::vector<Value> in;
  int64_t arrived = 0, taken = 0;
  bool done = false;
  std::vector<Value> out;
  std::string failed;
  bool abandoned = false;  // failed because a member gave up waiting (not the cause)
};

std::string shape_str(const std::vector<int64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ","));
}

const char* elem_name(const Value& v) {
  return std::holds_alternative<Tensor<float>>(v)    ? "f32"
         : std::holds_alternative<Tensor<double>>(v) ? "f64"
                                                     : "bytes";
}

// The IR op that ir::eval_collective interprets for this call.
ir::Op as_op(const Collective& c) {
  ir::Op op;
  op.kind = coll_kind_name(c.kind);
  op.attrs["reduce"] = std::string(reduce_op_name(c.op));
  op.attrs["dim"] = ir::DimExpr(c.dim);
  op.attrs["split_dim"] = ir::DimExpr(c.split_dim);
  op.attrs["concat_dim"] = ir::DimExpr(c.concat_dim);
  op.attrs["root"] = ir::DimExpr(c.root);
  return op;
}
}  // namespace

struct ThreadWorld::State {
  int64_t n = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<Msg>> mail;  // (src, dst, tag)
  std::map<std::pair<Group, int64_t>, Round> rounds;                      // (group, call number)
  std::string failure;
};

namespace {

class ThreadComm : public Communicator {
 public:
  ThreadComm(std::shared_ptr<ThreadWorld::State> st, int64_t rank)
      : st_(std::move(st)), rank_(rank) {}
  int64_t rank() const override { return rank_; }
  int64_t size() const override { return st_->n; }
  const char* backend() const override { return "threads"; }

  std::vector<std::string> gather_bytes(const std::string& mine, int64_t root) override {
    if (rank_ != root) {
      put(Value{mine}, root, kGatherTag, "result gather");
      return {};
    }
    std::vector<std::string> all(static_cast<size_t>(st_->n));
    for (int64_t r = 0; r < st_->n; ++r)
      all[static_cast<size_t>(r)] =
          r == root ? mine : std::get<std::string>(take(r, kGatherTag, "result gather").v);
    return all;
  }

  std::string broadcast_bytes(const std::string& data, int64_t root) override {
    if (rank_ != root) return std::get<std::string>(take(root, kBcastTag, "result broadcast").v);
    for (int64_t r = 0; r < st_->n; ++r)
      if (r != root) put(Value{data}, r, kBcastTag, "result broadcast");
    return data;
  }

  void abort(const std::string& why) override {
    std::lock_guard<std::mutex> lk(st_->mu);
    if (st_->failure.empty()) st_->failure = why;
    st_->cv.notify_all();
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
    put(Value{x}, peer, tag, label);
  }
  void do_send(const Tensor<double>& x, int64_t peer, int64_t tag,
               const std::string& label) override {
    put(Value{x}, peer, tag, label);
  }
  void do_recv(Tensor<float>& out, int64_t peer, int64_t tag, const std::string& label) override {
    recv_into(out, peer, tag, label);
  }
  void do_recv(Tensor<double>& out, int64_t peer, int64_t tag, const std::string& label) override {
    recv_into(out, peer, tag, label);
  }

 private:
  Clock::time_point deadline() const {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout()));
  }

  // Another rank failed: stop waiting, pointing at the cause.
  PeerFailed gave_up(const std::string& label) const {
    return PeerFailed(
        rank_name(rank_) + ": " +
        fmt::format("stops at '{}' because another rank failed ({})", label, st_->failure));
  }

  void put(Value v, int64_t peer, int64_t tag, const std::string& label) {
    std::lock_guard<std::mutex> lk(st_->mu);
    st_->mail[{rank_, peer, tag}].push_back(Msg{std::move(v), label});
    st_->cv.notify_all();
  }

  Msg take(int64_t peer, int64_t tag, const std::string& label) {
    std::unique_lock<std::mutex> lk(st_->mu);
    auto& box = st_->mail[{peer, rank_, tag}];
    bool ok =
        st_->cv.wait_until(lk, deadline(), [&] { return !box.empty() || !st_->failure.empty(); });
    if (!box.empty()) {
      Msg m = std::move(box.front());
      box.pop_front();
      return m;
    }
    if (!ok)
      throw timeout_error(label, {peer}, tag <= kBcastTag ? "" : fmt::format("(tag {})", tag));
    throw gave_up(label);
  }

  [[noreturn]] void throw_round(const Round& r) const {
    if (r.abandoned) throw PeerFailed(rank_name(rank_) + ": " + r.failed);
    throw error(r.failed);
  }

  template <class F>
  void recv_into(Tensor<F>& out, int64_t peer, int64_t tag, const std::string& label) {
    Msg m = take(peer, tag, label);
    auto* t = std::get_if<Tensor<F>>(&m.v);
    if (!t)
      throw error(fmt::format("receives {} at '{}' but {} sends {} at '{}'",
                              std::is_same_v<F, float> ? "f32" : "f64", label, rank_name(peer),
                              elem_name(m.v), m.label));
    if (t->shape != out.shape)
      throw error(fmt::format("receives {} at '{}' but {} sends {} at '{}'", shape_str(out.shape),
                              label, rank_name(peer), shape_str(t->shape), m.label));
    out.data = std::move(t->data);
  }

  template <class F>
  Tensor<F> coll(const Collective& c, const Tensor<F>& x) {
    const int64_t n = static_cast<int64_t>(c.group.size());
    const size_t pos =
        static_cast<size_t>(std::find(c.group.begin(), c.group.end(), rank_) - c.group.begin());
    std::unique_lock<std::mutex> lk(st_->mu);
    if (!st_->failure.empty()) throw gave_up(c.label);
    // Members of a group issue its collectives in the same order, so the k-th
    // call of each member belongs to one round.
    Round& r = st_->rounds[{c.group, seq_[c.group]++}];
    if (r.calls.empty()) {
      r.calls.resize(static_cast<size_t>(n));
      r.in.resize(static_cast<size_t>(n));
    }
    if (!r.failed.empty()) throw_round(r);
    r.calls[pos] = c;
    r.in[pos] = Value{x};  // a copy: the round may outlive this call if it times out
    if (++r.arrived == n) {
      finish<F>(r);
      st_->cv.notify_all();
    } else {
      bool ok = st_->cv.wait_until(lk, deadline(), [&] { return r.done || !st_->failure.empty(); });
      if (!r.done) {
        std::vector<int64_t> missing;
        for (size_t i = 0; i < r.calls.size(); ++i)
          if (!r.calls[i]) missing.push_back(c.group[i]);
        r.failed = fmt::format("{} gave up waiting at '{}'", rank_name(rank_), c.label);
        r.abandoned = true;
        r.done = true;
        st_->cv.notify_all();
        if (!ok) throw timeout_error(c.label, missing);
        throw gave_up(c.label);
      }
    }
    if (!r.failed.empty()) throw_round(r);
    Tensor<F> out = std::move(std::get<Tensor<F>>(r.out[pos]));
    if (++r.taken == n) st_->rounds.erase({c.group, seq_[c.group] - 1});
    return out;
  }

  // Computes every member's result, or records why the round failed.
  template <class F>
  void finish(Round& r) {
    r.done = true;
    const Collective& first = *r.calls[0];
    std::vector<const Tensor<F>*> ins;
    for (size_t i = 0; i < r.calls.size(); ++i) {
      const Collective& ci = *r.calls[i];
      if (ci.kind != first.kind || ci.signature() != first.signature()) {
        r.failed = fmt::format(
            "ranks of one group issue different collectives: {} at '{}' ({}), {} at '{}' ({})",
            rank_name(first.group[0]), first.label, first.signature(), rank_name(ci.group[i]),
            ci.label, ci.signature());
        return;
      }
      auto* t = std::get_if<Tensor<F>>(&r.in[i]);
      if (!t) {
        r.failed = fmt::format("members of '{}' contribute different element types", first.label);
        return;
      }
      ins.push_back(t);
    }
    for (size_t i = 1; i < ins.size(); ++i)
      if (ins[i]->shape != ins[0]->shape) {
        r.failed = fmt::format(
            "members of one collective contribute different shapes: {} sends {} at '{}', {} sends "
            "{} at '{}'",
            rank_name(first.group[0]), shape_str(ins[0]->shape), first.label,
            rank_name(first.group[i]), shape_str(ins[i]->shape), r.calls[i]->label);
        return;
      }
    ir::NumDomain<F> d;
    try {
      auto res = ir::eval_collective(d, as_op(first), ins, ir::Bindings{});
      for (auto& t : res) r.out.emplace_back(std::move(t));
    } catch (const std::exception& e) {
      r.failed = fmt::format("'{}' failed: {}", first.label, e.what());
    }
  }

  std::shared_ptr<ThreadWorld::State> st_;
  int64_t rank_;
  std::map<Group, int64_t> seq_;
};

}  // namespace

ThreadWorld::ThreadWorld(int64_t size) : st_(std::make_shared<State>()) { st_->n = size; }
ThreadWorld::~ThreadWorld() = default;
int64_t ThreadWorld::size() const { return st_->n; }

std::unique_ptr<Communicator> ThreadWorld::comm(int64_t rank) {
  return std::make_unique<ThreadComm>(st_, rank);
}

std::string ThreadWorld::failure() const {
  std::lock_guard<std::mutex> lk(st_->mu);
  return st_->failure;
}

}  // namespace parity::exec
