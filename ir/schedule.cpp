// Deadlock and matching check: every rank's sequence of communication ops is
// unrolled (loops included) and simulated. Sends are buffered (like NCCL
// grouped isend), receives block, a collective completes when every member of
// its group has reached it.
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "ir/validate.h"

namespace parity::ir {

namespace {

struct Event {
  const Op* op;
  enum Kind { coll, send, recv } kind;
  int64_t group = -1;  // interned group id (coll)
  int64_t peer = -1;   // peer rank (send/recv)
  int64_t tag = 0;
  std::string iter;    // loop indices, for messages (`mb=3`)
};

template <class A>
const A* attr_as(const Op& op, const char* name) {
  const Attr* a = op.attr(name);
  return a ? std::get_if<A>(a) : nullptr;
}

struct Sim {
  const Plan& p;
  const std::map<std::string, TypeMap>& types;
  const std::string& file;
  DiagList& out;
  std::map<std::vector<int64_t>, int64_t> group_ids;
  std::vector<std::vector<int64_t>> groups;
  std::set<int64_t> explicit_groups;  // named by a `groups` attribute
  std::vector<std::vector<Event>> events;
  std::vector<const Program*> prog_of;
  bool failed = false;
  size_t budget = kScheduleBudget;  // events; beyond it the check is skipped with a note

  void err(int64_t rank, const Op* op, const std::string& msg) {
    Diag d{file, prog_of[rank] ? prog_of[rank]->name : "", op ? op->label() : "", p.mesh.rank_str(rank), msg};
    if (op && op->line > 0)
      d.line = op->line, d.col = op->col;
    else if (prog_of[rank] && prog_of[rank]->line > 0)
      d.line = prog_of[rank]->line, d.col = prog_of[rank]->col;
    d.check = "schedule";
    out.add(d);
    failed = true;
  }

  int64_t intern(std::vector<int64_t> g) {
    auto [it, fresh] = group_ids.emplace(std::move(g), static_cast<int64_t>(groups.size()));
    if (fresh) groups.push_back(it->first);
    return it->second;
  }

  // The ops of a graph that unrolling looks at (loops and communication),
  // with their attributes found once rather than per rank: every other op is
  // skipped without a look.
  struct CommOp {
    const Op* op = nullptr;
    enum Kind { loop, axes, groups, send, recv } kind = loop;
    const DimExpr* count = nullptr;  // loop
    std::string var;                 // loop: `$` + its variable
    const Strings* axis_names = nullptr;
    const Groups* group_list = nullptr;
    const Coords* peer = nullptr;
    const DimExpr* tag = nullptr;
  };
  std::unordered_map<const Graph*, std::vector<CommOp>> comm_ops{};

  const std::vector<CommOp>& comm_ops_of(const Graph& g) {
    if (auto it = comm_ops.find(&g); it != comm_ops.end()) return it->second;
    std::vector<CommOp> out;  // filled before it is stored: the walk below inserts bodies' lists
    for (const auto& op : g.ops) {
      CommOp c;
      c.op = &op;
      // Malformed attributes are the op checker's to report: such an op is skipped here.
      if (op.kind == "loop") {
        c.count = attr_as<DimExpr>(op, "count");
        const std::string* var = attr_as<std::string>(op, "var");
        if (!c.count || !var || op.regions.empty()) continue;
        // A loop with no communication adds no events: not walked (a count of
        // 10^12 would be walked for nothing).
        if (comm_ops_of(op.regions[0]).empty()) continue;
        c.var = "$" + *var;
      } else if (const Attr* ax = op.attr("axes"); ax && std::holds_alternative<Strings>(*ax)) {
        c.kind = CommOp::axes;
        c.axis_names = &std::get<Strings>(*ax);
      } else if (const Attr* gr = op.attr("groups"); gr && std::holds_alternative<Groups>(*gr)) {
        c.kind = CommOp::groups;
        c.group_list = &std::get<Groups>(*gr);
      } else if (op.kind == "send" || op.kind == "recv") {
        c.kind = op.kind == "send" ? CommOp::send : CommOp::recv;
        c.peer = attr_as<Coords>(op, "peer");
        c.tag = attr_as<DimExpr>(op, "tag");
        if (!c.peer || !c.tag) continue;
      } else {
        continue;
      }
      out.push_back(std::move(c));
    }
    return comm_ops[&g] = std::move(out);  // element references survive rehashing
  }

