#include "verify/staged.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "ir/interp.h"
#include "reduce/stages.h"
#include "ir/id_ranges.h"
#include "verify/inputs.h"
#include "verify/sum_chains.h"
#include "verify/term.h"
#include "verify/term_estimate.h"

namespace parity::verify {

namespace {

using T = ir::Tensor<TermId>;
using Clock = std::chrono::steady_clock;

class StageProver {
 public:
  StageProver(const reduce::StageGraph& g, size_t budget, const std::set<double>* literals)
      : g_(g), budget_(budget), td_{tt_, literals} {
    const ir::Spec& s = *g.kase().spec;
    ranges_ = ir::id_ranges(s, g.spec_types(), g.dims(), &negative_);
  }
  void limit_bytes(size_t b) { tt_.limit_bytes(b); }

  // "" when every obligation of the stage is proved; else what was not.
  std::string prove(const reduce::Stage& st, size_t index) {
    const auto& nodes = g_.nodes();
    const ir::Plan& p = g_.kase().plan;
    std::unordered_map<int32_t, T> spec;
    for (int32_t id : st.spec_inputs) spec[id] = fresh(*nodes[static_cast<size_t>(id)].name, index);
    SumChains spec_sums(tt_, g_, st.spec_nodes, st.spec_node);
    for (int32_t id : st.spec_nodes) {
      const reduce::Node& nd = nodes[static_cast<size_t>(id)];
      T out;
      auto eval = [&](const std::vector<const T*>& in) {
        return ir::eval_local(td_, *g_.instr(nd).op, in, g_.bindings(nd))
            .at(static_cast<size_t>(nd.result));
      };
      auto r = spec_sums.run(
          id, [&](int32_t d) -> const T& { return spec.at(d); }, eval, out);
      if (r == SumChains::Outcome::deferred) continue;
      spec[id] = r == SumChains::Outcome::done ? std::move(out) : run(nd, spec);
    }

    std::unordered_map<int32_t, T> seeded, computed;
    // Partial seeds: the members of one sum, when all are inputs of the stage,
    // are seeded so that they add up to the spec region; otherwise each is free.
    // Members of one sum: same spec value, summed axes, iteration, other
    // coordinates and region (they may be placed by different programs).
    // and which of its program's partial placements of that region it is.
    using GKey = std::tuple<std::string, std::vector<std::string>, std::string,
                            std::vector<int64_t>, std::vector<int64_t>, uint32_t>;
    std::map<GKey, std::vector<int32_t>> groups;
    std::map<GKey, uint32_t> group_placement;  // a placement of the group, for its region
    for (int32_t id : st.plan_inputs) {
      const reduce::Node& nd = nodes[static_cast<size_t>(id)];
      const ir::Placement* seed = nullptr;
      uint32_t seed_idx = 0;
      for (uint32_t pl : nd.placements)
        if (p.placements[pl].kind == ir::PlacementKind::region) {
          seed = &p.placements[pl];
          seed_idx = pl;
          break;
        }
      // A program input stands for a spec input; one placed on anything else
      // would be an assumption nobody proves.
      if (nd.instr < 0 && (!seed || !is_spec_input(seed->spec_value)))
        throw ir::EvalError("program input '" + *nd.name + "' is not placed on a spec input");
      if (seed) {
        seeded[id] = region(*seed, nd, spec);
        continue;
      }
      seed_idx = nd.placements[0];
      const ir::Placement& S = p.placements[seed_idx];
      ir::Coord c = p.mesh.coord_of(nd.rank);
      for (const auto& a : S.axes) c[*p.mesh.axis_index(a)] = -1;
      std::vector<std::string> axes = S.axes;
      std::sort(axes.begin(), axes.end());
      std::vector<int64_t> off;
      const ir::Bindings& b = g_.bindings(nd);
      for (const auto& d : S.region) off.push_back(d.offset.eval(b));
      GKey key{S.spec_value,
               axes,
               nd.instr >= 0 ? g_.instr(nd).iter : "",
               c,
               off,
               g_.partial_ordinal(seed_idx)};
      groups[key].push_back(id);
      group_placement[key] = seed_idx;
    }
    for (auto& [key, members] : groups) {
      const ir::Placement& P = p.placements[group_placement.at(key)];
      int64_t want = 1;
      for (const auto& a : P.axes) want *= p.mesh.axes[*p.mesh.axis_index(a)].size;
      const reduce::Node& first = nodes[static_cast<size_t>(members[0])];
      T whole = region(P, first, spec);
      for (size_t k = 1; k < members.size(); ++k)
        seeded[members[k]] = fresh_like(whole, index, members[k]);
      if (static_cast<int64_t>(members.size()) == want) {
        T rest = whole;
        for (size_t e = 0; e < rest.data.size(); ++e) {
          std::vector<TermId> parts{whole.data[e]};
          for (size_t k = 1; k < members.size(); ++k)
            parts.push_back(tt_.scale(seeded[members[k]].data[e], Rational(-1)));
          rest.data[e] = tt_.sum(parts);
        }
        seeded[members[0]] = rest;
      } else {
        seeded[members[0]] = fresh_like(whole, index, members[0]);
      }
    }

    auto val = [&](int32_t id) -> const T& {
      if (!nodes[static_cast<size_t>(id)].placements.empty()) return seeded.at(id);
      return computed.at(id);
    };
    std::unordered_map<int32_t, std::vector<T>> coll;
    SumChains plan_sums(tt_, g_, st.plan_nodes, -1);
    for (int32_t id : st.plan_nodes) {
      const reduce::Node& nd = nodes[static_cast<size_t>(id)];
      const ir::Instr& ins = g_.instr(nd);
      if (ins.kind == ir::Instr::bind || ins.op->kind == "recv") {
        if (nd.deps.empty()) throw ir::EvalError("a copy without a source");
        computed[id] = val(nd.deps[0]);
        continue;
      }
      const ir::Bindings& b = g_.bindings(nd);
      auto operands = [&] {
        std::vector<const T*> in;
        for (int32_t d : nd.deps) in.push_back(&val(d));
        return in;
      };
      if (nd.coll >= 0) {
        auto it = coll.find(nd.coll);
        if (it == coll.end())
          it = coll.emplace(nd.coll, ir::eval_collective(td_, *ins.op, operands(), b)).first;
        computed[id] = it->second.at(static_cast<size_t>(nd.member));
        continue;
      }
      auto eval = [&](const std::vector<const T*>& xs) {
        return ir::eval_local(td_, *ins.op, xs, b).at(static_cast<size_t>(nd.result));
      };
      T out;
      auto r = plan_sums.run(id, val, eval, out);
      if (r == SumChains::Outcome::deferred) continue;
      computed[id] = r == SumChains::Outcome::done ? std::move(out) : eval(operands());
    }

    for (const auto& o : st.obligations) {
      const ir::Placement& P = p.placements[o.placement];
      const reduce::Node& first = nodes[static_cast<size_t>(o.members[0])];
      T want = region(P, first, spec);
      auto value_of = [&](int32_t m) -> const T& {
        return nodes[static_cast<size_t>(m)].instr < 0 ? seeded.at(m) : computed.at(m);
      };
      const T& v0 = value_of(o.members[0]);
      if (v0.data.size() != want.data.size())
        return "shape of " + P.program + ".%" + P.value + " differs from its region";
      for (size_t e = 0; e < want.data.size(); ++e) {
        TermId got = v0.data[e];
        if (o.members.size() > 1) {
          std::vector<TermId> parts;
          for (int32_t m : o.members) parts.push_back(value_of(m).data[e]);
          got = tt_.sum(parts);
        }
        ++obligations_;
        if (got == want.data[e]) continue;
        // Compared part by part: only the small parts that differ are
        // expanded. A large pair that differs is most likely a real
        // difference, which the whole-plan checker refutes at once by
        // evaluation, while expanding it could take minutes.
        if (tt_.equal_by_parts(got, want.data[e], budget_)) {
          ++by_expansion_;
          continue;
        }
        StageFailure f;
        f.placement = o.placement;
        f.rank = first.rank;
        f.iter = first.instr >= 0 ? g_.instr(first).iter : "";
        f.elem = static_cast<int64_t>(e);
        f.spec_expr = tt_.str(want.data[e]);
        f.plan_expr = tt_.str(got);
        f.difference = tt_.diff(want.data[e], got);
        failure_ = std::move(f);
        return P.program + ".%" + P.value + " on " + p.mesh.rank_str(first.rank) + " -> %" +
               P.spec_value + " is not equal by canonical form";
      }
    }
    return "";
  }

