// Random single mutations of correct plans: every mutant whose numbers differ
// from the spec must be rejected (MISMATCH or INVALID), never VERIFIED.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "corpus/examples.h"
#include "ir/interp.h"
#include "ir/num_domain.h"
#include "ir/validate.h"
#include "tests/lib/mutation_sites.h"
#include "verify/check.h"

namespace parity {
namespace {

using ir::Op;

using mutation::collect;
using mutation::graph_of;
using mutation::Site;

// Applies one random mutation at `s`; returns its name or "" if none applies.
std::string mutate(ir::Case& c, const Site& s, std::mt19937_64& rng,
                   const std::map<std::string, ir::TypeMap>& types) {
  ir::Graph* g = graph_of(c.plan, s);
  Op& op = g->ops[s.path.back()];
  std::vector<std::string> choices;
  bool coll = op.attr("axes") || op.attr("groups");
  if (coll) choices.insert(choices.end(), {"drop_collective", "duplicate_collective", "change_reduce", "retarget_axis"});
  if (op.kind == "scale" || op.kind == "add_scalar" || op.kind == "pow" || op.kind == "fill") choices.push_back("change_constant");
  if (op.operands.size() == 2 && !coll) choices.push_back("swap_operands");
  if (op.kind == "slice") choices.push_back("shift_slice");
  if (op.kind == "send" || op.kind == "recv") choices.push_back("change_peer");
  if (!op.operands.empty() && !coll && op.kind != "send") choices.push_back("wrong_input");
  if (choices.empty()) return "";
  std::string m = choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
  const ir::TypeMap& tm = types.at(c.plan.programs[s.program].name);
  if (m == "drop_collective") {
    mutation::drop_collective(op);
  } else if (m == "duplicate_collective") {
    mutation::duplicate_collective(*g, op, s.path.back());
  } else if (m == "change_reduce") {
    std::string cur = "sum";
    if (auto* a = op.attr("reduce")) cur = std::get<std::string>(*a);
    op.attrs["reduce"] = std::string(cur == "sum" ? "avg" : "sum");
  } else if (m == "retarget_axis") {
    if (c.plan.mesh.axes.size() < 2 || !op.attr("axes")) return "";
    auto axes = std::get<ir::Strings>(*op.attr("axes"));
    for (const auto& a : c.plan.mesh.axes)
      if (a.name != axes[0]) {
        axes[0] = a.name;
        break;
      }
    op.attrs["axes"] = axes;
  } else if (m == "change_constant") {
    const char* key = op.kind == "scale" ? "factor" : op.kind == "pow" ? "exponent" : "value";
    double v = 1;
    if (auto* a = op.attr(key)) v = std::holds_alternative<double>(*a) ? std::get<double>(*a) : 1.0;
    op.attrs[key] = v == 0 ? 0.5 : v * 2;
  } else if (m == "swap_operands") {
    if (op.operands[0] == op.operands[1]) return "";
    std::swap(op.operands[0], op.operands[1]);
  } else if (m == "shift_slice") {
    op.attrs["offset"] = std::get<ir::DimExpr>(*op.attr("offset")) + ir::DimExpr(1);
  } else if (m == "change_peer") {
    auto peer = std::get<ir::Coords>(*op.attr("peer"));
    for (auto& [axis, e] : peer) e = e + ir::DimExpr(1);
    op.attrs["peer"] = peer;
  } else if (m == "wrong_input") {
    // Another value of the same type defined before this op (a multi-use bug).
    size_t k = std::uniform_int_distribution<size_t>(0, op.operands.size() - 1)(rng);
    auto want = tm.find(op.operands[k]);
    if (want == tm.end()) return "";
    std::vector<std::string> cands;
    for (const auto& in : g->inputs)
      if (in != op.operands[k] && tm.count(in) && tm.at(in).str() == want->second.str()) cands.push_back(in);
    for (size_t i = 0; i < s.path.back(); ++i)
      for (const auto& r : g->ops[i].results)
        if (r != op.operands[k] && tm.count(r) && tm.at(r).str() == want->second.str()) cands.push_back(r);
    if (cands.empty()) return "";
    op.operands[k] = cands[std::uniform_int_distribution<size_t>(0, cands.size() - 1)(rng)];
  }
  return m;
}

// Independent numeric check: do any placed plan values differ from the spec?
bool numerically_differs(const ir::Case& c, uint64_t seed) {
  ir::NumDomain<double> nd;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  ir::DiagList d;
  ir::TypeMap st;
  ir::validate_spec(*c.spec, "", d, &st);
  ir::Bindings dims = c.spec->dims;
  for (const auto& [k, v] : c.plan.dims) dims.emplace(k, v);
  std::map<std::string, ir::Tensor<double>> in;
  for (const auto& name : c.spec->graph.inputs) {
    ir::Tensor<double> t(ir::concrete_shape(st.at(name), dims), 0.0);
    for (auto& x : t.data) x = st.at(name).dtype == ir::DType::f32 ? u(rng) : std::floor(std::fabs(u(rng)) * 2);
    in[name] = t;
  }
  auto spec = ir::run_graph(nd, c.spec->graph, dims, in);
  std::map<std::pair<std::string, std::string>, std::vector<const ir::Placement*>> pl;
  for (const auto& p : c.plan.placements) pl[{p.program, p.value}].push_back(&p);
  std::map<std::tuple<const ir::Placement*, std::string, std::vector<int64_t>>, ir::Tensor<double>> partial;
  bool differs = false;
  auto compare = [&](const ir::Placement& p, const ir::Bindings& b, const ir::Tensor<double>& v) {
    const auto& sv = spec.at(p.spec_value);
    for (int64_t e = 0; e < v.size(); ++e) {
      auto idx = v.index_of(e);
      for (size_t k = 0; k < p.region.size(); ++k) idx[k] += p.region[k].offset.eval(b);
      double a = sv.data[static_cast<size_t>(sv.flat(idx))], x = v.data[static_cast<size_t>(e)];
      if (std::fabs(a - x) > 1e-6 * (1 + std::fabs(a) + std::fabs(x))) differs = true;
    }
  };
  ir::PlanRunner<ir::NumDomain<double>> runner(c.plan, nd);
  runner.run(
      [&](int64_t rank, const ir::Program& prog, const std::string& name) {
        const ir::Placement& p = *pl.at({prog.name, name})[0];
        ir::Bindings b = c.plan.rank_bindings(rank);
        for (const auto& [k, v] : dims) b.emplace(k, v);
        const auto& sv = in.at(p.spec_value);
        std::vector<int64_t> off(sv.rank(), 0), size = sv.shape;
        for (size_t k = 0; k < p.region.size(); ++k) off[k] = p.region[k].offset.eval(b), size[k] = p.region[k].size.eval(b);
        ir::Tensor<double> t(size, 0.0);
        for (int64_t e = 0; e < t.size(); ++e) {
          auto idx = t.index_of(e);
          for (size_t k = 0; k < idx.size(); ++k) idx[k] += off[k];
          t.data[static_cast<size_t>(e)] = sv.data[static_cast<size_t>(sv.flat(idx))];
        }
        return t;
      },
      [&](int64_t rank, const ir::Program& prog, const std::string& name, const ir::Instr& ins, const ir::Tensor<double>& v) {
        auto it = pl.find({prog.name, name});
        if (it == pl.end()) return;
        ir::Bindings b = c.plan.rank_bindings(rank);
        for (const auto& [k, x] : dims) b.emplace(k, x);
        for (const auto& [k, x] : ins.loop()) b[k] = x;
        for (const ir::Placement* p : it->second) {
          if (p->kind == ir::PlacementKind::region) {
            compare(*p, b, v);
            continue;
          }
          ir::Coord co = c.plan.mesh.coord_of(rank);
          for (const auto& a : p->axes) co[*c.plan.mesh.axis_index(a)] = -1;
          auto& acc = partial[{p, ins.iter, co}];
          if (acc.data.empty()) acc = v;
          else for (size_t i = 0; i < v.data.size(); ++i) acc.data[i] += v.data[i];
        }
      });
  (void)partial;  // partial placements are checked by the verifier; region ones suffice here
  return differs;
}

TEST(Mutation, NoNumericallyWrongMutantIsVerified) {
  std::mt19937_64 rng(12345);
  std::vector<ir::Case> bases = {corpus::mlp_tp2(), corpus::pipeline_pp2(), corpus::dp2()};
  int total = 0, invalid = 0, mismatch = 0, verified = 0, unknown = 0, differing = 0;
  std::map<std::string, int> by_kind;
  verify::VerifyOptions opt;
  opt.random_points = 2;
  for (int iter = 0; total < 320 && iter < 5000; ++iter) {
    ir::Case c = bases[static_cast<size_t>(iter) % bases.size()];
    std::map<std::string, ir::TypeMap> types;
    ir::DiagList d0;
    ir::validate_plan(c.plan, &*c.spec, "", d0, &types);
    ASSERT_TRUE(d0.empty());
    std::vector<Site> sites;
    for (size_t p = 0; p < c.plan.programs.size(); ++p) collect(c.plan.programs[p].graph, p, {}, sites);
    Site s = sites[std::uniform_int_distribution<size_t>(0, sites.size() - 1)(rng)];
    std::string m = mutate(c, s, rng, types);
    if (m.empty()) continue;
    ++total;
    ++by_kind[m];
    opt.seed = static_cast<uint64_t>(iter) + 1;
    verify::Verdict v = verify::verify_case(c, "mutant", opt);
    if (v.kind == verify::VerdictKind::invalid) {
      ++invalid;
      continue;
    }
    bool diff = false;
    try {
      diff = numerically_differs(c, 777 + static_cast<uint64_t>(iter)) || numerically_differs(c, 999 + static_cast<uint64_t>(iter));
    } catch (const std::exception&) {
      diff = true;  // could not even run: must not have been VERIFIED
    }
    if (diff) ++differing;
    if (v.kind == verify::VerdictKind::verified) ++verified;
    if (v.kind == verify::VerdictKind::mismatch) ++mismatch;
    if (v.kind == verify::VerdictKind::unknown) ++unknown;
    EXPECT_FALSE(diff && v.kind == verify::VerdictKind::verified) << "mutation " << m << " is numerically wrong but VERIFIED";
    EXPECT_FALSE(diff && v.kind == verify::VerdictKind::unknown) << "mutation " << m << " is numerically wrong but UNKNOWN: " << v.reason;
  }
  std::string kinds;
  for (const auto& [k, n] : by_kind) kinds += " " + k + "=" + std::to_string(n);
  std::printf("mutants %d: invalid %d, mismatch %d, verified %d (numerically equal), unknown %d; numerically differing %d;%s\n",
              total, invalid, mismatch, verified, unknown, differing, kinds.c_str());
  EXPECT_GE(total, 300);
}

}  // namespace
}  // namespace parity
