// Runs specs and plans over any element domain (see semantics.h). Plans run
// all their ranks in one process, in an order that respects every recv and
// collective, so the result is that of any real execution of the schedule.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "ir/plan.h"
#include "ir/semantics.h"

namespace parity::ir {

// One step of a program with loops unrolled.
struct Instr {
  enum Kind { exec, bind } kind = exec;
  const Op* op = nullptr;  // exec
  // bind: dst()[i] = src()[i], simultaneously. The name lists belong to the
  // graph, and an iteration's instructions share one set of loop indices: a
  // program unrolls to tens of thousands of instructions.
  const std::vector<std::string>* dst_list = nullptr;
  const std::vector<std::string>* src_list = nullptr;
  std::shared_ptr<const Bindings> loop_indices;  // `$var` -> iteration index; null: none
  std::string iter;                              // "mb=1,layer=0", for messages
  size_t seq = 0;                                // position in the unrolled program: a clock shared by ranks

  const std::vector<std::string>& dst() const { return dst_list ? *dst_list : no_names(); }
  const std::vector<std::string>& src() const { return src_list ? *src_list : no_names(); }
  const Bindings& loop() const { return loop_indices ? *loop_indices : no_loop(); }

 private:
  static const std::vector<std::string>& no_names() {
    static const std::vector<std::string> none;
    return none;
  }
  static const Bindings& no_loop() {
    static const Bindings none;
    return none;
  }
};

// Unrolls `g`; loop counts are evaluated under `b`.
std::vector<Instr> flatten(const Graph& g, const Bindings& b);

// How many instructions `flatten(g, b)` returns, counted without unrolling:
// any number over `cap` is returned as `cap + 1` (a loop of 10^12 iterations
// is counted in the time of its body, not materialized).
size_t flat_size(const Graph& g, const Bindings& b, size_t cap);

// The bindings an instruction runs under: `base` plus its loop indices. Built
// once per loop iteration (consecutive instructions share one), not once per
// instruction.
class IterBindings {
 public:
  const Bindings& of(const Bindings& base, const Instr& ins) {
    if (!built_ || iter_ != ins.iter) {
      b_ = base;
      for (const auto& [k, v] : ins.loop()) b_[k] = v;
      iter_ = ins.iter;
      built_ = true;
    }
    return b_;
  }

