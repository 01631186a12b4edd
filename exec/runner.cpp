#include "exec/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>
#include <system_error>
#include <thread>

#include "exec/comm_threads.h"
#include "exec/wire.h"
#include "ir/interp.h"
#include "ir/op_registry.h"
#include "ir/validate.h"

namespace parity::exec {

const char* ranks_name(Ranks r) { return r == Ranks::threads ? "threads" : "mpi"; }

namespace {
std::string join_lines(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "\n" : "") + v[i];
  return s;
}
}  // namespace

RunError::RunError(std::vector<std::string> errs)
    : std::runtime_error(join_lines(errs)), errors(std::move(errs)) {}

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool is_collective(const ir::Op& op) {
  const ir::OpDef* d = ir::OpRegistry::get().find(op.kind);
  return d && d->collective && !d->p2p;
}

std::string label_of(const ir::Instr& ins) {
  std::string l = ins.op ? ins.op->label() : "loop";
  return ins.iter.empty() ? l : l + " (" + ins.iter + ")";
}

// What every rank derives from the case before running.
struct Setup {
  const ir::Case& c;
  const RunOptions& o;
  ir::Bindings dims;  // spec dims, then plan dims
  std::map<std::string, ir::TypeMap> types;
  // (program, value) -> indices of its placements
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> placed;
  std::map<std::string, std::vector<ir::Instr>> code;
};

// A loop count typed as 10^12 would otherwise be unrolled until memory ran out.
constexpr size_t kMaxUnrolled = 200'000'000;
std::vector<ir::Instr> unrolled(const ir::Graph& g, const ir::Bindings& b, const std::string& what) {
  if (ir::flat_size(g, b, kMaxUnrolled) > kMaxUnrolled)
    throw Unsupported(fmt::format("{} unrolls to more than {} instructions (its loop counts): too large to run",
                                  what, kMaxUnrolled));
  return ir::flatten(g, b);
}

Setup make_setup(const ir::Case& c, const RunOptions& o) {
  Setup st{c, o, {}, {}, {}, {}};
  const ir::Plan& p = c.plan;
  if (c.spec) st.dims = c.spec->dims;
  for (const auto& [k, v] : p.dims) st.dims[k] = v;
  ir::DiagList d;
  ir::validate_plan(p, c.spec ? &*c.spec : nullptr, "", d, &st.types);
  for (size_t i = 0; i < p.placements.size(); ++i)
    st.placed[{p.placements[i].program, p.placements[i].value}].push_back(i);
  ir::Bindings base = st.dims;
  for (const auto& a : p.mesh.axes) base[a.name] = a.size;
  for (const auto& prog : p.programs) st.code[prog.name] = unrolled(prog.graph, base, "program '" + prog.name + "'");
  return st;
}

// Integer and boolean values are not rounded to bf16 (ids above 256 would move).
bool is_float(const ir::TypeMap* types, const std::string& name) {
  if (!types) return true;
  auto it = types->find(name);
  return it == types->end() || ir::is_float(it->second.dtype);
}

template <class F>
Tensor<F> to(const ir::Tensor<double>& x) {
  Tensor<F> t;
  t.shape = x.shape;
  t.data.assign(x.data.begin(), x.data.end());
  return t;
}

template <class F>
ir::Tensor<double> to_double(const Tensor<F>& x) {
  ir::Tensor<double> t;
  t.shape = x.shape;
  t.data.assign(x.data.begin(), x.data.end());
  return t;
}

// The region [off, off+size) of x.
ir::Tensor<double> extract(const ir::Tensor<double>& x, const std::vector<int64_t>& off,
                           const std::vector<int64_t>& size) {
  for (size_t k = 0; k < x.rank(); ++k)
    if (off[k] < 0 || size[k] < 0 || off[k] + size[k] > x.shape[k])
      throw ir::EvalError(fmt::format("region [{}] +[{}] outside the spec value [{}]",
                                      fmt::join(off, ","), fmt::join(size, ","),
                                      fmt::join(x.shape, ",")));
  ir::Tensor<double> out(size, 0.0);
  for (int64_t i = 0; i < out.size(); ++i) {
    auto idx = out.index_of(i);
    for (size_t k = 0; k < idx.size(); ++k) idx[k] += off[k];
    out.data[static_cast<size_t>(i)] = x.data[static_cast<size_t>(x.flat(idx))];
  }
  return out;
}

