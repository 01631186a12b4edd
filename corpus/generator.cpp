#include "corpus/generator.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "corpus/layers.h"
#include "ir/error.h"

namespace parity::corpus {

namespace {

[[noreturn]] void bad(const std::string& msg) { throw ir::InvalidInput("gen: " + msg); }

int64_t round_up(int64_t v, int64_t mult) { return (v + mult - 1) / mult * mult; }

// A dim that must split `by` ways: the smallest multiple of `by` not below it.
void scale_to(std::map<std::string, int64_t>& d, const std::string& k, int64_t by) {
  if (d.count(k) && by > 1) d[k] = round_up(d[k], by);
}

std::string par(const std::string& x) {
  for (char ch : x)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '$'))
      return "(" + x + ")";
  return x;
}

}  // namespace

std::map<std::string, int64_t> plan_dims(const ModelConfig& m, const GenOptions& o) {
  std::map<std::string, int64_t> d = m.dims;
  const int64_t tp = o.tp;
  scale_to(d, "B", o.dp * o.ep * o.mb);
  scale_to(d, "S", o.cp * (o.sp ? tp : 1));
  if (m.family != Family::deepseek) {
    // Whole KV heads per tp rank, whole query groups per KV head.
    scale_to(d, "KV", tp);
    if (m.family == Family::gpt) d["KV"] = d["NH"] = std::max(d["NH"], d["KV"]);
    d["NH"] = round_up(std::max(d["NH"], d["KV"]), d["KV"]);
  }
  scale_to(d, "NH", tp);
  scale_to(d, "F", tp);
  scale_to(d, "FE", tp);
  scale_to(d, "V", tp);
  scale_to(d, "E", o.ep);
  for (const auto& [k, v] : o.dims) d[k] = v;
  return d;
}

std::string describe(const GenOptions& o) {
  std::string s = o.model;
  auto add = [&](const char* k, int64_t v) {
    if (v > 1) s += std::string(" ") + k + "=" + std::to_string(v);
  };
  add("dp", o.dp);
  add("ep", o.ep);
  add("tp", o.tp);
  add("cp", o.cp);
  add("pp", o.pp);
  add("mb", o.mb);
  if (o.sp) s += " sp";
  if (o.zero) s += " zero=" + std::to_string(o.zero);
  if (o.layers) s += " layers=" + std::to_string(o.layers);
  s += std::string(" step=") + step_name(o.step);
  return s;
}

namespace {

class Gen {
 public:
  Gen(const ModelConfig& m, const GenOptions& o) : m_(m), o_(o) {}

  ir::Case run() {
    check_options();
    L_ = o_.layers > 0 ? o_.layers : std::max(m_.layers, o_.pp);
    if (L_ < o_.pp) bad("--layers " + std::to_string(L_) + " is fewer than --pp " + std::to_string(o_.pp));
    dims_ = plan_dims(m_, o_);
    SpecOptions so;
    so.step = o_.step;
    so.layers = L_;
    so.dims = dims_;
    ir::Case c;
    c.spec = build_spec(m_, so, &spec_grads_);
    params_ = param_defs(m_, L_);

    plan_.name = describe(o_);
    for (const auto& [k, v] : c.spec->dims) plan_.dims[k] = v;
    if (o_.mb > 1) plan_.dims["M"] = o_.mb;
    // Row-major, tp fastest: Megatron's rank order (tp, cp, ep-in-dp, dp, pp).
    for (const auto& [name, size] : std::vector<std::pair<std::string, int64_t>>{
             {"pp", o_.pp}, {"dp", o_.dp}, {"ep", o_.ep}, {"cp", o_.cp}, {"tp", o_.tp}})
      if (size > 1 || name == "dp") {
        plan_.mesh.axes.push_back(ir::MeshAxis{name, size});
        if (size > 1) axes_[name] = size;
      }
    for (int64_t s = 0; s < o_.pp; ++s) stage(s);
    c.plan = plan_;
    return c;
  }