  // Group ids of this rank's `axes` collectives, by axis list (cleared per rank).
  std::map<Strings, int64_t> axes_group{};
  // Group ids by axis list and the coordinates off those axes (-1 on them).
  std::map<std::pair<Strings, Coord>, int64_t> axes_groups{};

  void unroll(int64_t rank, const Graph& g, Bindings& b, std::string iter) {
    for (const CommOp& c : comm_ops_of(g)) {
      if (failed) return;
      const Op& op = *c.op;
      if (c.kind == CommOp::loop) {
        int64_t n = c.count->eval(b);
        const std::string var = c.var.substr(1);
        for (int64_t k = 0; k < n && events[rank].size() <= budget && !failed; ++k) {
          b[c.var] = k;
          unroll(rank, op.regions[0], b, iter + (iter.empty() ? "" : ",") + var + "=" + std::to_string(k));
        }
        b.erase(c.var);
        continue;
      }
      if (events[rank].size() > budget) return;
      if (c.kind == CommOp::axes) {
        auto [it, fresh] = axes_group.try_emplace(*c.axis_names, -1);
        if (fresh) {
          // The group is named by its axes and the rank's coordinates off
          // them: its member list is built and interned once per group, not
          // once per rank (a group of 65536 ranks compared 65536 times).
          auto [jt, first] = axes_groups.try_emplace({*c.axis_names, p.mesh.off_axes(rank, *c.axis_names)}, -1);
          if (first) jt->second = intern(p.mesh.group_along(rank, *c.axis_names));
          it->second = jt->second;
        }
        events[rank].push_back({&op, Event::coll, it->second, -1, 0, iter});
      } else if (c.kind == CommOp::groups) {
        for (const auto& grp : *c.group_list)
          if (std::find(grp.begin(), grp.end(), rank) != grp.end()) {
            int64_t id = intern(grp);
            explicit_groups.insert(id);
            events[rank].push_back({&op, Event::coll, id, -1, 0, iter});
          }
      } else {
        Coord co = p.mesh.coord_of(rank);
        for (const auto& [axis, e] : *c.peer) {
          size_t i = *p.mesh.axis_index(axis);
          int64_t v;
          if (!e.try_eval(b, v) || v < 0 || v >= p.mesh.axes[i].size) {
            err(rank, &op, "peer " + axis + "=" + e.str() + (e.try_eval(b, v) ? " = " + std::to_string(v) : std::string()) +
                               " is outside the mesh (axis size " + std::to_string(p.mesh.axes[i].size) + ")" +
                               (iter.empty() ? "" : " at " + iter));
            return;
          }
          co[i] = v;
        }
        int64_t tag = 0;
        if (!c.tag->try_eval(b, tag)) {
          std::string why = "overflow, division by zero or an inexact division";
          try {
            c.tag->eval(b);
          } catch (const std::exception& e) {
            why = e.what();  // names the unbound symbol, or the division
          }
          err(rank, &op, "tag " + c.tag->str() + " cannot be evaluated (" + why + ")" + (iter.empty() ? "" : " at " + iter));
          return;
        }
        int64_t peer = p.mesh.rank_of(co);
        if (peer == rank) {
          err(rank, &op, op.kind + " to itself" + (iter.empty() ? "" : " at " + iter));
          return;
        }
        events[rank].push_back({&op, c.kind == CommOp::send ? Event::send : Event::recv, -1, peer, tag, iter});
      }
    }
  }

  std::string where(const Event& e) const { return "'" + e.op->label() + "'" + (e.iter.empty() ? "" : " (" + e.iter + ")"); }