// Runs one flattened program. `comm` is null for the spec (no communication).
template <class F>
class Executor {
 public:
  using Env = std::map<std::string, Tensor<F>>;
  using OnDefine = std::function<void(const std::string&, const ir::Instr&, const Tensor<F>&)>;

  Executor(const RunOptions& o, const ir::TypeMap* types, Communicator* comm, const ir::Plan* plan)
      : o_(o),
        types_(types),
        comm_(comm),
        plan_(plan),
        k_(KernelConfig{o.dtype, o.order, o.blas, o.device}) {}

  void define(Env& env, const std::string& name, Tensor<F> v, const ir::Instr& ins,
              const OnDefine& on) {
    if (is_float(types_, name)) {
      if (o_.perturb) perturb(name, v);
      round_to(o_.dtype, v);
    }
    auto& slot = env[name] = std::move(v);
    if (on) on(name, ins, slot);
  }

  // Monte Carlo arithmetic: x (1 + u 2^-(p-1)) with u in [-1, 1) from a hash
  // of the value's name and the element (p: the significand bits of `dtype`),
  // so values that the spec computes alike (the rows of a sequence whose
  // tokens are all equal) no longer round alike, as they do not in a plan
  // that computes them on different ranks or in other blocks.
  void perturb(const std::string& name, Tensor<F>& v) const {
    const double ulp = o_.dtype == DType::f64    ? 0x1p-52
                       : o_.dtype == DType::bf16 ? 0x1p-7
                                                 : 0x1p-23;
    uint64_t h = 1469598103934665603ULL;  // FNV-1a of the name
    for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ULL;
    for (size_t i = 0; i < v.data.size(); ++i) {
      uint64_t z = h + 0x9e3779b97f4a7c15ULL * (i + 1);  // splitmix64
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      const double u = static_cast<double>(z >> 11) * 0x1p-52 - 1.0;  // [-1, 1)
      v.data[i] = static_cast<F>(static_cast<long double>(v.data[i]) * (1.0L + u * ulp));
    }
  }

  void run(const std::vector<ir::Instr>& code, const ir::Bindings& base, Env& env,
           const OnDefine& on) {
    for (const ir::Instr& ins : code) {
      if (ins.kind == ir::Instr::bind) {
        std::vector<Tensor<F>> vals;
        for (const auto& s : ins.src()) vals.push_back(get(env, s));
        for (size_t i = 0; i < ins.dst().size(); ++i)
          define(env, ins.dst()[i], std::move(vals[i]), ins, on);
        continue;
      }
      const ir::Op& op = *ins.op;
      ir::Bindings b = base;
      for (const auto& [k, v] : ins.loop()) b[k] = v;
      try {
        step(op, ins, b, env, on);
      } catch (const CommError&) {
        throw;  // already names the rank and op
      } catch (const std::bad_alloc&) {
        throw ir::EvalError(fmt::format(
            "at '{}': out of memory (the plan's tensors are too large to run at the sizes given; the limit is "
            "PARITY_MAX_MEMORY_GB, default 80% of physical memory)",
            label_of(ins)));
      } catch (const std::exception& e) {
        throw ir::EvalError(fmt::format("at '{}': {}", label_of(ins), e.what()));
      }
    }
  }

 private:
  const Tensor<F>& get(const Env& env, const std::string& name) const {
    auto it = env.find(name);
    if (it == env.end()) throw ir::EvalError("value '" + name + "' is not defined");
    return it->second;
  }