 private:
  Bindings b_;
  std::string iter_;
  bool built_ = false;
};

namespace detail {
template <class S>
Tensor<S> chunk(const Tensor<S>& x, size_t dim, int64_t n, int64_t i) {
  Tensor<S> out;
  out.shape = x.shape;
  int64_t size = x.shape[dim] / n;
  out.shape[dim] = size;
  for (int64_t f = 0; f < x.size(); ++f) {
    auto idx = x.index_of(f);
    if (idx[dim] >= i * size && idx[dim] < (i + 1) * size) out.data.push_back(x.data[static_cast<size_t>(f)]);
  }
  return out;
}

template <class S>
Tensor<S> concat(const std::vector<const Tensor<S>*>& parts, size_t dim) {
  Tensor<S> out;
  out.shape = parts[0]->shape;
  out.shape[dim] = 0;
  for (auto* p : parts) out.shape[dim] += p->shape[dim];
  out.data.resize(static_cast<size_t>(sem::num_el(out.shape)), parts[0]->data.empty() ? S{} : parts[0]->data[0]);
  int64_t base = 0;
  for (auto* p : parts) {
    for (int64_t f = 0; f < p->size(); ++f) {
      auto idx = p->index_of(f);
      idx[dim] += base;
      out.data[static_cast<size_t>(out.flat(idx))] = p->data[static_cast<size_t>(f)];
    }
    base += p->shape[dim];
  }
  return out;
}
}  // namespace detail

// The values every member of a group receives from a collective; `ins` are the
// members' operands in group order.
template <class D>
std::vector<Tensor<typename D::S>> eval_collective(D& d, const Op& op, const std::vector<const Tensor<typename D::S>*>& ins,
                                                   const Bindings& b) {
  using S = typename D::S;
  using T = Tensor<S>;
  int64_t n = static_cast<int64_t>(ins.size());
  std::string red = "sum";
  if (const Attr* a = op.attr("reduce"); a && std::holds_alternative<std::string>(*a)) red = std::get<std::string>(*a);
  auto reduce_all = [&]() {
    T out = *ins[0];
    for (size_t e = 0; e < out.data.size(); ++e) {
      std::vector<S> vals;
      for (auto* t : ins) vals.push_back(t->data[e]);
      if (red == "max") {
        S m = vals[0];
        for (size_t j = 1; j < vals.size(); ++j) m = d.max(m, vals[j]);
        out.data[e] = m;
      } else {
        S s = d.sum(vals);
        out.data[e] = red == "avg" ? d.mul(d.c(1.0 / static_cast<double>(n)), s) : s;
      }
    }
    return out;
  };
  for (auto* t : ins)
    if (t->shape != ins[0]->shape) throw EvalError("members of one collective contribute tensors of different shapes");
  const std::string& k = op.kind;
  if (k == "allreduce") return std::vector<T>(static_cast<size_t>(n), reduce_all());
  if (k == "broadcast") {
    int64_t root = sem::int_attr(op, "root", b, 0);
    return std::vector<T>(static_cast<size_t>(n), *ins[static_cast<size_t>(root)]);
  }
  if (k == "allgather") {
    size_t dim = sem::norm_axis(sem::int_attr(op, "dim", b, 0), ins[0]->rank());
    return std::vector<T>(static_cast<size_t>(n), detail::concat(ins, dim));
  }
  if (k == "reduce_scatter") {
    size_t dim = sem::norm_axis(sem::int_attr(op, "dim", b, 0), ins[0]->rank());
    T all = reduce_all();
    std::vector<T> out;
    for (int64_t i = 0; i < n; ++i) out.push_back(detail::chunk(all, dim, n, i));
    return out;
  }
  if (k == "all_to_all") {
    size_t sd = sem::norm_axis(sem::int_attr(op, "split_dim", b, 0), ins[0]->rank());
    size_t cd = sem::norm_axis(sem::int_attr(op, "concat_dim", b, 0), ins[0]->rank());
    std::vector<T> out;
    for (int64_t j = 0; j < n; ++j) {
      std::vector<T> parts;
      for (int64_t i = 0; i < n; ++i) parts.push_back(detail::chunk(*ins[static_cast<size_t>(i)], sd, n, j));
      std::vector<const T*> ptrs;
      for (auto& p : parts) ptrs.push_back(&p);
      out.push_back(detail::concat(ptrs, cd));
    }
    return out;
  }
  throw EvalError("no semantics for collective '" + k + "'");
}

// Runs a graph on one device. `inputs` maps input names to values; `on_value`
// (optional) sees every value as it is defined.
template <class D>
std::map<std::string, Tensor<typename D::S>> run_graph(
    D& d, const Graph& g, const Bindings& b, std::map<std::string, Tensor<typename D::S>> env,
    const std::function<void(const std::string&, const Instr&, const Tensor<typename D::S>&)>& on_value = {}) {
  using T = Tensor<typename D::S>;
  IterBindings lb;
  for (const Instr& ins : flatten(g, b)) {
    if (ins.kind == Instr::bind) {
      std::vector<T> vals;
      for (const auto& s : ins.src()) vals.push_back(env.at(s));
      for (size_t i = 0; i < ins.dst().size(); ++i) {
        env[ins.dst()[i]] = std::move(vals[i]);
        if (on_value) on_value(ins.dst()[i], ins, env[ins.dst()[i]]);
      }
      continue;
    }
    std::vector<const T*> in;
    for (const auto& o : ins.op->operands) in.push_back(&env.at(o));
    auto res = eval_local(d, *ins.op, in, lb.of(b, ins));
    for (size_t i = 0; i < res.size(); ++i) {
      auto it = env.insert_or_assign(ins.op->results[i], std::move(res[i])).first;
      if (on_value) on_value(ins.op->results[i], ins, it->second);
    }
  }
  return env;
}

// A numeric run stopped because it would hold more memory than allowed.
struct OutOfBudget : EvalError {
  using EvalError::EvalError;
};

// Runs every rank of a plan (or the ranks in `only`, which must be closed under
// communication). `input(rank, program, name)` gives each program input;
// `on_value(rank, program, name, instr, value)` sees every defined value.
template <class D>
class PlanRunner {
 public:
  using S = typename D::S;
  using T = Tensor<S>;
  using InputFn = std::function<T(int64_t, const Program&, const std::string&)>;
  using ValueFn = std::function<void(int64_t, const Program&, const std::string&, const Instr&, const T&)>;

