#include "frontend/shapes/size_symbols.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <set>

#include "ir/op_registry.h"
#include "ir/validate.h"

namespace parity::frontend {

namespace {

using ir::DimExpr;

// Products of the sizes of subsets of the mesh's axes (> 1), each with the
// products of axis names that make it: what a shard divides a dim by (`N/tp`,
// so that the axis reduces with the dim), and what a linear index over axes
// multiplies by.
std::map<int64_t, std::vector<DimExpr>> mesh_products(const ir::Mesh& m) {
  std::map<int64_t, std::vector<DimExpr>> out;
  const size_t n = m.axes.size();
  for (size_t mask = 1; n < 16 && mask < (size_t{1} << n); ++mask) {
    int64_t k = 1;
    std::optional<DimExpr> e;
    for (size_t a = 0; a < n; ++a)
      if (mask >> a & 1) {
        k *= m.axes[a].size;
        e = e ? *e * DimExpr::sym(m.axes[a].name) : DimExpr::sym(m.axes[a].name);
      }
    if (k > 1) out[k].push_back(*e);
  }
  return out;
}

// Where a number was rewritten: the op (program and label) it belongs to, and
// how many readings it had.
struct Occurrence {
  size_t graph = 0;                  // 0: the spec, 1 + i: program i
  size_t op = SIZE_MAX;              // index of the top-level op; SIZE_MAX: a declared type
  std::vector<std::string> defines;  // the values that op (or declaration) defines
  size_t readings = 1;
};

// The readings of a number v in an extent: the symbol of v, a shard w/k of a
// larger size (the one a placement names first, then by the smallest k), and
// v itself, last. `choice` picks one per occurrence (default: the first), so
// a search can try others where the sizes do not hold together.
class Rewriter {
 public:
  // `tie`: a size that is a larger one over a product of axis sizes (a
  // sequence of 2048 beside a hidden size of 4096 on 2 ranks) is written as
  // that shard, for plans that use one buffer for both.
  Rewriter(const std::set<int64_t>& sizes, const ir::Mesh& mesh, bool tie)
      : products_(mesh_products(mesh)) {
    for (const auto& a : mesh.axes) with_axes_[a.name] = a.size;
    for (auto v = sizes.rbegin(); v != sizes.rend(); ++v) {
      std::optional<DimExpr> shard;
      if (tie)
        for (const auto& [k, axes] : products_)
          if (!shard && sizes.count(*v * k))
            shard = exact_.at(*v * k) / DimExpr(k);  // the spec has no axes
      exact_.emplace(*v, shard ? *shard : DimExpr::sym("N" + std::to_string(*v)));
      if (!shard) with_axes_["N" + std::to_string(*v)] = *v;
    }
    for (const auto& [k, axes] : products_)
      for (int64_t v : sizes)
        if (v % k == 0)
          for (const auto& a : axes) shard_[v / k].push_back(exact_.at(v) / a);
    // Sizes the ops make from the given ones: a head count D/hd where a
    // reshape splits a dim, a product where one merges two, a half where
    // rotary embeddings split a head.
    for (const auto& [a, x] : exact_)
      for (const auto& [b, y] : exact_) {
        if (x.kind() != DimExpr::Kind::Sym || y.kind() != DimExpr::Kind::Sym) continue;
        if (a != b && a % b == 0 && a / b >= 2) derived_[a / b].push_back(x / y);
        if (a <= b && a * b <= (int64_t{1} << 40)) derived_[a * b].push_back(x * y);
      }
    for (const auto& [a, x] : exact_)
      if (x.kind() == DimExpr::Kind::Sym && a % 2 == 0 && a / 2 >= 2) derived_[a / 2].push_back(x / DimExpr(2));
    // A shard times a size: the local tokens of a batch split over dp, as
    // one dim (N16/dp * N12).
    for (const auto& [a, xs] : shard_)
      for (const auto& x : xs)
        for (const auto& [b, y] : exact_)
          if (y.kind() == DimExpr::Kind::Sym && a * b <= (int64_t{1} << 40)) derived_[a * b].push_back(x * y);
  }