  size_t obligations() const { return obligations_; }
  const std::optional<StageFailure>& failure() const { return failure_; }
  size_t by_expansion() const { return by_expansion_; }
  size_t zero_cancelled() const { return tt_.zero_cancelled().size(); }

 private:
  T region(const ir::Placement& P, const reduce::Node& at,
           const std::unordered_map<int32_t, T>& spec) {
    const T& whole = spec.at(spec_id(P.spec_value));
    if (P.region.empty()) return whole;
    ir::Box box = ir::placement_box(P, g_.bindings(at), whole.shape);
    return extract(whole, box);
  }

  bool is_spec_input(const std::string& name) const {
    const auto& in = g_.kase().spec->graph.inputs;
    return std::find(in.begin(), in.end(), name) != in.end();
  }

  int32_t spec_id(const std::string& name) {
    if (spec_ids_.empty())
      for (size_t i = 0; i < g_.nodes().size() && g_.nodes()[i].rank < 0; ++i)
        spec_ids_[*g_.nodes()[i].name] = static_cast<int32_t>(i);
    return spec_ids_.at(name);
  }

  T fresh(const std::string& name, size_t index) {
    const ir::TensorType& ty = g_.spec_types().at(name);
    T t;
    t.shape = ir::concrete_shape(ty, g_.dims());
    std::string base = "s" + std::to_string(index) + "." + name;
    for (int64_t i = 0; i < ir::sem::num_el(t.shape); ++i) {
      std::string nm = base + "#" + std::to_string(i);
      if (ty.dtype == ir::DType::i64) {
        auto r = ranges_.find(name);
        auto n = negative_.find(name);
        t.data.push_back(tt_.int_var(nm, 0, r != ranges_.end() ? std::max<int64_t>(r->second, 1) : 16,
                                     n != negative_.end() ? n->second : std::vector<int64_t>{}));
      } else if (ty.dtype == ir::DType::i1) {
        t.data.push_back(tt_.bool_var(nm));
      } else {
        t.data.push_back(tt_.var(nm));
      }
    }
    return t;
  }