  // Two ranks agree on a collective when kind and attributes match.
  static bool same_collective(const Event& a, const Event& b) {
    if (a.op == b.op) return true;  // one op of one program (SPMD), read by both
    if (a.op->kind != b.op->kind) return false;
    for (const char* k : {"reduce", "dim", "split_dim", "concat_dim", "root"}) {
      const Attr* x = a.op->attr(k);
      const Attr* y = b.op->attr(k);
      if ((x == nullptr) != (y == nullptr) || (x && attr_str(*x) != attr_str(*y))) return false;
    }
    return true;
  }

  // The shape a rank sends (`sent`) or receives with `op`. Asked for every
  // receive and every member of every collective, so the type is found once
  // per op and a shape without coordinates evaluated once.
  struct OpType {
    const TensorType* type = nullptr;  // nullptr: the value has no known type
    bool per_rank = false;             // its dims name a coordinate (`$tp`)
    std::vector<int64_t> shape;        // evaluated, when not per rank
  };
  std::map<std::pair<const Op*, bool>, OpType> op_types{};
  std::map<int64_t, Bindings> rank_b{};

  std::vector<int64_t> eval_shape(const TensorType& t, const Bindings& b) const {
    std::vector<int64_t> s;
    for (const auto& d : t.shape) {
      int64_t x = -1;
      d.try_eval(b, x);
      s.push_back(x);
    }
    return s;
  }

  const Bindings& bindings_of(int64_t rank) {
    auto it = rank_b.find(rank);
    if (it == rank_b.end()) it = rank_b.emplace(rank, p.rank_bindings(rank)).first;
    return it->second;
  }

  std::vector<int64_t> type_of(int64_t rank, const Op& op, bool sent) {
    auto [it, fresh] = op_types.try_emplace({&op, sent});
    OpType& ot = it->second;
    if (fresh) {
      // Every rank running `op` runs the same program, so its type is that program's.
      const TypeMap& t = types.at(prog_of[rank]->name);
      const std::string& v = sent ? op.operands.at(0) : op.results.at(0);
      if (auto ti = t.find(v); ti != t.end()) {
        ot.type = &ti->second;
        std::set<std::string> syms;
        for (const auto& d : ot.type->shape) d.symbols(syms);
        for (const auto& x : syms) ot.per_rank |= !x.empty() && x[0] == '$';
        if (!ot.per_rank) ot.shape = eval_shape(*ot.type, bindings_of(rank));
      }
    }
    if (!ot.type) return {};
    return ot.per_rank ? eval_shape(*ot.type, bindings_of(rank)) : ot.shape;
  }

  // The dtype a rank sends or receives with `op` (f32 when its value has no
  // known type): a bf16 buffer receiving f32 bytes is another transfer size.
  std::string dtype_of(int64_t rank, const Op& op, bool sent) {
    type_of(rank, op, sent);
    const OpType& ot = op_types.at({&op, sent});
    return ot.type ? dtype_name(ot.type->dtype) : "";
  }
  // Type and shape, as the messages print them: "bf16[4,8]".
  std::string type_str(int64_t rank, const Op& op, bool sent) {
    auto s = type_of(rank, op, sent);
    return dtype_of(rank, op, sent) + shape_str(s);
  }
  bool same_type(int64_t r1, const Op& o1, bool s1, int64_t r2, const Op& o2, bool s2) {
    return type_of(r1, o1, s1) == type_of(r2, o2, s2) && dtype_of(r1, o1, s1) == dtype_of(r2, o2, s2);
  }

  static std::string shape_str(const std::vector<int64_t>& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
  }

  // "allreduce (reduce=sum) of [4,8]"
  std::string coll_str(int64_t rank, const Event& e) {
    std::string s = e.op->kind;
    std::string a;
    for (const char* k : {"reduce", "dim", "split_dim", "concat_dim", "root"})
      if (const Attr* x = e.op->attr(k))
        a += (a.empty() ? "" : ", ") + std::string(k) + "=" + attr_str(*x);
    if (!a.empty()) s += " (" + a + ")";
    return s + " of " + type_str(rank, *e.op, true);
  }

  std::string group_str(int64_t g) const {
    std::string s = "{";
    for (size_t i = 0; i < groups[g].size(); ++i)
      s += (i ? ", " : "") + p.mesh.rank_str(groups[g][i]);
    return s + "}";
  }