  ir::Bindings dims() const {
    ir::Bindings b;
    for (const auto& [v, s] : exact_)
      if (s.kind() == DimExpr::Kind::Sym) b.emplace(s.name(), v);
    return b;
  }

  // A placement says which size a shard is of: its box's size along a dim of
  // a spec value of known size.
  void hint(int64_t local, int64_t global) {
    if (local < 2 || local >= global || global % local != 0) return;
    auto it = exact_.find(global);
    if (it == exact_.end()) return;
    if (auto k = products_.find(global / local); k != products_.end())
      for (const auto& a : k->second) hints_[local].push_back(it->second / a);
  }

  std::map<size_t, size_t> choice;      // occurrence -> reading
  std::vector<Occurrence> occurrences;  // of the last rewrite
  Occurrence where;                     // what is being rewritten
  bool in_spec = false;
  // Readings a placement fixes, dim by dim, for the value it places: the size
  // of its box along a dim, as the spec dim's size over the shard count.
  std::map<int64_t, DimExpr> context;  // consulted by size() first

  std::vector<std::optional<DimExpr>> placed_dims(const ir::Placement* p,
                                                  const ir::TypeMap& spec_types) const {
    std::vector<std::optional<DimExpr>> out;
    if (!p) return out;
    auto it = spec_types.find(p->spec_value);
    if (it == spec_types.end()) return out;
    const auto& shape = it->second.shape;
    if (!p->region.empty() && p->region.size() != shape.size()) return out;
    out.resize(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      const DimExpr& size = p->region.empty() ? shape[d] : p->region[d].size;
      const DimExpr& whole = it->second.shape[d];
      if (!size.is_const() || !whole.is_const()) continue;
      const int64_t local = size.const_value(), global = whole.const_value();
      auto g = exact_.find(global);
      if (g == exact_.end() || local < 2 || global % local != 0) continue;
      if (local == global)
        out[d] = g->second;
      else if (auto k = products_.find(global / local); k != products_.end()) {
        // The axes whose coordinates place the box split the dim.
        std::set<std::string> coords;
        p->region[d].offset.symbols(coords);
        out[d] = g->second / k->second.front();
        for (const auto& a : k->second) {
          std::set<std::string> names;
          a.symbols(names);
          bool all = true;
          for (const auto& x : names) all &= coords.count("$" + x) > 0;
          if (all) out[d] = g->second / a;
        }
      }
    }
    return out;
  }

  // A size: a dim of a type or shape, a slice's size.
  DimExpr size(const DimExpr& e) {
    if (!e.is_const() || e.const_value() < 2) return e;
    if (auto it = context.find(e.const_value()); it != context.end()) return it->second;
    std::vector<DimExpr> r = readings(e.const_value(), in_spec);
    if (r.size() == 1) return e;
    const size_t k = occurrences.size();
    occurrences.push_back(where);
    occurrences.back().readings = r.size();
    auto it = choice.find(k);
    return r.at(it == choice.end() ? 0 : it->second % r.size());
  }

  // A position: a sum of products of coordinates and sizes. Numbers that are
  // products of axis sizes stay numbers there (the strides of a linear index
  // over several axes); only sums, differences and products are entered.
  DimExpr position(const DimExpr& e) {
    using K = DimExpr::Kind;
    switch (e.kind()) {
      case K::Const:
        return products_.count(e.const_value()) ? e : size(e);
      case K::Add:
        return position(e.lhs()) + position(e.rhs());
      case K::Sub:
        return position(e.lhs()) - position(e.rhs());
      case K::Mul:
        // `index * size`: the size as the box or slice reads it, even where
        // the number is also a product of axis sizes (a shard of 8 on 2x4).
        if (e.rhs().is_const())
          if (auto it = context.find(e.rhs().const_value()); it != context.end())
            return position(e.lhs()) * it->second;
        return position(e.lhs()) * position(e.rhs());
      default:
        return e;
    }
  }