  T fresh_like(const T& like, size_t index, int32_t node) {
    T t;
    t.shape = like.shape;
    for (size_t i = 0; i < like.data.size(); ++i)
      t.data.push_back(tt_.var("p" + std::to_string(index) + "." + std::to_string(node) + "#" +
                               std::to_string(i)));
    return t;
  }

  T run(const reduce::Node& nd, const std::unordered_map<int32_t, T>& env) {
    const ir::Instr& ins = g_.instr(nd);
    std::vector<const T*> in;
    for (int32_t d : nd.deps) in.push_back(&env.at(d));
    return ir::eval_local(td_, *ins.op, in, g_.bindings(nd)).at(static_cast<size_t>(nd.result));
  }

  const reduce::StageGraph& g_;
  size_t budget_;
  TermTable tt_;
  TermDomain td_;
  std::map<std::string, int64_t> ranges_;
  ir::NegativeIds negative_;
  std::map<std::string, int32_t> spec_ids_;
  size_t obligations_ = 0, by_expansion_ = 0;
  std::optional<StageFailure> failure_;
};

// Every element of every spec output is placed somewhere.
std::string uncovered(const reduce::StageGraph& g) {
  const ir::Plan& p = g.kase().plan;
  for (const auto& o : g.kase().spec->graph.outputs) {
    std::vector<int64_t> shape = ir::concrete_shape(g.spec_types().at(o), g.dims());
    T probe;
    probe.shape = shape;
    std::vector<bool> bits(static_cast<size_t>(ir::sem::num_el(shape)), false);
    auto it = g.placed_on().find(o);
    if (it != g.placed_on().end())
      for (int32_t id : it->second) {
        const reduce::Node& nd = g.nodes()[static_cast<size_t>(id)];
        const ir::Bindings& b = g.bindings(nd);
        for (uint32_t pl : nd.placements) {
          const ir::Placement& P = p.placements[pl];
          if (P.spec_value != o) continue;
          ir::Box region = ir::placement_box(P, b, shape);
          T box;
          box.shape = region.size;
          for (int64_t e = 0; e < ir::sem::num_el(region.size); ++e) {
            auto idx = box.index_of(e);
            for (size_t k = 0; k < idx.size(); ++k) idx[k] += region.off[k];
            bits[static_cast<size_t>(probe.flat(idx))] = true;
          }
        }
      }
    for (bool x : bits)
      if (!x) return "spec output '" + o + "' is not covered by placements";
  }
  return "";
}

}  // namespace

namespace {

std::string key_hash(const std::string& key) {
  char h[32];
  std::snprintf(h, sizeof h, "%016zx", std::hash<std::string>{}(key));
  return h;
}

// The cache file of a key: versioned, so a change to the semantics of the
// keys (or of parity) never reuses an old proof.
std::string cache_path(const std::string& dir, const std::string& key) {
  return dir + "/stages-" PARITY_VERSION "-v1/" + key_hash(key) + ".key";
}

// Elements placed by every placement, over all instances; a partial sum counts
// once per group (its member at coordinate 0 of the summed axes).
std::map<uint32_t, size_t> placed_elements(const reduce::StageGraph& g) {
  const ir::Plan& p = g.kase().plan;
  // Each placement's spec shape, evaluated once.
  std::vector<std::optional<std::vector<int64_t>>> shape(p.placements.size());
  // A region whose sizes read no coordinate or loop index has one element
  // count on every instance: counted once.
  std::vector<std::optional<size_t>> fixed_count(p.placements.size());
  std::vector<char> sizes_fixed(p.placements.size(), -1);
  std::map<uint32_t, size_t> out;
  for (const reduce::Node& nd : g.nodes()) {
    if (nd.rank < 0 || nd.placements.empty()) continue;
    const ir::Coord c = p.mesh.coord_of(nd.rank);
    for (uint32_t pl : nd.placements) {
      const ir::Placement& P = p.placements[pl];
      bool first = true;
      for (const auto& a : P.axes) first &= c[*p.mesh.axis_index(a)] == 0;
      if (!first) continue;
      if (fixed_count[pl]) {
        out[pl] += *fixed_count[pl];
        continue;
      }
      if (!shape[pl]) shape[pl] = ir::concrete_shape(g.spec_types().at(P.spec_value), g.dims());
      ir::Box box = ir::placement_box(P, g.bindings(nd), *shape[pl]);
      const auto n = static_cast<size_t>(ir::sem::num_el(box.size));
      if (sizes_fixed[pl] < 0) {
        std::set<std::string> syms;
        for (const auto& rg : P.region) rg.size.symbols(syms);
        sizes_fixed[pl] = std::none_of(syms.begin(), syms.end(),
                                       [](const std::string& x) { return x[0] == '$'; });
      }
      if (sizes_fixed[pl]) fixed_count[pl] = n;
      out[pl] += n;
    }
  }
  return out;
}

bool cache_has(const std::string& dir, const std::string& key) {
  std::ifstream f(cache_path(dir, key), std::ios::binary);
  if (!f) return false;
  std::string got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return got == key;
}

void cache_put(const std::string& dir, const std::string& key) {
  std::error_code ec;
  std::string path = cache_path(dir, key);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // Written aside and renamed, so a reader never sees half a key.
  std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "." +
                    std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return;
    f << key;
  }
  std::filesystem::rename(tmp, path, ec);
}

}  // namespace