  PlanRunner(const Plan& p, D& d) : p_(p), d_(d) {}

  // Called from `on_value`: the run ends after the current instruction, as
  // it stands (no deadlock check, no final environments).
  void stop() { stop_ = true; }
  // Called from `on_value`: the logical time of the value it sees (a Lamport
  // clock: one tick per instruction of its rank, a received value later than
  // its send, a collective's results later than every member's operand). It
  // orders values of different programs by cause, not by program position.
  uint64_t clock() const { return last_clock_; }

  // The run keeps every rank's values: past `bytes` of them (counted with
  // what `charge` adds, e.g. copies a caller keeps) it throws OutOfBudget
  // rather than exhaust the machine.
  void limit_bytes(size_t bytes) { max_bytes_ = bytes; }
  void charge(size_t bytes) {
    held_ += bytes;
    if (held_ > max_bytes_)
      throw OutOfBudget("the numeric run needs more than " + std::to_string(max_bytes_ >> 20) + " MiB");
  }
  static size_t bytes_of(const T& v) { return v.data.size() * sizeof(S) + v.shape.size() * sizeof(int64_t) + 64; }

  void run(const InputFn& input, const ValueFn& on_value) {
    int64_t n = p_.mesh.num_ranks();
    Bindings base = p_.dims;
    for (const auto& a : p_.mesh.axes) base[a.name] = a.size;
    for (const auto& prog : p_.programs) code_.emplace(prog.name, SlotCode(flatten(prog.graph, base), prog.graph.inputs));
    std::vector<State> st(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      State& s = st[static_cast<size_t>(r)];
      s.prog = p_.program_of(r);
      if (!s.prog) continue;
      s.code = &code_.at(s.prog->name);
      s.b = p_.rank_bindings(r);
      s.env.resize(s.code->names.size());
      s.has.assign(s.code->names.size(), 0);
      for (size_t i = 0; i < s.prog->graph.inputs.size(); ++i) {
        const std::string& in = s.prog->graph.inputs[i];
        define(st, r, s.code->inputs[i], in, input(r, *s.prog, in), Instr{}, on_value);
      }
    }
    bool progress = true;
    while (progress && !stop_) {
      progress = false;
      for (int64_t r = 0; r < n && !stop_; ++r) progress |= advance(st, r, on_value);
    }
    if (stop_) return;
    for (int64_t r = 0; r < n; ++r) {
      const State& s = st[static_cast<size_t>(r)];
      if (s.prog && s.pc < s.code->instrs.size())
        throw EvalError("rank " + p_.mesh.rank_str(r) + " is stuck at '" + s.code->instrs[s.pc].op->label() + "' (deadlock)");
    }
    for (int64_t r = 0; r < n; ++r) {
      State& s = st[static_cast<size_t>(r)];
      if (s.prog) finals_.emplace(r, Final{s.code, std::move(s.env), std::move(s.has)});
    }
  }

  // Values of each rank after the run (the last instance of loop values).
  std::map<std::string, T> env(int64_t rank) const {
    const Final& f = finals_.at(rank);
    std::map<std::string, T> out;
    for (size_t i = 0; i < f.env.size(); ++i)
      if (f.has[i]) out.emplace(*f.code->names[i], f.env[i]);
    return out;
  }

 private:
  // A program's unrolled code with every value name numbered once (a slot),
  // so a rank's environment is an array instead of a map keyed by name. A
  // name keeps its slot through every loop iteration, as it kept its map
  // entry: a redefinition replaces the value.
  struct SlotCode {
    std::vector<Instr> instrs;
    std::vector<std::vector<uint32_t>> in, out;  // per instruction: operand (or bind source) and result slots
    std::vector<uint32_t> inputs;                // of the program's inputs
    std::vector<const std::string*> names;       // slot -> name