  void graph(ir::Graph& g, size_t index, const std::string& program,
             const std::vector<ir::Placement>& placements, const ir::TypeMap& spec_types,
             size_t op_index = SIZE_MAX) {
    for (auto& [name, t] : g.types) {
      where = {index, op_index, {name}};
      const ir::Placement* placed = nullptr;
      for (const auto& p : placements)
        if (p.program == program && p.value == name && p.kind == ir::PlacementKind::region)
          placed = &p;
      const auto fixed = placed_dims(placed, spec_types);
      for (size_t k = 0; k < t.shape.size(); ++k)
        t.shape[k] = k < fixed.size() && fixed[k] && t.shape[k].is_const() &&
                             t.shape[k].const_value() == fixed[k]->eval(with_axes_)
                         ? *fixed[k]
                         : size(t.shape[k]);
    }
    for (size_t k = 0; k < g.ops.size(); ++k) {
      auto& op = g.ops[k];
      const size_t at = op_index == SIZE_MAX ? k : op_index;  // a region's ops count as their loop
      where = {index, at, op.results};
      // Sizes first; a position then reads a number as the op's size of that
      // value reads it (a slice at `$ax0*2048` of size 2048 takes the same
      // shard of the same dim).
      std::map<int64_t, DimExpr> chosen;
      for (auto& [name, a] : op.attrs) {
        if (!ir::is_extent_attr(op.kind, name)) continue;
        auto read = [&](DimExpr& d) {
          if (!d.is_const()) return;
          const int64_t v = d.const_value();
          d = size(d);
          chosen.emplace(v, d);
        };
        if (auto* x = std::get_if<DimExpr>(&a))
          read(*x);
        else if (auto* xs = std::get_if<ir::Dims>(&a))
          for (auto& d : *xs) read(d);
      }
      for (auto& [name, a] : op.attrs)
        if (auto* x = std::get_if<DimExpr>(&a);
            x && !x->is_const() && ir::is_extent_attr(op.kind, name)) {
          context = chosen;
          *x = position(*x);
          context.clear();
        }
      for (auto& r : op.regions) graph(r, index, program, placements, spec_types, at);
    }
  }

 private:
  // The spec runs on one device: its sizes are not shards.
  std::vector<DimExpr> readings(int64_t v, bool spec) const {
    std::vector<DimExpr> r;
    if (auto it = exact_.find(v); it != exact_.end()) r.push_back(it->second);
    if (!spec)
      for (const auto* m : {&hints_, &shard_})
        if (auto it = m->find(v); it != m->end())
          for (const auto& x : it->second)
            if (std::find(r.begin(), r.end(), x) == r.end()) r.push_back(x);
    if (auto it = derived_.find(v); it != derived_.end())
      for (const auto& x : it->second)
        if (std::find(r.begin(), r.end(), x) == r.end()) r.push_back(x);
    r.push_back(DimExpr(v));
    return r;
  }