StagedResult prove_by_stages(const ir::Case& c, const StageOptions& opt) {
  StagedResult r;
  auto t0 = Clock::now();
  try {
    {
      ir::Bindings base = c.plan.dims;
      if (c.spec)
        for (const auto& [k, v] : c.spec->dims) base.emplace(k, v);
      // Stages share the terms of repeated layers, so what is bounded is
      // the largest op of the spec (a cross-entropy gradient over a vocabulary
      // kept whole), which some stage builds whole.
      size_t largest = 0;
      symbolic_terms_upto(c, base, opt.max_terms, false, opt.spec_types, &largest);
      if (largest > opt.max_terms) {
        r.reason = "one op of the spec alone would build more than " +
                   std::to_string(opt.max_terms) +
                   " symbolic terms (tensors too large at these sizes)";
        return r;
      }
    }
    progress_start(opt.progress, "building stages");
    auto graph = std::make_shared<const reduce::StageGraph>(c, opt.threads, opt.spec_types,
                                                            opt.max_rank_instructions, opt.assumed, opt.open);
    const reduce::StageGraph& g = *graph;
    r.build_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (g.rank_instructions() > opt.max_rank_instructions) {
      r.reason = "too many rank-instructions for stages (" + std::to_string(g.rank_instructions()) +
                 ", limit " + std::to_string(opt.max_rank_instructions) + ")";
      return r;
    }
    r.graph = graph;
    if (std::string u = uncovered(g); !u.empty()) {
      r.reason = u;
      return r;
    }
    // The distinct stages, by first instance.
    std::vector<size_t> first;
    std::unordered_map<const std::string*, size_t> seen;  // interned key -> index in r.list
    r.stages = g.stages().size();
    for (size_t i = 0; i < g.stages().size(); ++i) {
      const reduce::Stage& st = g.stages()[i];
      auto [it, fresh] = seen.try_emplace(st.key, r.list.size());
      if (!fresh) {
        ++r.list[it->second].instances;
        continue;
      }
      StageInfo info;
      info.spec_value = st.spec_value;
      info.hash = key_hash(*st.key);
      info.instances = 1;
      r.list.push_back(info);
      first.push_back(i);
    }
    r.unique = r.list.size();
    std::vector<size_t> mine;
    int shards = std::max(opt.shards.count, 1);
    for (size_t k = 0; k < first.size(); ++k)
      if (static_cast<int>(k % static_cast<size_t>(shards)) == opt.shards.index) mine.push_back(k);
    progress_start(opt.progress, "proving stages", mine.size());
    // Largest first, so the one long stage (a gradient norm summing every
    // parameter) does not start last and leave the other threads idle.
    std::stable_sort(mine.begin(), mine.end(), [&](size_t a, size_t b) {
      const reduce::Stage& x = g.stages()[first[a]];
      const reduce::Stage& y = g.stages()[first[b]];
      return x.spec_nodes.size() + x.plan_nodes.size() > y.spec_nodes.size() + y.plan_nodes.size();
    });

    // Threads take distinct stages from a shared counter; each has its own
    // prover (terms are hash-consed per table). A failure stops every stage
    // after it in first-met order; those before still run, so the failure
    // reported is the first in that order whatever order they ran in.
    std::atomic<size_t> next{0}, obligations{0}, by_expansion{0}, zero_cancelled{0};
    std::atomic<bool> failed{false};
    std::atomic<size_t> first_failed{SIZE_MAX};
    std::mutex m;
    size_t why_k = SIZE_MAX;
    const bool use_cache = !opt.cache_dir.empty() && (!opt.literals || opt.literals->empty());
    auto fresh_prover = [&](std::optional<StageProver>& sp) {
      sp.emplace(g, opt.expand_budget, opt.literals && !opt.literals->empty() ? opt.literals : nullptr);
      sp->limit_bytes(opt.max_term_bytes);
    };
    auto work_on = [&] {
      std::optional<StageProver> sp;
      fresh_prover(sp);
      for (size_t n; (n = next.fetch_add(1)) < mine.size();) {
        size_t k = mine[n];
        if (k > first_failed.load()) continue;
        const reduce::Stage& st = g.stages()[first[k]];
        StageInfo& info = r.list[k];
        info.shard = opt.shards.index;
        progress_step(opt.progress);
        if (use_cache && cache_has(opt.cache_dir, *st.key)) {
          info.cached = true;
          continue;
        }
        auto s0 = Clock::now();
        size_t before = sp->obligations();
        std::string why;
        try {
          why = sp->prove(st, first[k]);
        } catch (const ir::EvalError& e) {
          why = std::string("stages do not apply: ") + e.what();
        } catch (const ir::InvalidInput& e) {
          why = std::string("stages do not apply: ") + e.what();
        } catch (const NotSmall& e) {
          why = e.what();
        } catch (const std::out_of_range& e) {
          why = std::string("stages do not apply: ") + e.what();
        } catch (const std::bad_alloc&) {
          why = "ran out of memory proving the stage (its tensors are too large at these sizes)";
        } catch (const std::exception& e) {  // on a pool thread: never past it
          why = std::string("stages do not apply: ") + e.what();
        }
        if (!why.empty()) {
          {
            std::lock_guard<std::mutex> lk(m);
            if (k < why_k) why_k = k, first_failed = k, r.reason = why, r.failure = sp->failure();
            failed = true;
          }
          zero_cancelled += sp->zero_cancelled();
          fresh_prover(sp);  // a fresh prover for the stages before it
          continue;
        }
        info.seconds = std::chrono::duration<double>(Clock::now() - s0).count();
        info.obligations = sp->obligations() - before;
        if (use_cache) cache_put(opt.cache_dir, *st.key);
      }
      obligations += sp->obligations();
      by_expansion += sp->by_expansion();
      zero_cancelled += sp->zero_cancelled();
    };
    // Nothing may leave a pool thread: a failure outside a stage's proof
    // (memory running out while a fresh prover is made) fails the proof.
    auto work = [&] {
      try {
        work_on();
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lk(m);
        if (why_k == SIZE_MAX) r.reason = std::string("stages could not be proved: ") + e.what();
        failed = true;
        first_failed = 0;
      }
    };
    unsigned threads =
        std::max(1u, std::min<unsigned>(opt.threads, static_cast<unsigned>(mine.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();

    // Spread over processes: every process learns the totals and every stage's numbers.
    if (shards > 1) {
      std::vector<double> v{failed ? 1.0 : 0.0, static_cast<double>(obligations.load()),
                            static_cast<double>(by_expansion.load())};
      for (size_t k = 0; k < r.list.size(); ++k) {
        bool own = static_cast<int>(k % static_cast<size_t>(shards)) == opt.shards.index;
        v.push_back(own ? r.list[k].seconds : 0);
        v.push_back(own ? static_cast<double>(r.list[k].obligations) : 0);
        v.push_back(own && r.list[k].cached ? 1 : 0);
        v.push_back(own ? opt.shards.index : 0);
      }
      v.push_back(static_cast<double>(zero_cancelled.load()));
      opt.shards.sum(v);
      zero_cancelled = static_cast<size_t>(v.back());
      if (v[0] > 0 && !failed) r.reason = "a stage did not prove on another process";
      failed = v[0] > 0;
      obligations = static_cast<size_t>(v[1]);
      by_expansion = static_cast<size_t>(v[2]);
      for (size_t k = 0; k < r.list.size(); ++k) {
        const double* e = &v[3 + 4 * k];
        r.list[k].seconds = e[0];
        r.list[k].obligations = static_cast<size_t>(e[1]);
        r.list[k].cached = e[2] > 0;
        r.list[k].shard = static_cast<int>(e[3]);
      }
    }
    if (failed) {
      r.list.clear();
    } else {
      for (const auto& info : r.list) r.cached += info.cached;
      r.obligations = obligations;
      r.by_expansion = by_expansion;
      r.zero_cancelled = zero_cancelled;
      r.placed_elements = placed_elements(g);
      r.proved = true;
    }
  } catch (const ir::EvalError& e) {
    r.reason = std::string("stages do not apply: ") + e.what();
  } catch (const ir::InvalidInput& e) {
    r.reason = std::string("stages do not apply: ") + e.what();
  } catch (const NotSmall& e) {
    r.reason = e.what();
  } catch (const std::out_of_range& e) {
    r.reason = std::string("stages do not apply: ") + e.what();
  } catch (const std::bad_alloc&) {
    r.reason = "ran out of memory building or proving stages (tensors too large at these sizes)";
  } catch (const NonFinite& e) {
    r.reason = std::string("stages do not apply: ") + e.what();
  }
  r.prove_seconds = std::chrono::duration<double>(Clock::now() - t0).count() - r.build_seconds;
  return r;
}

}  // namespace parity::verify