 private:
  void check_options() {
    for (auto [name, v] : {std::pair<const char*, int64_t>{"dp", o_.dp}, {"tp", o_.tp}, {"pp", o_.pp},
                           {"cp", o_.cp}, {"ep", o_.ep}, {"mb", o_.mb}})
      if (v < 1) bad(std::string("--") + name + " must be at least 1");
    if (o_.zero < 0 || o_.zero > 3) bad("--zero must be 0, 1, 2 or 3");
    if (o_.ep > 1 && !m_.moe()) bad("--ep needs a MoE model (deepseek-v3-*)");
    if (o_.sp && o_.tp < 2) bad("--sp needs --tp > 1");
    if (o_.marks != "all" && o_.marks != "forward" && o_.marks != "io")
      bad("--marks must be all, forward or io");
    if (o_.schedule != "seq")
      bad("--schedule " + o_.schedule +
          ": only 'seq' (forward and backward of one microbatch per loop iteration) is generated");
  }

  bool has(const std::string& a) const { return axes_.count(a) > 0; }

  std::vector<std::string> data_axes() const {
    std::vector<std::string> v;
    for (const char* a : {"dp", "ep", "cp"})
      if (has(a)) v.push_back(a);
    return v;
  }

  int64_t eval(const std::string& e) const {
    ir::Bindings b;
    for (const auto& [k, v] : dims_) b[k] = v;
    for (const auto& [k, v] : axes_) b[k] = v;
    return ir::DimExpr::parse(e).eval(b);
  }

  // Local (tp/ep-split) shape of a param.
  Shape local_shape(const ParamDef& p) const {
    Shape s = p.shape;
    for (size_t k = 0; k < s.size(); ++k) {
      if (static_cast<int>(k) == p.tp_dim && has("tp")) s[k] = ddiv(s[k], "tp");
      if (static_cast<int>(k) == p.ep_dim && has("ep")) s[k] = ddiv(s[k], "ep");
    }
    return s;
  }

  // The dim ZeRO shards a param over dp, or -1 (kept whole when no dim divides).
  int zero_dim(const ParamDef& p) const {
    if (o_.zero == 0 || !has("dp")) return -1;
    Shape s = local_shape(p);
    for (size_t k = 0; k < s.size(); ++k)
      if (eval(s[k]) % axes_.at("dp") == 0) return static_cast<int>(k);
    return -1;
  }

  Shape shard_shape(const ParamDef& p, bool shard) const {
    Shape s = local_shape(p);
    int zd = shard ? zero_dim(p) : -1;
    if (zd >= 0) s[static_cast<size_t>(zd)] = ddiv(s[static_cast<size_t>(zd)], "dp");
    return s;
  }

  Region param_region(const ParamDef& p, bool shard) const {
    Region r;
    int zd = shard ? zero_dim(p) : -1;
    for (size_t k = 0; k < p.shape.size(); ++k) {
      std::string size = p.shape[k], off = "0";
      for (auto [dim, axis] : {std::pair<int, const char*>{p.tp_dim, "tp"}, {p.ep_dim, "ep"}})
        if (static_cast<int>(k) == dim && has(axis)) {
          size = ddiv(size, axis);
          off = "$" + std::string(axis) + "*" + par(size);
        }
      if (static_cast<int>(k) == zd) {
        size = ddiv(size, "dp");
        off = dadd(off, "$dp*" + par(size));
      }
      r.push_back({off, size});
    }
    return r;
  }

  bool expert(const ParamDef& p) const { return p.ep_dim >= 0; }

  // Axes over which a param's local gradients are partial sums: the data
  // axes it sees different tokens on (ep is data parallel for dense params),
  // and tp under SP for params replicated over tp.
  std::vector<std::string> sync_axes(const ParamDef& p) const {
    std::vector<std::string> v;
    if (has("dp")) v.push_back("dp");
    if (has("ep") && !expert(p)) v.push_back("ep");
    if (has("cp")) v.push_back("cp");
    if (o_.sp && p.tp_dim < 0 && has("tp")) v.push_back("tp");
    return v;
  }

