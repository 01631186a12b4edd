#include "corpus/examples.h"

#include "corpus/builder.h"

namespace parity::corpus {

namespace {

using ir::Role;

constexpr int64_t kB = 4, kH = 4, kF = 8;
// The spec's constants: the loss is sum(d^2)/B, so d loss/d o = 2d/B.
constexpr double kInvB = 1.0 / kB;
constexpr double kTwoOverB = 2.0 / kB;
constexpr double kMinusLr = -0.1;

// w + (-lr) * g, the SGD update.
std::string sgd(GraphBuilder& g, const std::string& w, const std::string& grad,
                const std::string& out) {
  std::string step = g.op("scale", {grad}, {{"factor", kMinusLr}}, out + "_step");
  return g.let(out, "add", {w, step});
}

PlanBuilder& mlp_dims(PlanBuilder& p) { return p.dim("B", kB).dim("H", kH).dim("F", kF); }

}  // namespace

ir::Spec mlp_spec() {
  SpecBuilder s("mlp2");
  s.dim("B", kB).dim("H", kH).dim("F", kF);
  auto x = s.input("x", f32, {"B", "H"}, Role::data);
  auto w1 = s.input("w1", f32, {"H", "F"}, Role::param);
  auto w2 = s.input("w2", f32, {"F", "H"}, Role::param);
  auto y = s.input("y", f32, {"B", "H"}, Role::data);
  GraphBuilder& g = s.graph();
  // Forward.
  auto h = g.let("h", "matmul", {x, w1});
  auto a = g.let("a", "silu", {h});
  auto o = g.let("o", "matmul", {a, w2});
  auto d = g.let("d", "sub", {o, y});
  auto sq = g.let("sq", "square", {d});
  auto ss = g.let("ss", "reduce_sum", {sq}, {{"dims", ints({"0", "1"})}});
  g.let("loss", "scale", {ss}, {{"factor", kInvB}});
  // Backward.
  auto dout = g.let("do", "scale", {d}, {{"factor", kTwoOverB}});
  g.let("dw2", "matmul", {a, dout}, {{"transpose_a", 1}});
  auto da = g.let("da", "matmul", {dout, w2}, {{"transpose_b", 1}});
  auto dh = g.let("dh", "silu_grad", {h, da});
  g.let("dw1", "matmul", {x, dh}, {{"transpose_a", 1}});
  // SGD.
  sgd(g, w1, "dw1", "w1n");
  sgd(g, w2, "dw2", "w2n");
  s.output("loss", Role::loss);
  s.output("dw1", Role::grad);
  s.output("dw2", Role::grad);
  s.output("w1n", Role::updated_param);
  s.output("w2n", Role::updated_param);
  return s.build();
}

ir::Case mlp_tp2() {
  PlanBuilder p("mlp2_tp2");
  p.axis("tp", 2);
  mlp_dims(p);
  GraphBuilder& g = p.program("tp");
  auto x = g.input("x", f32, {"B", "H"});
  auto w1s = g.input("w1s", f32, {"H", "F/tp"});
  auto w2s = g.input("w2s", f32, {"F/tp", "H"});
  auto y = g.input("y", f32, {"B", "H"});
  // Forward: the hidden layer is split by columns, so the second matmul yields
  // a partial sum that one allreduce completes.
  auto hs = g.let("hs", "matmul", {x, w1s});
  auto as = g.let("as", "silu", {hs});
  auto op = g.let("o_part", "matmul", {as, w2s});
  auto o = g.let("o", "allreduce", {op}, {{"axes", strings({"tp"})}, {"reduce", "sum"}});
  auto d = g.let("d", "sub", {o, y});
  auto sq = g.let("sq", "square", {d});
  auto ss = g.let("ss", "reduce_sum", {sq}, {{"dims", ints({"0", "1"})}});
  g.let("loss", "scale", {ss}, {{"factor", kInvB}});
  // Backward: every rank holds the full d, so all weight gradients stay local
  // (dx would need an allreduce, but x is data and needs no gradient).
  auto dout = g.let("do", "scale", {d}, {{"factor", kTwoOverB}});
  g.let("dw2s", "matmul", {as, dout}, {{"transpose_a", 1}});
  auto das = g.let("das", "matmul", {dout, w2s}, {{"transpose_b", 1}});
  auto dhs = g.let("dhs", "silu_grad", {hs, das});
  g.let("dw1s", "matmul", {x, dhs}, {{"transpose_a", 1}});
  sgd(g, w1s, "dw1s", "w1ns");
  sgd(g, w2s, "dw2s", "w2ns");
  for (const char* v : {"loss", "dw1s", "dw2s", "w1ns", "w2ns"}) g.output(v);

  const Region cols = {{"0", "H"}, {"$tp*(F/tp)", "F/tp"}};
  const Region rows = {{"$tp*(F/tp)", "F/tp"}, {"0", "H"}};
  const Region bcols = {{"0", "B"}, {"$tp*(F/tp)", "F/tp"}};
  p.replica("tp", x, "x").region("tp", w1s, "w1", cols).region("tp", w2s, "w2", rows);
  p.replica("tp", y, "y");
  // Intermediates, so a wrong plan is blamed on the first diverging value.
  p.region("tp", hs, "h", bcols).region("tp", as, "a", bcols);
  p.partial("tp", op, "o", {"tp"}).replica("tp", o, "o").replica("tp", d, "d");
  p.region("tp", das, "da", bcols).region("tp", dhs, "dh", bcols);
  p.replica("tp", "loss", "loss");
  p.region("tp", "dw1s", "dw1", cols).region("tp", "dw2s", "dw2", rows);
  p.region("tp", "w1ns", "w1n", cols).region("tp", "w2ns", "w2n", rows);
  return ir::Case{mlp_spec(), p.build()};
}

ir::Case pipeline_pp2() {
  PlanBuilder p("mlp2_pp2");
  p.axis("pp", 2);
  mlp_dims(p).dim("M", 2);
  const std::string mb_rows = "$mb*(B/M)";
  // Activations travel forward under tag mb, their gradients back under 100+mb.
  const Attrs fwd_next = {{"peer", coords({{"pp", "$pp+1"}})}, {"tag", expr("$mb")}};
  const Attrs fwd_prev = {{"peer", coords({{"pp", "$pp-1"}})}, {"tag", expr("$mb")}};
  const Attrs bwd_next = {{"peer", coords({{"pp", "$pp+1"}})}, {"tag", expr("100+$mb")}};
  const Attrs bwd_prev = {{"peer", coords({{"pp", "$pp-1"}})}, {"tag", expr("100+$mb")}};
  auto recv = [](Attrs a, const Shape& shape) {
    a.push_back({"shape", ints(shape)});
    a.push_back({"dtype", "f32"});
    return a;
  };

  // Stage 0: the first layer. Per microbatch: forward, send the activation,
  // receive its gradient, accumulate dw1.
  GraphBuilder& s0 = p.program("stage0", {{"pp", {0}}});
  auto x = s0.input("x", f32, {"B", "H"});
  auto w1 = s0.input("w1", f32, {"H", "F"});
  auto zero1 = s0.let("dw1_init", "fill", {}, {{"value", 0.0}, {"shape", ints({"H", "F"})}});
  auto stage0_step = [&](GraphBuilder& b) {
    auto acc = b.input("dw1_acc", f32, {"H", "F"});
    auto xs =
        b.let("xs", "slice", {x}, {{"dim", 0}, {"offset", expr(mb_rows)}, {"size", expr("B/M")}});
    auto h = b.let("h", "matmul", {xs, w1});
    auto a = b.let("a", "silu", {h});
    b.op_n("send", {a}, fwd_next, {});
    auto da = b.let("da", "recv", {}, recv(bwd_next, {"B/M", "F"}));
    auto dh = b.let("dh", "silu_grad", {h, da});
    auto g1 = b.let("dw1_mb", "matmul", {xs, dh}, {{"transpose_a", 1}});
    b.output(b.let("dw1_next", "add", {acc, g1}));
  };
  auto dw1 = s0.loop("M", "mb", {zero1}, stage0_step, {"dw1"})[0];
  sgd(s0, w1, dw1, "w1n");
  s0.output(dw1);
  s0.output("w1n");

  // Stage 1: the second layer and the loss. Per microbatch: receive the
  // activation, forward, loss and dw2 contributions, send da back.
  GraphBuilder& s1 = p.program("stage1", {{"pp", {1}}});
  auto w2 = s1.input("w2", f32, {"F", "H"});
  auto y = s1.input("y", f32, {"B", "H"});
  auto zero_l = s1.let("loss_init", "fill", {}, {{"value", 0.0}, {"shape", ints({})}});
  auto zero2 = s1.let("dw2_init", "fill", {}, {{"value", 0.0}, {"shape", ints({"F", "H"})}});
  auto stage1_step = [&](GraphBuilder& b) {
    auto lacc = b.input("loss_acc", f32, {});
    auto acc = b.input("dw2_acc", f32, {"F", "H"});
    auto a = b.let("a1", "recv", {}, recv(fwd_prev, {"B/M", "F"}));
    auto o = b.let("o", "matmul", {a, w2});
    auto ys =
        b.let("ys", "slice", {y}, {{"dim", 0}, {"offset", expr(mb_rows)}, {"size", expr("B/M")}});
    auto d = b.let("d", "sub", {o, ys});
    auto sq = b.let("sq", "square", {d});
    auto ss = b.let("ss", "reduce_sum", {sq}, {{"dims", ints({"0", "1"})}});
    // The spec divides by the global batch B, not by B/M.
    auto l = b.let("loss_mb", "scale", {ss}, {{"factor", kInvB}});
    auto dout = b.let("do", "scale", {d}, {{"factor", kTwoOverB}});
    auto g2 = b.let("dw2_mb", "matmul", {a, dout}, {{"transpose_a", 1}});
    auto da = b.let("da1", "matmul", {dout, w2}, {{"transpose_b", 1}});
    b.op_n("send", {da}, bwd_prev, {});
    b.output(b.let("loss_next", "add", {lacc, l}));
    b.output(b.let("dw2_next", "add", {acc, g2}));
  };
  auto res = s1.loop("M", "mb", {zero_l, zero2}, stage1_step, {"loss", "dw2"});
  sgd(s1, w2, res[1], "w2n");
  s1.output("loss");
  s1.output("dw2");
  s1.output("w2n");

  p.replica("stage0", x, "x").replica("stage0", w1, "w1");
  p.replica("stage1", w2, "w2").replica("stage1", y, "y");
  p.replica("stage0", "dw1", "dw1").replica("stage0", "w1n", "w1n");
  p.replica("stage1", "loss", "loss")
      .replica("stage1", "dw2", "dw2")
      .replica("stage1", "w2n", "w2n");
  return ir::Case{mlp_spec(), p.build()};
}

ir::Case dp2() {
  PlanBuilder p("mlp2_dp2");
  p.axis("dp", 2);
  mlp_dims(p);
  GraphBuilder& g = p.program("dp");
  auto xs = g.input("xs", f32, {"B/dp", "H"});
  auto w1 = g.input("w1", f32, {"H", "F"});
  auto w2 = g.input("w2", f32, {"F", "H"});
  auto ys = g.input("ys", f32, {"B/dp", "H"});
  const Attrs sum_dp = {{"axes", strings({"dp"})}, {"reduce", "sum"}};
  auto h = g.let("h", "matmul", {xs, w1});
  auto a = g.let("a", "silu", {h});
  auto o = g.let("o", "matmul", {a, w2});
  auto d = g.let("d", "sub", {o, ys});
  auto sq = g.let("sq", "square", {d});
  auto ss = g.let("ss", "reduce_sum", {sq}, {{"dims", ints({"0", "1"})}});
  // Scaling by the global 1/B (not the local dp/B) makes every local loss and
  // gradient a partial sum of the spec's, so a plain sum-allreduce completes it.
  auto lp = g.let("loss_part", "scale", {ss}, {{"factor", kInvB}});
  g.let("loss", "allreduce", {lp}, sum_dp);
  auto dout = g.let("do", "scale", {d}, {{"factor", kTwoOverB}});
  auto g2 = g.let("dw2_part", "matmul", {a, dout}, {{"transpose_a", 1}});
  auto da = g.let("da", "matmul", {dout, w2}, {{"transpose_b", 1}});
  auto dh = g.let("dh", "silu_grad", {h, da});
  auto g1 = g.let("dw1_part", "matmul", {xs, dh}, {{"transpose_a", 1}});
  auto dw1 = g.let("dw1", "allreduce", {g1}, sum_dp);
  auto dw2 = g.let("dw2", "allreduce", {g2}, sum_dp);
  sgd(g, w1, dw1, "w1n");
  sgd(g, w2, dw2, "w2n");
  for (const char* v : {"loss", "dw1", "dw2", "w1n", "w2n"}) g.output(v);

  const Region batch = {{"$dp*(B/dp)", "B/dp"}, {"0", "H"}};
  p.region("dp", xs, "x", batch).region("dp", ys, "y", batch);
  p.replica("dp", w1, "w1").replica("dp", w2, "w2");
  p.region("dp", h, "h", {{"$dp*(B/dp)", "B/dp"}, {"0", "F"}});
  p.region("dp", d, "d", batch);
  p.partial("dp", lp, "loss", {"dp"}).replica("dp", "loss", "loss");
  p.partial("dp", g1, "dw1", {"dp"}).replica("dp", dw1, "dw1");
  p.partial("dp", g2, "dw2", {"dp"}).replica("dp", dw2, "dw2");
  p.replica("dp", "w1n", "w1n").replica("dp", "w2n", "w2n");
  return ir::Case{mlp_spec(), p.build()};
}

const std::vector<Example>& examples() {
  static const std::vector<Example> all = {
      {"mlp_tp2", mlp_tp2}, {"pipeline_pp2", pipeline_pp2}, {"dp2", dp2}};
  return all;
}

}  // namespace parity::corpus