  // An explicit group whose members run different programs: each member's
  // sequence of collectives over the group must agree position by position
  // (kind, attributes, operand shape) with the first member's. Within one
  // program the ops are the same; across programs nothing else says so.
  void match_explicit_groups() {
    std::map<int64_t, std::map<int64_t, std::vector<const Event*>>> seq;  // group -> rank -> events
    for (int64_t g : explicit_groups) {
      const Program* first = prog_of[groups[g][0]];
      bool mixed = false;
      for (int64_t r : groups[g]) mixed |= prog_of[r] != first;
      if (mixed) seq[g];
    }
    if (seq.empty()) return;
    for (size_t r = 0; r < events.size(); ++r)
      for (const auto& e : events[r])
        if (e.kind == Event::coll)
          if (auto it = seq.find(e.group); it != seq.end())
            it->second[static_cast<int64_t>(r)].push_back(&e);
    for (auto& [g, by_rank] : seq) {
      const int64_t r0 = groups[g][0];
      const auto& ref = by_rank[r0];
      for (int64_t q : groups[g]) {
        if (q == r0) continue;
        const auto& mine = by_rank[q];
        const std::string who =
            " of rank " + p.mesh.rank_str(r0) + " (program '" + prog_of[r0]->name + "')";
        for (size_t k = 0; k < std::max(ref.size(), mine.size()); ++k) {
          const std::string nth =
              "collective #" + std::to_string(k + 1) + " over the explicit group " + group_str(g);
          if (k >= mine.size()) {
            err(q, nullptr,
                nth + " is missing: this rank issues only " + std::to_string(mine.size()) +
                    " collectives over the group; expected " + coll_str(r0, *ref[k]) + " as " +
                    where(*ref[k]) + who);
          } else if (k >= ref.size()) {
            err(q, mine[k]->op,
                nth + " at " + where(*mine[k]) + " has no counterpart: rank " +
                    p.mesh.rank_str(r0) + " (program '" + prog_of[r0]->name + "') issues only " +
                    std::to_string(ref.size()) + " collectives over the group");
          } else if (!same_collective(*ref[k], *mine[k]) ||
                     !same_type(q, *mine[k]->op, true, r0, *ref[k]->op, true)) {
            err(q, mine[k]->op,
                nth + " is " + coll_str(q, *mine[k]) + " at " + where(*mine[k]) + "; expected " +
                    coll_str(r0, *ref[k]) + " as " + where(*ref[k]) + who);
          } else {
            continue;
          }
          break;
        }
        if (out.items.size() >= 8) return;
      }
    }
  }