  // Axes over which a param's final (synced) grads are distinct shards.
  std::vector<std::string> distinct_axes(const ParamDef& p) const {
    std::vector<std::string> v;
    if (p.tp_dim >= 0 && has("tp")) v.push_back("tp");
    if (expert(p) && has("ep")) v.push_back("ep");
    if (zero_dim(p) >= 0) v.push_back("dp");
    return v;
  }

  void place(const std::string& prog, const std::string& value, const std::string& spec_value,
             const Region& r, const std::vector<std::string>& partial = {}) {
    ir::Placement pl;
    pl.program = prog;
    pl.value = value;
    pl.spec_value = spec_value;
    pl.kind = partial.empty() ? ir::PlacementKind::region : ir::PlacementKind::partial;
    for (const auto& [off, size] : r)
      pl.region.push_back(ir::Range{ir::DimExpr::parse(off), ir::DimExpr::parse(size)});
    pl.axes = partial;
    plan_.placements.push_back(std::move(pl));
  }

  void stage(int64_t s);

  const ModelConfig& m_;
  GenOptions o_;
  int64_t L_ = 0;
  std::map<std::string, int64_t> dims_;
  std::map<std::string, int64_t> axes_;  // present (size > 1)
  std::vector<ParamDef> params_;
  std::map<std::string, std::string> spec_grads_;
  ir::Plan plan_;
};

void Gen::stage(int64_t s) {
  const bool first = s == 0, last = s == o_.pp - 1, pipelined = o_.pp > 1;
  const bool looped = pipelined || o_.mb > 1;
  const bool zero3 = o_.zero == 3;
  const int64_t l0 = L_ * s / o_.pp, l1 = L_ * (s + 1) / o_.pp;
  const std::string prog = pipelined ? "stage" + std::to_string(s) : "main";
  ir::Program program;
  program.name = prog;
  if (pipelined) program.ranks.fixed["pp"] = {s};

  std::vector<const ParamDef*> held;
  for (const auto& p : params_)
    if ((p.layer >= l0 && p.layer < l1) || (first && p.first) || (last && p.last)) held.push_back(&p);

  ir::Bindings bind(plan_.dims.begin(), plan_.dims.end());
  Emitter e(bind, &plan_.mesh);
  Ctx c;
  c.model = &m_;
  c.plan = true;
  c.axes = axes_;
  c.sp = o_.sp;
  c.dims = bind;
  if (has("cp")) {
    c.s_off = "$cp*(S/cp)";
    c.s_size = "S/cp";
  }
  // This rank's batch rows: dp and ep both split the batch.
  std::string bl = "B", bidx;
  for (const char* a : {"dp", "ep"})
    if (has(a)) {
      bl = ddiv(bl, a);
      bidx = bidx.empty() ? "$" + std::string(a) : bidx + "*" + a + "+$" + a;
    }
  const std::string b_rank = bidx.empty() ? "0" : dmul(par(bidx), bl);
  const Region data_region = {{b_rank, bl}, {c.s_off, c.s_size}};

  // Inputs and their lineage.
  for (const ParamDef* p : held) {
    e.input(p->name, f32, shard_shape(*p, zero3));
    place(prog, p->name, p->name, param_region(*p, zero3));
  }
  Data d;
  if (first) {
    d.tokens = e.input("tokens", i64, {bl, c.s_size});
    place(prog, d.tokens, "tokens", data_region);
  }
  if (last) {
    d.labels = e.input("labels", i64, {bl, c.s_size});
    d.mask = e.input("mask", i1, {bl, c.s_size});
    place(prog, d.labels, "labels", data_region);
    place(prog, d.mask, "mask", data_region);
  }
  if (m_.family != Family::gpt) {
    const std::string half = m_.mla() ? "DR/2" : "D/2";
    d.cos = e.input("rope_cos", f32, {"S", half});
    d.sin = e.input("rope_sin", f32, {"S", half});
    place(prog, d.cos, "rope_cos", {});
    place(prog, d.sin, "rope_sin", {});
    if (has("cp")) {  // the positions of this rank's sequence chunk
      d.cos = e.op("slice", {d.cos}, {{"dim", 0}, {"offset", expr(c.s_off)}, {"size", expr(c.s_size)}},
                   "rope_cos.chunk");
      d.sin = e.op("slice", {d.sin}, {{"dim", 0}, {"offset", expr(c.s_off)}, {"size", expr(c.s_size)}},
                   "rope_sin.chunk");
    }
  }
  std::map<std::string, std::pair<std::string, std::string>> moments;
  if (o_.step == Step::adamw)
    for (const ParamDef* p : held) {
      bool shard = o_.zero >= 1;
      std::string mv = e.input(moment_name(p->name, 0), f32, shard_shape(*p, shard));
      std::string vv = e.input(moment_name(p->name, 1), f32, shard_shape(*p, shard));
      place(prog, mv, mv, param_region(*p, shard));
      place(prog, vv, vv, param_region(*p, shard));
      moments[p->name] = {mv, vv};
    }

  // The global token count: the loss is a token mean over the whole batch.
  std::string count, inv_count;
  if (last) {
    std::string mf = e.op("cast", {d.mask}, {{"dtype", "f32"}}, "loss.mask_f");
    count = e.op("reduce_sum", {mf}, {{"dims", ints({"0", "1"})}}, "loss.count_local");
    if (!data_axes().empty()) count = e.op("allreduce", {count}, axes_attr(data_axes(), "sum"), "loss.count");
    inv_count = e.op("reciprocal", {count}, {}, "loss.inv_count");
  }

  // One (micro)batch: forward, loss, backward. Returns param -> grad, and the
  // masked loss sum.
  const std::string bm = o_.mb > 1 ? ddiv(bl, "M") : bl;
  const std::string recv_shape_s = c.res_size();
  auto one_batch = [&](Emitter& be, std::string& ce) {
    std::map<std::string, std::string> gathered;
    c.param = [&](const std::string& name) -> std::string {
      const ParamDef* p = nullptr;
      for (const ParamDef* q : held)
        if (q->name == name) p = q;
      int zd = p && zero3 ? zero_dim(*p) : -1;
      if (zd < 0) return name;
      auto it = gathered.find(name);
      if (it != gathered.end()) return it->second;
      return gathered[name] = be.op("allgather", {name}, [&] {
        Attrs a = axes_attr({"dp"});
        a.push_back({"dim", zd});
        return a;
      }(), "gathered." + name);
    };
    Data dm = d;
    c.b_off = b_rank;
    c.b_size = bl;
    if (o_.mb > 1) {
      const std::string off = "$mb*" + par(bm);
      auto mbslice = [&](const std::string& v) {
        return v.empty() ? v
                         : be.op("slice", {v}, {{"dim", 0}, {"offset", expr(off)}, {"size", expr(bm)}},
                                 v + ".mb");
      };
      dm.tokens = mbslice(d.tokens);
      dm.labels = mbslice(d.labels);
      dm.mask = mbslice(d.mask);
      c.b_off = dadd(b_rank, off);
      c.b_size = bm;
    }
    std::vector<std::string> boundaries;
    std::string x;
    if (first) {
      x = embed(be, c, dm);
      boundaries.push_back(x);
    } else {
      std::string spec_in = layer_out_name(l0 - 1);
      x = be.op("recv", {},
                {{"peer", coords({{"pp", "$pp-1"}})},
                 {"tag", expr("$mb")},
                 {"shape", ints({c.b_size, recv_shape_s, "H"})},
                 {"dtype", "f32"}},
                "recv." + spec_in);
      c.mark(x, spec_in, c.res_region("H"));
    }
    for (int64_t i = l0; i < l1; ++i) {
      x = layer(be, c, i, x, dm);
      boundaries.push_back("l" + std::to_string(i) + ".attn.res");
      boundaries.push_back(x);
    }
    ir::GradRequest req;
    if (last) {
      std::string logits = head_logits(be, c, x);
      PlanLoss pl = plan_loss(be, c, logits, dm, inv_count);
      ce = pl.ce_sum;
      req.seeds[pl.seed_value] = pl.seed_grad;
    } else {
      be.op0("send", {x}, {{"peer", coords({{"pp", "$pp+1"}})}, {"tag", expr("$mb")}});
    }
    for (const ParamDef* p : held) req.wrt.push_back(p->name);
    req.wrt.insert(req.wrt.end(), boundaries.begin(), boundaries.end());
    auto g = be.backward(req);
    if (o_.marks == "all")
      for (const auto& v : boundaries) c.mark(g.at(v), spec_grads_.at(v), c.res_region("H"));
    std::map<std::string, std::string> out;
    for (const ParamDef* p : held) out[p->name] = g.at(p->name);
    c.param = [](const std::string& n) { return n; };  // `gathered` and `be` end here
    return out;
  };

  std::map<std::string, std::string> grads;
  std::string ce_total;
  if (!looped) {
    grads = one_batch(e, ce_total);
  } else {
    std::vector<std::string> init, names;
    for (const ParamDef* p : held) {
      Shape sh = shard_shape(*p, zero3);
      init.push_back(e.op("fill", {}, {{"value", 0.0}, {"shape", ints(sh)}}, "zeros." + p->name));
      names.push_back("grad.local." + p->name);
    }
    if (last) {
      init.push_back(e.op("fill", {}, {{"value", 0.0}, {"shape", ints({})}}, "zeros.loss"));
      names.push_back("loss.ce_total");
    }
    auto res = e.loop(o_.mb > 1 ? "M" : "1", "mb", init, names,
                      [&](Emitter& be, const std::vector<std::string>& acc) {
                        std::string ce;
                        auto g = one_batch(be, ce);
                        std::vector<std::string> next;
                        for (size_t k = 0; k < held.size(); ++k)
                          next.push_back(be.op("add", {acc[k], g.at(held[k]->name)}, {},
                                               "grad.local." + held[k]->name + ".next"));
                        if (last) next.push_back(be.op("add", {acc.back(), ce}, {}, "loss.ce_total.next"));
                        return next;
                      });
    for (size_t k = 0; k < held.size(); ++k) grads[held[k]->name] = res[k];
    if (last) ce_total = res.back();
  }
  for (const auto& mk : c.marks) {
    if (o_.marks == "io") break;
    bool per_mb = false;
    for (const auto& [off, size] : mk.region) per_mb |= off.find("$mb") != std::string::npos;
    // The validator binds mesh coordinates in placement regions but not loop
    // indices yet, so microbatch-dependent placements are opt-in.
    if (per_mb && !o_.loop_marks) continue;
    place(prog, mk.value, mk.spec_value, mk.region, mk.partial);
  }
  c.marks.clear();

  // The loss: token-weighted mean over the global batch.
  if (last) {
    std::string sum = ce_total;
    if (!data_axes().empty()) sum = e.op("allreduce", {sum}, axes_attr(data_axes(), "sum"), "loss.sum");
    std::string loss = e.op("div", {sum, count}, {}, kLoss);
    e.output(loss);
    place(prog, loss, kLoss, {});
  }

  // Gradient synchronization.
  std::vector<std::pair<std::string, std::string>> final_grads;
  std::map<std::string, std::string> final_name;
  std::map<std::string, std::vector<std::string>> distinct;
  for (const ParamDef* p : held) {
    std::string g = grads.at(p->name);
    std::vector<std::string> axes = sync_axes(*p);
    int zd = zero_dim(*p);
    const bool tied_apart = pipelined && p->first && p->last;  // half its grad is on another stage
    if (!axes.empty() && !(zero3 && zd >= 0) && !tied_apart && o_.marks != "io")
      place(prog, g, grad_name(p->name), param_region(*p, false), axes);
    if (zd >= 0 && o_.zero >= 1) {
      // ZeRO: the dp part of the reduction scatters (ZeRO-3's backward already did).
      std::vector<std::string> rest;
      for (const auto& a : axes)
        if (a != "dp") rest.push_back(a);
      if (!rest.empty()) g = e.op("allreduce", {g}, axes_attr(rest, "sum"), "grad.reduced." + p->name);
      if (!zero3) {
        Attrs a = axes_attr({"dp"}, "sum");
        a.push_back({"dim", zd});
        g = e.op("reduce_scatter", {g}, a, "grad.shard." + p->name);
      }
    } else if (!axes.empty()) {
      g = e.op("allreduce", {g}, axes_attr(axes, "sum"), "grad.reduced." + p->name);
    }
    if (tied_apart) {
      // Tied embedding / LM head on the first and last stage: exchange and add.
      const std::string peer = first ? std::to_string(o_.pp - 1) : "0";
      const Attrs at = {{"peer", coords({{"pp", peer}})}, {"tag", expr("5000")}};
      e.op0("send", {g}, at);
      Attrs ra = at;
      ra.push_back({"shape", ints(shard_shape(*p, o_.zero >= 1))});
      ra.push_back({"dtype", "f32"});
      std::string other = e.op("recv", {}, ra, "grad.tied_peer." + p->name);
      g = e.op("add", {g, other}, {}, "grad.tied." + p->name);
    }
    std::string out = e.op("identity", {g}, {}, grad_name(p->name));
    final_name[p->name] = out;
    e.output(out);
    place(prog, out, grad_name(p->name), param_region(*p, o_.zero >= 1));
    // A tied param held by two stages counts once in the global norm.
    if (!(tied_apart && !first)) {
      final_grads.push_back({p->name, out});
      distinct[p->name] = distinct_axes(*p);
    }
  }
  if (o_.step != Step::grads) {
    std::string norm = global_norm(e, final_grads, distinct,
                                   pipelined ? std::vector<std::string>{"pp"} : std::vector<std::string>{});
    e.output(norm);
    place(prog, norm, kGradNorm, {});
    if (o_.step == Step::adamw) {
      std::string coef = clip_coef(e, norm, StepConsts{});
      for (const ParamDef* p : held) {
        int zd = zero_dim(*p);
        std::string g = e.op("mul", {final_name.at(p->name), coef}, {}, "clip.g." + p->name);
        std::string w = p->name;
        bool gather = zd >= 0 && !zero3;
        if (gather) {
          Shape local = local_shape(*p);
          std::string sz = ddiv(local[static_cast<size_t>(zd)], "dp");
          w = e.op("slice", {w}, {{"dim", zd}, {"offset", expr("$dp*" + par(sz))}, {"size", expr(sz)}},
                   "shard." + p->name);
        }
        const auto& [mv, vv] = moments.at(p->name);
        std::string np = gather ? "new.shard." + p->name : new_param_name(p->name);
        auto r = adamw(e, w, g, mv, vv, {np, new_moment_name(p->name, 0), new_moment_name(p->name, 1)},
                       StepConsts{});
        if (gather) {
          Attrs a = axes_attr({"dp"});
          a.push_back({"dim", zd});
          r[0] = e.op("allgather", {r[0]}, a, new_param_name(p->name));
        }
        for (const auto& v : r) e.output(v);
        place(prog, r[0], new_param_name(p->name), param_region(*p, zero3));
        place(prog, r[1], r[1], param_region(*p, o_.zero >= 1));
        place(prog, r[2], r[2], param_region(*p, o_.zero >= 1));
      }
    }
  }
  program.graph = e.graph();
  plan_.programs.push_back(std::move(program));
}

}  // namespace

ir::Case generate(const GenOptions& o) {
  const ModelConfig* m = find_model(o.model);
  if (!m) bad("unknown model '" + o.model + "' (see `parity gen --list`)");
  return Gen(*m, o).run();
}

}  // namespace parity::corpus