  void step(const ir::Op& op, const ir::Instr& ins, const ir::Bindings& b, Env& env,
            const OnDefine& on) {
    const bool p2p = op.kind == "send" || op.kind == "recv";
    if ((p2p || is_collective(op)) && !comm_)
      throw ir::EvalError("'" + op.kind + "' outside a plan program");
    if (op.kind == "send") {
      comm_->send(get(env, op.operands.at(0)), peer_of(op, b), ir::sem::int_attr(op, "tag", b, 0),
                  label_of(ins));
      return;
    }
    if (op.kind == "recv") {
      Tensor<F> v = comm_->recv<F>(ir::sem::ints_attr(op, "shape", b), peer_of(op, b),
                                   ir::sem::int_attr(op, "tag", b, 0), label_of(ins));
      define(env, op.results.at(0), std::move(v), ins, on);
      return;
    }
    if (is_collective(op)) {
      define(env, op.results.at(0), comm_->run(collective(op, ins, b), get(env, op.operands.at(0))),
             ins, on);
      return;
    }
    std::vector<const Tensor<F>*> in;
    for (const auto& name : op.operands) in.push_back(&get(env, name));
    auto res = k_.run(op, in, b);
    if (res.size() < op.results.size()) throw ir::EvalError("op gives fewer results than it names");
    for (size_t i = 0; i < op.results.size(); ++i)
      define(env, op.results[i], std::move(res[i]), ins, on);
  }

  int64_t peer_of(const ir::Op& op, const ir::Bindings& b) const {
    const ir::Attr* a = op.attr("peer");
    if (!a || !std::holds_alternative<ir::Coords>(*a))
      throw ir::EvalError("missing attribute 'peer'");
    ir::Coord c = plan_->mesh.coord_of(comm_->rank());
    for (const auto& [axis, e] : std::get<ir::Coords>(*a)) {
      auto i = plan_->mesh.axis_index(axis);
      if (!i) throw ir::EvalError("peer names unknown mesh axis '" + axis + "'");
      c[*i] = e.eval(b);
      if (c[*i] < 0 || c[*i] >= plan_->mesh.axes[*i].size)
        throw ir::EvalError(fmt::format("peer {}={} is outside the mesh", axis, c[*i]));
    }
    return plan_->mesh.rank_of(c);
  }

  Collective collective(const ir::Op& op, const ir::Instr& ins, const ir::Bindings& b) const {
    Collective c;
    c.kind = op.kind == "allreduce"        ? CollKind::allreduce
             : op.kind == "allgather"      ? CollKind::allgather
             : op.kind == "reduce_scatter" ? CollKind::reduce_scatter
             : op.kind == "all_to_all"     ? CollKind::all_to_all
                                           : CollKind::broadcast;
    std::string red = "sum";
    if (const ir::Attr* a = op.attr("reduce"); a && std::holds_alternative<std::string>(*a))
      red = std::get<std::string>(*a);
    auto r = parse_reduce_op(red);
    if (!r) throw ir::EvalError("reduce must be sum, avg or max, got '" + red + "'");
    c.op = *r;
    c.dim = ir::sem::int_attr(op, "dim", b, 0);
    c.split_dim = ir::sem::int_attr(op, "split_dim", b, 0);
    c.concat_dim = ir::sem::int_attr(op, "concat_dim", b, 0);
    c.root = ir::sem::int_attr(op, "root", b, 0);
    c.group = group_of(op);
    c.label = label_of(ins);
    return c;
  }

  Group group_of(const ir::Op& op) const {
    int64_t r = comm_->rank();
    if (const ir::Attr* a = op.attr("axes"); a && std::holds_alternative<ir::Strings>(*a))
      return plan_->mesh.group_along(r, std::get<ir::Strings>(*a));
    if (const ir::Attr* a = op.attr("groups"); a && std::holds_alternative<ir::Groups>(*a))
      for (const auto& g : std::get<ir::Groups>(*a))
        if (std::find(g.begin(), g.end(), r) != g.end()) return g;
    throw ir::EvalError("rank is in no group of '" + op.label() + "'");
  }

  const RunOptions& o_;
  const ir::TypeMap* types_;
  Communicator* comm_;
  const ir::Plan* plan_;
  Kernels<F> k_;
};

