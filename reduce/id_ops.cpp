#include "reduce/id_ops.h"

#include <functional>
#include <set>
#include <variant>

#include "ir/id_ranges.h"
#include "ir/validate.h"
#include "reduce/walk.h"

namespace parity::reduce {

namespace {

// Which operand holds the ids, for the ops that compare ids with an offset.
int id_operand(const ir::Op& op) {
  if (op.kind == "one_hot" || op.kind == "embedding_grad") return 0;
  if (op.kind == "embedding" || op.kind == "pick") return 1;
  return -1;
}

// Ops whose result holds values of their operands: ir's shape ops, and the
// collectives that move values.
bool moves_values(const std::string& k) {
  return ir::moves_values(k) || k == "allgather" || k == "all_to_all" || k == "broadcast" ||
         k == "recv";
}

void producers(const ir::Graph& g, std::map<std::string, const ir::Op*>& out) {
  for (const auto& op : g.ops) {
    for (const auto& r : op.results) out[r] = &op;
    for (const auto& reg : op.regions) producers(reg, out);
  }
}

// Every program's producers and inputs, and the sends by tag: a received
// value holds what the matching sends carry.
struct Programs {
  struct One {
    std::map<std::string, const ir::Op*> prod;
    std::set<std::string> inputs;
  };
  std::vector<One> progs;
  std::map<std::string, std::vector<std::pair<size_t, const ir::Op*>>> sends;  // tag text -> sends
  explicit Programs(const ir::Plan& p) {
    progs.resize(p.programs.size());
    for (size_t i = 0; i < p.programs.size(); ++i) {
      producers(p.programs[i].graph, progs[i].prod);
      progs[i].inputs.insert(p.programs[i].graph.inputs.begin(), p.programs[i].graph.inputs.end());
      walk_ops(p.programs[i].graph, [&](const ir::Op& op) {
        if (op.kind == "send" && !op.operands.empty())
          if (const ir::Attr* t = op.attr("tag"); t && std::holds_alternative<ir::DimExpr>(*t))
            sends[std::get<ir::DimExpr>(*t).str()].push_back({i, &op});
      });
    }
  }
};

// Whether `v` (of program `at`) holds values of graph inputs only, through
// ops that move values and point-to-point transfers (a received value is
// what every send of its tag carries, in whichever program); false where it
// reaches anything else (a fill, arithmetic, a loop's carried value). Ids
// computed on one pipeline stage and sent to the one that compares them are
// computed ids (`recvid_bug_onehot_coord_from_recv_large`, once VERIFIED).
using Values = std::set<std::pair<size_t, std::string>>;  // (program, value)
bool sources(const Programs& ps, size_t at, const std::string& v, Values& seen, Values* out = nullptr) {
  if (!seen.insert({at, v}).second) return true;
  const Programs::One& pr = ps.progs[at];
  if (pr.inputs.count(v)) {
    if (out) out->insert({at, v});
    return true;
  }
  auto p = pr.prod.find(v);
  if (p == pr.prod.end()) return false;
  const ir::Op& op = *p->second;
  // Id 0 matches the first coordinate of a run and the first microbatch,
  // which every reduced instance keeps: `where(mask, labels, 0)` (a masked
  // label) stays ids of an input.
  if (op.kind == "fill") {
    const ir::Attr* a = op.attr("value");
    double x = 1;
    if (a && std::holds_alternative<double>(*a)) x = std::get<double>(*a);
    if (a && std::holds_alternative<ir::DimExpr>(*a) && std::get<ir::DimExpr>(*a).is_const())
      x = static_cast<double>(std::get<ir::DimExpr>(*a).const_value());
    return x == 0;
  }
  if (op.kind == "where") {  // the mask chooses; the values are those of operands 1 and 2
    for (size_t k = 1; k < op.operands.size(); ++k)
      if (!sources(ps, at, op.operands[k], seen, out)) return false;
    return true;
  }
  if (op.kind == "recv") {
    const ir::Attr* t = op.attr("tag");
    if (!t || !std::holds_alternative<ir::DimExpr>(*t)) return false;
    auto it = ps.sends.find(std::get<ir::DimExpr>(*t).str());
    if (it == ps.sends.end()) return false;
    for (const auto& [from, send] : it->second)
      if (!sources(ps, from, send->operands[0], seen, out)) return false;
    return true;
  }
  if (!moves_values(op.kind)) return false;
  for (const auto& o : op.operands)
    if (!sources(ps, at, o, seen, out)) return false;
  return true;
}

void offset_syms(const ir::Op& op, std::set<std::string>& syms) {
  for (const char* key : {"offset"})
    if (const ir::Attr* a = op.attr(key); a && std::holds_alternative<ir::DimExpr>(*a))
      std::get<ir::DimExpr>(*a).symbols(syms);
}

}  // namespace

void id_offset_blockers(const ir::Case& c, Why& axes, Why& frozen) {
  const Programs ps(c.plan);
  for (size_t pi = 0; pi < c.plan.programs.size(); ++pi) {
    const ir::Program& prog = c.plan.programs[pi];
    std::map<std::string, std::set<std::string>> counts;  // loop var -> symbols of its count
    std::function<void(const ir::Graph&)> walk = [&](const ir::Graph& g) {
      for (const auto& op : g.ops) {
        note_loop_count(op, counts);
        for (const auto& reg : op.regions) walk(reg);
        const int k = id_operand(op);
        if (k < 0 || static_cast<size_t>(k) >= op.operands.size()) continue;
        std::set<std::string> syms;
        offset_syms(op, syms);
        bool coord = false;
        for (const auto& s : syms) coord |= !s.empty() && s[0] == '$';
        if (!coord) continue;
        Values seen;
        if (sources(ps, pi, op.operands[static_cast<size_t>(k)], seen)) continue;
        // The coordinates, and the sizes the offset steps by (`$dp*(B/dp)`
        // meets an id 296 at dp = 37 only while B/dp is 8), are kept.
        const std::string why =
            "the offset of " + prog.name + " op " + op.label() +
            " reads a coordinate and meets ids the program computes (not ids of an input): "
            "the op is a switch on that coordinate";
        for (const auto& sym : syms) {
          if (sym.empty()) continue;
          const std::string x = sym[0] == '$' ? sym.substr(1) : sym;
          if (c.plan.mesh.axis_index(x))
            axes.emplace(x, why);
          else if (sym[0] != '$')
            frozen.emplace(x, why);
          if (sym[0] == '$')
            for (const auto& cs : counts[x]) frozen.emplace(cs, why);
        }
      }
    };
    walk(prog.graph);
  }
}

std::vector<IdLit> id_literals(const ir::Case& c, const ir::Bindings& given) {
  std::vector<IdLit> out;
  if (!c.spec) return out;
  // Most cases hold no literal that could be an id: skip typing the spec.
  {
    auto literal = [](const ir::Op& op, const char* key, double sign) {
      const ir::Attr* a = op.attr(key);
      double v = 0;
      if (a && std::holds_alternative<double>(*a)) v = std::get<double>(*a);
      if (a && std::holds_alternative<ir::DimExpr>(*a) && std::get<ir::DimExpr>(*a).is_const())
        v = static_cast<double>(std::get<ir::DimExpr>(*a).const_value());
      return sign * v >= 2;
    };
    bool any = false;
    std::function<void(const ir::Graph&)> scan = [&](const ir::Graph& g) {
      for (const auto& op : g.ops) {
        if (any) return;
        any = (op.kind == "fill" && literal(op, "value", 1)) ||
              (op.kind == "add_scalar" && literal(op, "value", -1)) ||
              (id_operand(op) >= 0 && literal(op, "offset", 1));
        for (const auto& reg : op.regions) scan(reg);
      }
    };
    scan(c.spec->graph);
    for (const auto& prog : c.plan.programs) scan(prog.graph);
    if (!any) return out;
  }
  // The symbolic range of the spec's id values (ir/id_ranges.cpp, as
  // expressions): the table each reaches, back through ops that move values.
  ir::DiagList ignored;
  const ir::TypeMap st = ir::check_graph(c.spec->graph, given, nullptr, ir::Diag{}, ignored);
  auto dim = [&](const std::string& v, size_t k) -> std::optional<ir::DimExpr> {
    auto it = st.find(v);
    if (it == st.end() || it->second.shape.size() <= k) return std::nullopt;
    return it->second.shape[k];
  };
  std::map<std::string, std::vector<ir::DimExpr>> range;
  std::map<std::string, const ir::Op*> sprod;
  producers(c.spec->graph, sprod);
  std::function<void(const ir::Graph&)> ranges = [&](const ir::Graph& g) {
    for (const auto& op : g.ops) {
      for (const auto& reg : op.regions) ranges(reg);
      std::optional<ir::DimExpr> n;
      std::string ids;
      if (op.kind == "embedding" && op.operands.size() >= 2)
        n = dim(op.operands[0], 0), ids = op.operands[1];
      if ((op.kind == "cross_entropy" || op.kind == "cross_entropy_grad" || op.kind == "pick") &&
          op.operands.size() >= 2)
        n = dim(op.operands[1 - 1], 1), ids = op.operands[1];
      for (const char* key : {"vocab", "depth"})
        if ((op.kind == "embedding_grad" || op.kind == "one_hot") && !op.operands.empty())
          if (const ir::Attr* a = op.attr(key); a && std::holds_alternative<ir::DimExpr>(*a))
            n = std::get<ir::DimExpr>(*a), ids = op.operands[0];
      if (!n || ids.empty()) continue;
      std::vector<std::string> work{ids};
      std::set<std::string> seen;
      while (!work.empty()) {
        std::string v = work.back();
        work.pop_back();
        if (!seen.insert(v).second) continue;
        range[v].push_back(*n);
        auto p = sprod.find(v);
        if (p != sprod.end() && moves_values(p->second->kind))
          for (const auto& o : p->second->operands) work.push_back(o);
      }
    }
  };
  ranges(c.spec->graph);
  // Literal ids among the values an id operand is computed from (up to 64
  // values back, stopping at other id ops): a clamp `minimum(ids, 32766)`
  // or a shift `add_scalar(ids, -32000)` before a comparison with 0.
  // A received value is followed into the programs that send it (a clamp
  // on one pipeline stage, the embedding on the next:
  // `recvid_bug_clamp_literal_through_recv`, once VERIFIED).
  const Programs ps(c.plan);
  constexpr size_t kSpec = static_cast<size_t>(-1);
  auto cone_literals = [&](const std::string& v, size_t at, std::vector<std::pair<int64_t, std::string>>& ks) {
    std::vector<std::pair<size_t, std::string>> work{{at, v}};
    Values seen;
    for (size_t budget = 64; !work.empty() && budget > 0; --budget) {
      const auto [in, x] = work.back();
      work.pop_back();
      if (!seen.insert({in, x}).second) continue;
      const auto& prod = in == kSpec ? sprod : ps.progs[in].prod;
      auto p = prod.find(x);
      if (p == prod.end()) continue;
      const ir::Op& op = *p->second;
      if (op.kind == "recv" && in != kSpec) {
        if (const ir::Attr* t = op.attr("tag"); t && std::holds_alternative<ir::DimExpr>(*t))
          if (auto it = ps.sends.find(std::get<ir::DimExpr>(*t).str()); it != ps.sends.end())
            for (const auto& [from, send] : it->second) work.push_back({from, send->operands[0]});
        continue;
      }
      if (op.kind == "fill" || op.kind == "add_scalar") {
        const ir::Attr* a = op.attr("value");
        double val = 0;
        if (a && std::holds_alternative<double>(*a)) val = std::get<double>(*a);
        if (a && std::holds_alternative<ir::DimExpr>(*a) && std::get<ir::DimExpr>(*a).is_const())
          val = static_cast<double>(std::get<ir::DimExpr>(*a).const_value());
        const double id = op.kind == "fill" ? val : -val;
        if (id >= 2 && id < 9.0e15 && id == static_cast<double>(static_cast<int64_t>(id)))
          ks.emplace_back(static_cast<int64_t>(id), "op " + op.label() + " attribute value");
        if (op.kind == "fill") continue;
      }
      if (id_operand(op) >= 0 || op.kind == "loop") continue;
      for (const auto& o : op.operands) work.push_back({in, o});
    }
  };
  auto add = [&](const ir::Op& op, const std::vector<ir::DimExpr>* rs, const std::string& where, size_t at) {
    std::vector<std::pair<int64_t, std::string>> ks;  // literal id, where it is written
    const ir::Attr* a = op.attr("offset");
    if (a && std::holds_alternative<ir::DimExpr>(*a) && std::get<ir::DimExpr>(*a).is_const() &&
        std::get<ir::DimExpr>(*a).const_value() >= 2)  // 0 and 1 are ids at every reduced size
      ks.emplace_back(std::get<ir::DimExpr>(*a).const_value(),
                      "op " + op.label() + " attribute offset");
    cone_literals(op.operands[static_cast<size_t>(id_operand(op))], at, ks);
    for (const auto& lit : ks) {
      const int64_t k =
          lit.first;  // named, not bound: older compilers capture no structured binding
      const std::string& at = lit.second;
      auto push = [&](const std::vector<ir::DimExpr>& v) {
        for (const auto& n : v)
          if (!n.is_const())
            out.push_back({k, n, where + " " + at + " (ids of " + op.label() + ")"});
      };
      if (rs)
        push(*rs);
      else
        for (const auto& [v, r] : range) push(r);  // ids of unknown origin: every range
    }
  };
  size_t scope = kSpec;
  std::function<void(const ir::Graph&, const std::string&,
                     const std::function<const std::vector<ir::DimExpr>*(const std::string&)>&)>
      walk = [&](const ir::Graph& g, const std::string& where, const auto& of) {
        for (const auto& op : g.ops) {
          for (const auto& reg : op.regions) walk(reg, where, of);
          const int k = id_operand(op);
          if (k >= 0 && static_cast<size_t>(k) < op.operands.size())
            add(op, of(op.operands[static_cast<size_t>(k)]), where, scope);
        }
      };
  walk(c.spec->graph, "spec", [&](const std::string& v) -> const std::vector<ir::DimExpr>* {
    auto it = range.find(v);
    return it == range.end() ? nullptr : &it->second;
  });
  for (size_t pi = 0; pi < c.plan.programs.size(); ++pi) {
    const ir::Program& prog = c.plan.programs[pi];
    scope = pi;
    std::vector<std::vector<ir::DimExpr>> keep;  // ranges gathered per op, alive for `add`
    walk(prog.graph, "program " + prog.name,
         [&](const std::string& v) -> const std::vector<ir::DimExpr>* {
           Values src, seen;
           if (!sources(ps, pi, v, seen, &src) || src.empty()) return nullptr;
           std::vector<ir::DimExpr> rs;
           for (const auto& [from, in] : src)
             for (const auto& pl : c.plan.placements)
               if (pl.program == c.plan.programs[from].name && pl.value == in)
                 if (auto it = range.find(pl.spec_value); it != range.end())
                   rs.insert(rs.end(), it->second.begin(), it->second.end());
           if (rs.empty()) return nullptr;
           keep.push_back(std::move(rs));
           return &keep.back();
         });
  }
  return out;
}

void id_literal_pins(const std::vector<IdLit>& lits, const ir::Bindings& given,
                     const ir::Bindings& now, Why& pins) {
  for (const auto& lit : lits) {
    int64_t ng = 0, nn = 0;
    if (!lit.range.try_eval(given, ng) || !lit.range.try_eval(now, nn)) continue;
    if (!(lit.value < ng) || lit.value < nn) continue;
    std::set<std::string> syms;
    lit.range.symbols(syms);
    for (const auto& s : syms)
      if (!s.empty() && s[0] != '$')
        pins.emplace(s, "the literal id " + std::to_string(lit.value) + " in " + lit.where +
                            " is an id of [0, " + lit.range.str() + ") as given (" +
                            std::to_string(ng) + ") but not reduced (" + std::to_string(nn) + ")");
  }
}

}  // namespace parity::reduce