    SlotCode(std::vector<Instr> code, const std::vector<std::string>& prog_inputs) : instrs(std::move(code)) {
      std::unordered_map<std::string_view, uint32_t> slot;
      auto of = [&](const std::string& name) {
        auto [it, fresh] = slot.try_emplace(name, static_cast<uint32_t>(names.size()));
        if (fresh) names.push_back(&name);
        return it->second;
      };
      for (const auto& x : prog_inputs) inputs.push_back(of(x));
      in.resize(instrs.size());
      out.resize(instrs.size());
      for (size_t i = 0; i < instrs.size(); ++i) {
        const Instr& ins = instrs[i];
        for (const auto& x : ins.kind == Instr::bind ? ins.src() : ins.op->operands) in[i].push_back(of(x));
        for (const auto& x : ins.kind == Instr::bind ? ins.dst() : ins.op->results) out[i].push_back(of(x));
      }
    }
  };
  struct State {
    const Program* prog = nullptr;
    const SlotCode* code = nullptr;
    size_t pc = 0;
    Bindings b;
    std::vector<T> env;
    std::vector<char> has;  // env[i] is defined
    bool arrived = false;
    IterBindings cur;  // of the iteration running now
    uint64_t clock = 0;
  };
  struct Final {
    const SlotCode* code;
    std::vector<T> env;
    std::vector<char> has;
  };

  const T& value(const State& s, int64_t r, uint32_t slot) const {
    if (!s.has[slot])
      throw EvalError("rank " + p_.mesh.rank_str(r) + " reads '" + *s.code->names[slot] + "' before it is defined");
    return s.env[slot];
  }

  // The id of `rank`'s group in a collective. A group's member list is built
  // once, not once per member: a group of 65536 ranks built and compared by
  // each of them was quadratic.
  int64_t group_id(const std::vector<int64_t>& members) {
    auto [it, fresh] = group_ids_.try_emplace(members, static_cast<int64_t>(groups_.size()));
    if (fresh) groups_.push_back(members);
    return it->second;
  }
  int64_t group_of(int64_t rank, const Op& op) {
    if (const Attr* a = op.attr("axes"); a && std::holds_alternative<Strings>(*a)) {
      const Strings& axes = std::get<Strings>(*a);
      auto [it, fresh] = axes_groups_.try_emplace({axes, p_.mesh.off_axes(rank, axes)}, -1);
      if (fresh) it->second = group_id(p_.mesh.group_along(rank, axes));
      return it->second;
    }
    const Groups& gs = std::get<Groups>(*op.attr("groups"));
    auto [it, fresh] = listed_groups_.try_emplace(&gs);
    if (fresh)
      for (const auto& g : gs) {
        const int64_t id = group_id(g);
        for (int64_t m : g) it->second.emplace(m, id);
      }
    if (auto m = it->second.find(rank); m != it->second.end()) return m->second;
    throw EvalError("rank " + p_.mesh.rank_str(rank) + " is in no group of '" + op.label() + "'");
  }

  int64_t peer_of(int64_t rank, const Op& op, const Bindings& b) const {
    Coord c = p_.mesh.coord_of(rank);
    for (const auto& [axis, e] : std::get<Coords>(*op.attr("peer"))) c[*p_.mesh.axis_index(axis)] = e.eval(b);
    return p_.mesh.rank_of(c);
  }

  void define(std::vector<State>& st, int64_t r, uint32_t slot, const std::string& name, T v, const Instr& ins,
              const ValueFn& on_value) {
    State& s = st[static_cast<size_t>(r)];
    if (s.has[slot]) held_ -= bytes_of(s.env[slot]);
    charge(bytes_of(v));
    s.env[slot] = std::move(v);
    s.has[slot] = 1;
    last_clock_ = s.clock;
    if (on_value) on_value(r, *s.prog, name, ins, s.env[slot]);
  }