// The partitions of the world that the plan's collectives use, in plan order.
std::vector<std::vector<Group>> partitions(const ir::Plan& p) {
  std::vector<std::vector<Group>> out;
  std::set<std::vector<Group>> seen;
  std::function<void(const ir::Graph&)> walk = [&](const ir::Graph& g) {
    for (const auto& op : g.ops) {
      for (const auto& reg : op.regions) walk(reg);
      if (!is_collective(op)) continue;
      std::vector<Group> part;
      if (const ir::Attr* a = op.attr("axes"); a && std::holds_alternative<ir::Strings>(*a)) {
        std::set<Group> groups;
        std::set<ir::Coord> keys;  // each group built once, not once per member
        const ir::Strings& axes = std::get<ir::Strings>(*a);
        for (int64_t r = 0; r < p.mesh.num_ranks(); ++r)
          if (keys.insert(p.mesh.off_axes(r, axes)).second) groups.insert(p.mesh.group_along(r, axes));
        part.assign(groups.begin(), groups.end());
      } else if (const ir::Attr* a = op.attr("groups");
                 a && std::holds_alternative<ir::Groups>(*a)) {
        part = std::get<ir::Groups>(*a);
      }
      if (!part.empty() && seen.insert(part).second) out.push_back(part);
    }
  };
  for (const auto& prog : p.programs) walk(prog.graph);
  return out;
}

template <class F>
RankOutcome run_rank(const Setup& st, Communicator& comm, const Values& inputs) {
  RankOutcome out;
  const ir::Plan& p = st.c.plan;
  const int64_t r = comm.rank();
  const ir::Program* prog = p.program_of(r);
  if (!prog) return out;  // idle rank
  try {
    ir::Bindings b = p.rank_bindings(r);
    for (const auto& [k, v] : st.dims) b.emplace(k, v);
    auto tit = st.types.find(prog->name);
    Executor<F> ex(st.o, tit == st.types.end() ? nullptr : &tit->second, &comm, &p);
    auto on = [&](const std::string& name, const ir::Instr& ins, const Tensor<F>& v) {
      auto it = st.placed.find({prog->name, name});
      if (it == st.placed.end()) return;
      ir::Bindings vb = b;
      for (const auto& [k, x] : ins.loop()) vb[k] = x;
      std::string op = ins.op                        ? ins.op->label()
                       : ins.kind == ir::Instr::bind ? "loop result"
                                                     : "program input";
      for (size_t idx : it->second)
        out.values.push_back(PlacedValue{idx, r, ins.iter, vb, op, ins.seq, to_double(v)});
    };
    typename Executor<F>::Env env;
    for (const auto& name : prog->graph.inputs) {
      const ir::Placement* src = nullptr;
      if (auto it = st.placed.find({prog->name, name}); it != st.placed.end())
        for (size_t idx : it->second)
          if (p.placements[idx].kind == ir::PlacementKind::region &&
              inputs.count(p.placements[idx].spec_value))
            src = &p.placements[idx];
      if (!src) throw ir::EvalError("input '" + name + "' has no region placement on a spec input");
      const ir::Tensor<double>& sv = inputs.at(src->spec_value);
      std::vector<int64_t> off(sv.rank(), 0), size = sv.shape;
      for (size_t k = 0; k < src->region.size() && k < sv.rank(); ++k) {
        off[k] = src->region[k].offset.eval(b);
        size[k] = src->region[k].size.eval(b);
      }
      ex.define(env, name, to<F>(extract(sv, off, size)), ir::Instr{}, on);
    }
    ex.run(st.code.at(prog->name), b, env, on);
  } catch (const PeerFailed& e) {
    out.kind = RankOutcome::peer_failed, out.error = e.what();
  } catch (const CommTimeout& e) {
    out.kind = RankOutcome::timed_out, out.error = e.what();
  } catch (const CommError& e) {
    out.kind = RankOutcome::failed, out.error = e.what();
  } catch (const std::exception& e) {
    out.kind = RankOutcome::failed;
    out.error = fmt::format("rank {}: program {}: {}", p.mesh.rank_str(r), prog->name, e.what());
  }
  if (out.kind != RankOutcome::ok) comm.abort(out.error);
  return out;
}

RankOutcome run_rank_any(const Setup& st, Communicator& comm, const Values& inputs) {
  return st.o.dtype == DType::f64 ? run_rank<double>(st, comm, inputs)
                                  : run_rank<float>(st, comm, inputs);
}