  std::map<int64_t, std::vector<DimExpr>> products_;
  ir::Bindings with_axes_;  // the sizes and the axes' sizes, to evaluate a reading
  std::map<int64_t, DimExpr> exact_;
  std::map<int64_t, std::vector<DimExpr>> hints_, shard_, derived_;
};

// Sizes to probe the rewrite at: each symbol times its own prime, so that two
// symbols confused by the rewrite part, and shards still divide.
ir::Bindings probe(const ir::Bindings& dims) {
  static const int64_t primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47};
  // A size that divides another keeps dividing it (a head count D/hd is one
  // at the probe too): each multiplier is the symbol's own prime times those
  // of the sizes dividing it, as long as it stays small.
  std::vector<std::pair<int64_t, std::string>> by_value;
  for (const auto& [name, v] : dims) by_value.push_back({v, name});
  std::sort(by_value.begin(), by_value.end());
  std::map<std::string, int64_t> mult;
  size_t i = 0;
  for (const auto& [v, name] : by_value) {
    int64_t m = primes[i++ % std::size(primes)];
    int64_t l = 1;
    for (const auto& [w, other] : by_value)
      if (w < v && v % w == 0 && mult.count(other)) l = std::lcm(l, mult.at(other));
    if (l <= 100000) m *= l;
    mult[name] = m;
  }
  ir::Bindings b;
  for (const auto& [name, v] : dims) b.emplace(name, v * mult.at(name));
  return b;
}

std::optional<ir::Case> attempt(const ir::Case& c, const ir::TypeMap& types,
                                const std::set<int64_t>& sizes, bool tie, std::string& kept) {
  Rewriter rw(sizes, c.plan.mesh, tie);
  for (const auto& p : c.plan.placements) {
    auto it = types.find(p.spec_value);
    if (it == types.end() || p.region.size() != it->second.shape.size()) continue;
    for (size_t d = 0; d < p.region.size(); ++d)
      if (p.region[d].size.is_const() && it->second.shape[d].is_const())
        rw.hint(p.region[d].size.const_value(), it->second.shape[d].const_value());
  }

  // Every reading tried rewrites the whole case: a bounded number of them,
  // so that a module of thousands of ops imports in seconds (past the
  // budget, the case keeps its numbers).
  size_t rewrites = 0;
  const size_t budget = std::max<size_t>(2000, 400000 / (1 + c.spec->graph.ops.size()));
  struct OverBudget {};
  auto rewrite = [&] {
    if (++rewrites > budget) throw OverBudget{};
    rw.occurrences.clear();
    ir::Case r = c;
    rw.in_spec = true;
    rw.graph(r.spec->graph, 0, "", {}, types);
    rw.in_spec = false;
    for (size_t i = 0; i < r.plan.programs.size(); ++i)
      rw.graph(r.plan.programs[i].graph, 1 + i, r.plan.programs[i].name, c.plan.placements, types);
    rw.where = {SIZE_MAX, SIZE_MAX, {}};
    for (auto& p : r.plan.placements) {
      const auto fixed = rw.placed_dims(&p, types);
      for (size_t k = 0; k < p.region.size(); ++k) {
        auto& range = p.region[k];
        if (k < fixed.size() && fixed[k]) rw.context = {{range.size.const_value(), *fixed[k]}};
        range.offset = rw.position(range.offset);
        range.size = rw.size(range.size);
        rw.context.clear();
      }
    }
    return r;
  };
  // The rewrite must hold together at other sizes too, or a symbol would
  // stand for sizes that are not one dim: each graph is checked op by op at
  // probe sizes, and where an op's shape rule fails, other readings of the
  // numbers in it, then in it and the ops feeding it, are tried.
  const ir::Bindings at_probe = probe(rw.dims());
  auto graph_of = [](const ir::Case& r, size_t g) -> const ir::Graph& {
    return g == 0 ? r.spec->graph : r.plan.programs[g - 1].graph;
  };
  // Types of the graph's values when ops 0..op hold at the probe sizes.
  auto holds_upto = [&](const ir::Case& r, size_t g, size_t op) -> std::optional<ir::TypeMap> {
    ir::Graph prefix = graph_of(r, g);
    prefix.ops.resize(op + 1);
    prefix.outputs.clear();
    ir::Bindings b = at_probe;
    if (g > 0)
      for (const auto& a : r.plan.mesh.axes) b[a.name] = a.size;
    ir::DiagList d;
    ir::TypeMap t = ir::check_graph(prefix, b, g > 0 ? &r.plan.mesh : nullptr, ir::Diag{}, d);
    if (!d.empty()) return std::nullopt;
    return t;
  };
  // Tries every combination of readings of `set` (a bounded number) and keeps
  // the best by `score` among those where ops 0..op hold; false when none does.
  auto search = [&](ir::Case& r, size_t g, size_t op, const std::vector<size_t>& set,
                    const std::function<int(const ir::Case&, const ir::TypeMap&)>& score,
                    bool first) {
    const auto was = rw.choice;
    std::optional<std::map<size_t, size_t>> best_choice;
    int best = -1;
    std::vector<size_t> digit(set.size(), 0);
    for (int tries = 0; tries < (first ? 512 : 64); ++tries) {
      for (size_t j = 0; j < set.size(); ++j)
        rw.choice[set[j]] = (was.count(set[j]) ? was.at(set[j]) : 0) + digit[j];
      ir::Case t = rewrite();
      if (auto types = holds_upto(t, g, op)) {
        const int sc = score(t, *types);
        if (sc > best) best = sc, best_choice = rw.choice, r = std::move(t);
        if (first) break;
      }
      size_t k = 0;
      while (k < set.size() && ++digit[k] == rw.occurrences[set[k]].readings) digit[k++] = 0;
      if (k == set.size()) break;
    }
    rw.choice = best_choice ? *best_choice : was;
    return best_choice.has_value();
  };
  // Among readings that hold, an op's extents are read as its operands' dims
  // where they can be, in order (a reshape that adds a unit dim keeps its
  // operand's sizes where they were): the longest common subsequence.
  auto keeps_operand_dims = [&](size_t g, size_t op) {
    return [&graph_of, g, op](const ir::Case& t, const ir::TypeMap& types) {
      const ir::Op& o = graph_of(t, g).ops[op];
      // Products as their factors: a reshape merging [N8,N8,F] into
      // [N8*N8,F] keeps its operand's dims in order.
      std::function<void(const DimExpr&, std::vector<std::string>&)> factors = [&](const DimExpr& e,
                                                                                 std::vector<std::string>& out) {
        if (e.kind() == DimExpr::Kind::Mul) {
          factors(e.lhs(), out);
          factors(e.rhs(), out);
        } else {
          out.push_back(e.str());
        }
      };
      std::vector<std::string> mine, theirs;
      for (const auto& [name, a] : o.attrs) {
        if (!ir::is_extent_attr(o.kind, name)) continue;
        if (const auto* x = std::get_if<DimExpr>(&a)) factors(*x, mine);
        if (const auto* xs = std::get_if<ir::Dims>(&a))
          for (const auto& d : *xs) factors(d, mine);
      }
      for (const auto& v : o.operands)
        if (auto it = types.find(v); it != types.end())
          for (const auto& d : it->second.shape) factors(d, theirs);
      std::vector<std::vector<int>> lcs(mine.size() + 1, std::vector<int>(theirs.size() + 1, 0));
      for (size_t x = 1; x <= mine.size(); ++x)
        for (size_t y = 1; y <= theirs.size(); ++y)
          lcs[x][y] = mine[x - 1] == theirs[y - 1] ? lcs[x - 1][y - 1] + 1
                                                   : std::max(lcs[x - 1][y], lcs[x][y - 1]);
      // Then, for an op along one dim (a slice, a pad), extents made of that
      // dim's own symbols: a rotary half of a head dim N8 is N8/2.
      int along = 0;
      const ir::Attr* d = o.attr("dim");
      if (d && std::holds_alternative<DimExpr>(*d) && std::get<DimExpr>(*d).is_const() && !o.operands.empty())
        if (auto it = types.find(o.operands[0]); it != types.end()) {
          const auto k = static_cast<size_t>(std::get<DimExpr>(*d).const_value());
          if (k < it->second.shape.size()) {
            std::set<std::string> own;
            it->second.shape[k].symbols(own);
            for (const auto& [name, a] : o.attrs)
              if (const auto* x = std::get_if<DimExpr>(&a); x && ir::is_extent_attr(o.kind, name)) {
                std::set<std::string> syms;
                x->symbols(syms);
                bool inside = !syms.empty();
                for (const auto& sy : syms) inside &= own.count(sy) > 0 || sy[0] == '$';
                along += inside;
              }
          }
        }
      // Along one dim, that dim's symbols come first; elsewhere the operands' order.
      return d ? along * 16 + lcs[mine.size()][theirs.size()] : lcs[mine.size()][theirs.size()] * 16 + along;
    };
  };
  try {
  ir::Case r = rewrite();
  for (size_t g = 0; g <= r.plan.programs.size(); ++g)
    for (size_t i = 0; i < graph_of(r, g).ops.size(); ++i) {
      // The values feeding the op, up to three ops back: a slice that halves
      // a head, read as another size, shows only where the halves meet again.
      std::set<std::string> feeding(graph_of(r, g).ops[i].operands.begin(), graph_of(r, g).ops[i].operands.end());
      for (int depth = 0; depth < 2; ++depth)
        for (size_t j = i; j-- > 0;) {
          const ir::Op& p = graph_of(r, g).ops[j];
          bool used = false;
          for (const auto& res : p.results) used |= feeding.count(res) > 0;
          if (used) feeding.insert(p.operands.begin(), p.operands.end());
        }
      std::vector<size_t> own, near;
      for (size_t k = 0; k < rw.occurrences.size(); ++k) {
        const Occurrence& o = rw.occurrences[k];
        if (o.graph != g || o.readings < 2) continue;
        bool feeds = false;
        for (const auto& v : o.defines) feeds |= feeding.count(v) > 0;
        if (o.op == i) own.push_back(k);
        if (o.op == i || feeds) near.push_back(k);
      }
      if (!own.empty() && search(r, g, i, own, keeps_operand_dims(g, i), false)) continue;
      if (holds_upto(r, g, i)) continue;
      // What feeds the op was read in a way only this op rules out: one
      // occurrence read otherwise first (the search below varies the first
      // occurrences fastest and may not reach a late one), then combinations.
      bool fixed = false;
      for (size_t k : near) {
        const auto was = rw.choice;
        for (size_t alt = 1; alt < rw.occurrences[k].readings && !fixed; ++alt) {
          rw.choice[k] = (was.count(k) ? was.at(k) : 0) + alt;
          ir::Case t = rewrite();
          if (holds_upto(t, g, i)) {
            r = std::move(t);
            fixed = true;
          }
        }
        if (fixed) break;
        rw.choice = was;
      }
      if (fixed) continue;
      if (!near.empty() &&
          search(
              r, g, i, near, [](const ir::Case&, const ir::TypeMap&) { return 0; }, true))
        continue;
      kept = "the sizes do not hold together as symbols at " + graph_of(r, g).ops[i].label();
      return std::nullopt;
    }
  ir::Case at = r;
  at.spec->dims = at.plan.dims = at_probe;
  const ir::DiagList d = ir::validate_case(at, "");
  if (!d.empty()) {
    kept = "the sizes do not hold together as symbols: " + d.items[0].message;
    return std::nullopt;
  }
  r.spec->dims = r.plan.dims = rw.dims();
  return r;
  } catch (const OverBudget&) {
    kept = "the sizes were searched past the budget of " + std::to_string(budget) + " readings";
    return std::nullopt;
  }
}

}  // namespace

SizeSymbols give_size_symbols(ir::Case& c) {
  SizeSymbols out;
  if (!c.spec || !c.spec->dims.empty() || !c.plan.dims.empty()) {
    out.kept = "the case has dim symbols of its own";
    return out;
  }
  ir::DiagList diags;
  ir::TypeMap types;
  ir::validate_spec(*c.spec, "", diags, &types);
  if (!diags.empty()) {
    out.kept = "the spec is not well formed";
    return out;
  }
  std::set<int64_t> sizes;
  for (const auto* names : {&c.spec->graph.inputs, &c.spec->graph.outputs})
    for (const auto& n : *names)
      if (auto it = types.find(n); it != types.end())
        for (const auto& d : it->second.shape)
          if (d.is_const() && d.const_value() >= 2) sizes.insert(d.const_value());
  if (sizes.empty()) {
    out.kept = "no size of 2 or more";
    return out;
  }
  for (bool tie : {false, true}) {
    std::optional<ir::Case> r = attempt(c, types, sizes, tie, out.kept);
    if (!r) continue;
    c = std::move(*r);
    out.dims = c.spec->dims;
    out.kept.clear();
    break;
  }
  return out;
}

}  // namespace parity::frontend