  bool advance(std::vector<State>& st, int64_t r, const ValueFn& on_value) {
    State& s = st[static_cast<size_t>(r)];
    bool moved = false;
    while (s.prog && s.pc < s.code->instrs.size() && !stop_) {
      const Instr& ins = s.code->instrs[s.pc];
      const auto& in = s.code->in[s.pc];
      const auto& out = s.code->out[s.pc];
      if (ins.kind == Instr::bind) {
        ++s.clock;
        std::vector<T> vals;
        for (uint32_t x : in) vals.push_back(value(s, r, x));
        for (size_t i = 0; i < out.size(); ++i) define(st, r, out[i], ins.dst()[i], std::move(vals[i]), ins, on_value);
        ++s.pc;
        moved = true;
        continue;
      }
      const Op& op = *ins.op;
      const Bindings& b = s.cur.of(s.b, ins);
      if (op.kind == "send") {
        int64_t tag = std::get<DimExpr>(*op.attr("tag")).eval(b);
        mail_[{r, peer_of(r, op, b), tag}].emplace_back(value(s, r, in[0]), ++s.clock);
      } else if (op.kind == "recv") {
        int64_t tag = std::get<DimExpr>(*op.attr("tag")).eval(b);
        auto it = mail_.find({peer_of(r, op, b), r, tag});
        if (it == mail_.end() || it->second.empty()) return moved;
        T v = std::move(it->second.front().first);
        // The schedule check matches messages by shape only where it was
        // simulated (within its budget); a message of another shape is no
        // value of this plan.
        if (auto want = sem::ints_attr(op, "shape", b); v.shape != want)
          throw EvalError("rank " + std::to_string(r) + " receives " + op.results[0] + " with tag " +
                          std::to_string(tag) + " as a tensor of another shape than it declares: the matching send "
                          "holds a different value (tags that collide?)");
        s.clock = std::max(s.clock, it->second.front().second) + 1;
        it->second.pop_front();
        define(st, r, out[0], op.results[0], std::move(v), ins, on_value);
      } else if (op.attr("axes") || op.attr("groups")) {
        if (s.arrived) return moved;
        s.arrived = true;
        const int64_t gid = group_of(r, op);
        const std::vector<int64_t>& g = groups_[static_cast<size_t>(gid)];
        auto& w = waiting_[gid];
        w.push_back(r);
        if (w.size() < g.size()) return moved;
        std::vector<const T*> ops;
        for (int64_t q : g) {
          const State& m = st[static_cast<size_t>(q)];
          const Op& mop = *m.code->instrs[m.pc].op;
          if (mop.kind != op.kind) throw EvalError("ranks of one group issue different collectives");
          ops.push_back(&value(m, q, m.code->in[m.pc][0]));
        }
        auto res = eval_collective(d_, op, ops, b);
        waiting_.erase(gid);
        uint64_t at = 0;
        for (int64_t q : g) at = std::max(at, st[static_cast<size_t>(q)].clock);
        for (int64_t q : g) st[static_cast<size_t>(q)].clock = at + 1;
        for (size_t i = 0; i < g.size(); ++i) {
          State& m = st[static_cast<size_t>(g[i])];
          const Instr& mi = m.code->instrs[m.pc];
          uint32_t slot = m.code->out[m.pc][0];
          m.arrived = false;
          ++m.pc;
          define(st, g[i], slot, mi.op->results[0], std::move(res[i]), mi, on_value);
        }
        moved = true;
        continue;  // our pc already advanced with the group
      } else {
        std::vector<const T*> args;
        for (uint32_t x : in) args.push_back(&value(s, r, x));
        auto res = eval_local(d_, op, args, b);
        ++s.clock;
        for (size_t i = 0; i < res.size(); ++i) define(st, r, out[i], op.results[i], std::move(res[i]), ins, on_value);
      }
      ++s.pc;
      moved = true;
    }
    return moved;
  }

  const Plan& p_;
  D& d_;
  std::map<std::string, SlotCode> code_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<std::pair<T, uint64_t>>> mail_;  // values and send times
  std::map<int64_t, std::vector<int64_t>> waiting_;  // group id -> ranks arrived
  std::map<std::vector<int64_t>, int64_t> group_ids_;
  std::deque<std::vector<int64_t>> groups_;  // by id; a deque keeps references stable
  std::map<std::pair<Strings, Coord>, int64_t> axes_groups_;  // axes, coordinates off them (-1 on them)
  std::map<const Groups*, std::map<int64_t, int64_t>> listed_groups_;  // rank -> group id
  std::map<int64_t, Final> finals_;
  bool stop_ = false;
  size_t held_ = 0, max_bytes_ = SIZE_MAX;
  uint64_t last_clock_ = 0;
};

}  // namespace parity::ir