// Merges the ranks' outcomes, or throws the errors with the cause first: a
// rank's own failure, then timeouts, then ranks that stopped because of another.
PlanRun collect(std::vector<RankOutcome> outs) {
  std::vector<std::pair<int, std::string>> errs;
  PlanRun run;
  for (auto& o : outs) {
    if (o.kind != RankOutcome::ok) errs.emplace_back(o.kind, o.error);
    for (auto& v : o.values) run.values.push_back(std::move(v));
  }
  if (!errs.empty()) {
    std::stable_sort(errs.begin(), errs.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> msgs;
    for (const auto& [k, m] : errs)
      if (k != RankOutcome::peer_failed || msgs.empty()) msgs.push_back(m);
    throw RunError(msgs);
  }
  std::stable_sort(run.values.begin(), run.values.end(),
                   [](const PlacedValue& a, const PlacedValue& b) {
                     return a.seq != b.seq ? a.seq < b.seq : a.rank < b.rank;
                   });
  return run;
}

template <class F>
Values run_spec_t(const ir::Case& c, const Values& inputs, const RunOptions& o) {
  const ir::Spec& s = *c.spec;
  ir::DiagList d;
  ir::TypeMap types;
  ir::validate_spec(s, "", d, &types);
  Executor<F> ex(o, &types, nullptr, nullptr);
  typename Executor<F>::Env env;
  for (const auto& name : s.graph.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end()) throw ir::InvalidInput("no value for spec input '" + name + "'");
    ex.define(env, name, to<F>(it->second), ir::Instr{}, {});
  }
  ex.run(unrolled(s.graph, s.dims, "the spec"), s.dims, env, {});
  Values out;
  for (const auto& [k, v] : env) out[k] = to_double(v);
  return out;
}

}  // namespace

Values run_spec(const ir::Case& c, const Values& inputs, const RunOptions& o) {
  if (!c.spec) throw ir::InvalidInput("the case has no spec to run");
  return o.dtype == DType::f64 ? run_spec_t<double>(c, inputs, o) : run_spec_t<float>(c, inputs, o);
}

PlanRun run_plan(const ir::Case& c, const Values& inputs, const RunOptions& o,
                 Communicator* world) {
  const ir::Plan& p = c.plan;
  const int64_t n = p.mesh.num_ranks();
  if (p.programs.empty()) throw ir::InvalidInput("the case has no plan to run");
  Setup st = make_setup(c, o);
  auto names = [&p](int64_t r) { return "rank " + p.mesh.rank_str(r); };
  int64_t active = 0;
  for (int64_t r = 0; r < n; ++r) active += p.program_of(r) != nullptr;

  if (o.ranks == Ranks::threads) {
    ThreadWorld tw(n);
    std::vector<std::unique_ptr<Communicator>> comms;
    for (int64_t r = 0; r < n; ++r) {
      comms.push_back(tw.comm(r));
      comms.back()->set_timeout(o.timeout_s);
      comms.back()->set_rank_names(names);
    }
    std::vector<RankOutcome> outs(static_cast<size_t>(n));
    auto t0 = Clock::now();
    std::vector<std::thread> threads;
    std::string no_thread;  // why a rank's thread could not start (the system's thread limit)
    for (int64_t r = 0; r < n && no_thread.empty(); ++r) {
      try {
        threads.emplace_back([&, r] {
          outs[static_cast<size_t>(r)] = run_rank_any(st, *comms[static_cast<size_t>(r)], inputs);
        });
      } catch (const std::system_error& e) {
        no_thread = e.what();
      }
    }
    // The ranks started wait for the others until their timeout.
    for (auto& t : threads) t.join();
    if (!no_thread.empty())
      throw Unsupported(fmt::format("could not start a thread for each of the {} ranks ({}); run the reduced "
                                    "instance (`parity reduce`) or --ranks mpi",
                                    n, no_thread));
    double secs = since(t0);
    PlanRun run = collect(std::move(outs));
    run.seconds = secs;
    run.ranks = active;
    return run;
  }

  if (!world) throw Unsupported("--ranks mpi needs an MPI communicator");
  if (world->size() != n)
    throw ir::InvalidInput(
        fmt::format("the plan's mesh has {} ranks but {} processes run it (mpirun -np must equal "
                    "the mesh size)",
                    n, world->size()));
  world->set_timeout(o.timeout_s);
  world->set_rank_names(names);
  world->prepare(partitions(p));
  auto t0 = Clock::now();
  RankOutcome mine = run_rank_any(st, *world, inputs);
  auto blobs = world->gather_bytes(encode_outcome(mine), 0);
  double secs = since(t0);
  if (world->rank() != 0) {
    PlanRun run;
    run.root = false;
    return run;
  }
  std::vector<RankOutcome> outs;
  for (const auto& b : blobs) outs.push_back(decode_outcome(b));
  PlanRun run = collect(std::move(outs));
  run.seconds = secs;
  run.ranks = active;
  return run;
}