  void run() {
    int64_t n = p.mesh.num_ranks();
    events.resize(n);
    prog_of.resize(n);
    size_t total = 0;
    for (int64_t r = 0; r < n && !failed; ++r) {
      prog_of[r] = p.program_of(r);
      if (!prog_of[r]) continue;
      Bindings b = p.rank_bindings(r);
      axes_group.clear();
      unroll(r, prog_of[r]->graph, b, "");
      total += events[r].size();
      // Too large to unroll: the verifier checks the schedule on the reduced mesh.
      if (total > budget) return;
    }
    if (failed) return;
    match_explicit_groups();
    if (failed) return;

    std::vector<size_t> pc(n, 0);
    std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<const Event*>> mailbox;  // (src, dst, tag)
    std::map<int64_t, std::vector<int64_t>> waiting;  // group -> ranks arrived
    std::vector<bool> arrived(n, false);
    // A rank that waits (for a message, or for its group to arrive) is
    // skipped until a send to it or its group's completion wakes it: the
    // sweeps then do what they did when every rank was retried, without the
    // retries (a 126-layer L3 sweeps thousands of times over 8192 ranks).
    std::vector<char> asleep(static_cast<size_t>(n), 0);
    bool progress = true;
    while (progress && !failed) {
      progress = false;
      for (int64_t r = 0; r < n && !failed; ++r) {
        if (asleep[static_cast<size_t>(r)]) continue;
        while (pc[r] < events[r].size() && !failed) {
          const Event& e = events[r][pc[r]];
          if (e.kind == Event::send) {
            mailbox[{r, e.peer, e.tag}].push_back(&e);
            if (e.peer >= 0 && e.peer < n) asleep[static_cast<size_t>(e.peer)] = 0;
            ++pc[r];
            progress = true;
          } else if (e.kind == Event::recv) {
            auto it = mailbox.find({e.peer, r, e.tag});
            if (it == mailbox.end() || it->second.empty()) {
              asleep[static_cast<size_t>(r)] = 1;
              break;
            }
            const Event* s = it->second.front();
            it->second.pop_front();
            if (!same_type(e.peer, *s->op, true, r, *e.op, false))
              err(r, e.op, "receives " + type_str(r, *e.op, false) + " but rank " + p.mesh.rank_str(e.peer) + " sends " +
                               type_str(e.peer, *s->op, true) + " at " + where(*s));
            ++pc[r];
            progress = true;
          } else {
            if (arrived[r]) break;
            arrived[r] = true;
            auto& w = waiting[e.group];
            w.push_back(r);
            if (w.size() < groups[e.group].size()) {
              asleep[static_cast<size_t>(r)] = 1;
              break;
            }
            // Everyone is here: they must all be issuing the same collective.
            const Event& e0 = events[w[0]][pc[w[0]]];
            for (int64_t q : w) {
              const Event& f = events[q][pc[q]];
              if (!same_collective(e0, f) || !same_type(q, *f.op, true, w[0], *e0.op, true)) {
                // Named against the first rank to arrive, what each issues.
                err(q, f.op, "ranks of one group issue different collectives: rank " + p.mesh.rank_str(w[0]) +
                                 " at " + where(e0) + ", " + coll_str(w[0], e0) + "; rank " + p.mesh.rank_str(q) +
                                 " at " + where(f) + ", " + coll_str(q, f) +
                                 " (collectives issued in different orders deadlock or mix data)");
                break;
              }
            }
            for (int64_t q : w) {
              arrived[q] = false;
              asleep[static_cast<size_t>(q)] = 0;
              ++pc[q];
            }
            w.clear();
            progress = true;
          }
        }
      }
    }
    if (failed) return;
    bool stuck = false;
    for (int64_t r = 0; r < n && out.items.size() < 8; ++r) {
      if (pc[r] >= events[r].size()) continue;
      stuck = true;
      const Event& e = events[r][pc[r]];
      std::string what;
      if (e.kind == Event::recv)
        what = "waits forever in recv from rank " + p.mesh.rank_str(e.peer) + " tag " + std::to_string(e.tag) + " at " + where(e);
      else {
        what = "waits forever in " + e.op->kind + " at " + where(e) + "; group members elsewhere:";
        int shown = 0;
        for (int64_t q : groups[e.group])
          if (q != r && shown < 3 && pc[q] < events[q].size() &&
              (events[q][pc[q]].op != e.op || events[q][pc[q]].group != e.group)) {
            what += " rank " + p.mesh.rank_str(q) + " at " + where(events[q][pc[q]]) + ";";
            ++shown;
          } else if (q != r && shown < 3 && pc[q] >= events[q].size()) {
            what += " rank " + p.mesh.rank_str(q) + " has finished;";
            ++shown;
          }
      }
      err(r, e.op, "deadlock: " + what);
    }
    // Sends nobody received: after a deadlock they are often its cause (a
    // send to the wrong peer or with the wrong tag leaves its receiver waiting).
    for (const auto& [key, q] : mailbox)
      if (!q.empty()) {
        if (out.items.size() >= 8) break;
        auto [src, dst, tag] = key;
        err(src, q.front()->op, "send to rank " + p.mesh.rank_str(dst) + " tag " + std::to_string(tag) + " at " +
                                    where(*q.front()) + " has no matching recv" +
                                    (stuck ? " (it was never received while the ranks above wait)" : ""));
      }
  }
};

}  // namespace

void check_schedule(const Plan& p, const std::map<std::string, TypeMap>& types, const std::string& file, DiagList& out,
                    size_t budget) {
  Sim s{p, types, file, out, {}, {}, {}, {}, {}};
  s.budget = budget;
  s.run();
}

}  // namespace parity::ir