std::vector<Piece> assemble(const ir::Plan& p, const std::vector<PlacedValue>& values) {
  std::vector<Piece> out;
  // Members of one partial sum: same spec value, iteration, coordinates off
  // the summed axes (in an MPMD plan they come from different programs) and
  // region (an unrolled pipeline schedule places each microbatch's partial
  // sum on its own rows of one spec value, outside any loop).
  // And which of a program's partial placements of that region it is
  // (ir::partial_ordinals): two values placed as partials of one region are
  // two sums.
  using Key = std::tuple<std::string, std::vector<std::string>, std::string, ir::Coord,
                         std::vector<int64_t>, uint32_t>;
  std::map<Key, std::vector<size_t>> groups;
  std::vector<Key> order;
  const std::vector<uint32_t> ordinal = ir::partial_ordinals(p);
  for (size_t i = 0; i < values.size(); ++i) {
    const PlacedValue& v = values[i];
    const ir::Placement& pl = p.placements[v.placement];
    if (pl.kind == ir::PlacementKind::region) continue;
    ir::Coord c = p.mesh.coord_of(v.rank);
    for (const auto& a : pl.axes)
      if (auto k = p.mesh.axis_index(a)) c[*k] = -1;
    std::vector<std::string> axes = pl.axes;
    std::sort(axes.begin(), axes.end());
    std::vector<int64_t> box;
    for (const auto& r : pl.region) {
      box.push_back(r.offset.eval(v.b));
      box.push_back(r.size.eval(v.b));
    }
    Key key{pl.spec_value, axes, v.iter, c, std::move(box), ordinal[v.placement]};
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(i);
  }
  auto piece = [&](const std::vector<size_t>& members) {
    const PlacedValue& first = values[members[0]];
    const ir::Placement& pl = p.placements[first.placement];
    Piece pc;
    pc.spec_value = pl.spec_value;
    pc.seq = first.seq;
    pc.value = first.value;
    std::string ranks;
    for (size_t k = 0; k < members.size(); ++k) {
      const PlacedValue& m = values[members[k]];
      ranks += (k ? " + rank " : "rank ") + p.mesh.rank_str(m.rank);
      if (k == 0) continue;
      if (m.value.shape != pc.value.shape)
        throw ir::EvalError("members of the partial sum of '" + pl.spec_value +
                            "' differ in shape");
      for (size_t e = 0; e < pc.value.data.size(); ++e) pc.value.data[e] += m.value.data[e];
    }
    pc.where = fmt::format("{}.{} on {}{}", pl.program, pl.value, ranks,
                           first.iter.empty() ? "" : " (" + first.iter + ")");
    pc.offset.assign(pc.value.rank(), 0);
    for (size_t k = 0; k < pl.region.size() && k < pc.offset.size(); ++k)
      pc.offset[k] = pl.region[k].offset.eval(first.b);
    return pc;
  };
  for (size_t i = 0; i < values.size(); ++i)
    if (p.placements[values[i].placement].kind == ir::PlacementKind::region)
      out.push_back(piece({i}));
  for (const auto& key : order) out.push_back(piece(groups[key]));
  std::stable_sort(out.begin(), out.end(),
                   [](const Piece& a, const Piece& b) { return a.seq < b.seq; });
  return out;
}

}  // namespace parity::exec
