// append_backward: every adjoint against central finite differences of the
// forward graph (run with the reference semantics over doubles), the emitted
// graph checks clean, and the collective conventions give, on a tensor-parallel
// plan, the gradients of the single-device loss.
#include "ir/autodiff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "corpus/builder.h"
#include "ir/interp.h"
#include "ir/num_domain.h"
#include "ir/validate.h"

namespace parity::ir {
namespace {

using corpus::GraphBuilder;
using corpus::ints;
using T = Tensor<double>;
using Env = std::map<std::string, T>;

constexpr double kStep = 1e-6;
constexpr double kTol = 1e-5;

std::string diags_str(const DiagList& d) {
  std::string s;
  for (const auto& x : d.items) s += x.str() + "\n";
  return s;
}

T rand_tensor(const std::vector<int64_t>& shape, double lo, double hi, bool integer,
              std::mt19937& rng) {
  T t(shape, 0.0);
  std::uniform_real_distribution<double> u(lo, hi);
  std::uniform_int_distribution<int64_t> ui(static_cast<int64_t>(lo), static_cast<int64_t>(hi) - 1);
  for (auto& v : t.data) v = integer ? static_cast<double>(ui(rng)) : u(rng);
  return t;
}

// One graph input: float values uniform in [lo, hi), integers in [lo, hi).
struct In {
  std::string name;
  DType dt;
  corpus::Shape shape;
  double lo = -1.5, hi = 1.5;
  bool integer = false;
};

In ints_in(const std::string& name, DType dt, const corpus::Shape& shape, int64_t lo, int64_t hi) {
  return In{name, dt, shape, static_cast<double>(lo), static_cast<double>(hi), true};
}
In pos_in(const std::string& name, const corpus::Shape& shape) {
  return In{name, DType::f64, shape, 0.5, 2.0};
}
In f_in(const std::string& name, const corpus::Shape& shape) { return In{name, DType::f64, shape}; }

Env make_env(const std::vector<In>& ins, std::mt19937& rng) {
  Env env;
  for (const auto& in : ins) {
    std::vector<int64_t> shape;
    for (const auto& d : in.shape) shape.push_back(std::stoll(d));
    env[in.name] = rand_tensor(shape, in.lo, in.hi, in.integer || !is_float(in.dt), rng);
  }
  return env;
}

GradRequest request(const std::string& loss, const std::vector<std::string>& wrt) {
  GradRequest r;
  r.loss = loss;
  r.wrt = wrt;
  return r;
}

double scalar_of(const Env& env, const std::string& v) { return env.at(v).data.at(0); }

// Appends the backward of `fwd` and checks each gradient of `loss` against
// central differences; returns the graph with its backward.
Graph check_grads(const Graph& fwd, const Bindings& b, const std::string& loss,
                  const std::vector<std::string>& wrt, const Env& env) {
  Graph g = fwd;
  GradRequest req;
  req.loss = loss;
  req.wrt = wrt;
  auto names = append_backward(g, req, b, nullptr);
  DiagList d;
  check_graph(g, b, nullptr, Diag{}, d);
  EXPECT_TRUE(d.empty()) << diags_str(d);
  NumDomain<double> dom;
  Env out = run_graph(dom, g, b, env);
  for (const auto& w : wrt) {
    const T& grad = out.at(names.at(w));
    EXPECT_EQ(grad.shape, env.at(w).shape) << w;
    if (grad.shape != env.at(w).shape) continue;
    for (size_t i = 0; i < grad.data.size(); ++i) {
      Env plus = env, minus = env;
      plus[w].data[i] += kStep;
      minus[w].data[i] -= kStep;
      double fd = (scalar_of(run_graph(dom, fwd, b, plus), loss) -
                   scalar_of(run_graph(dom, fwd, b, minus), loss)) /
                  (2 * kStep);
      EXPECT_NEAR(grad.data[i], fd, kTol * std::max(1.0, std::abs(fd)))
          << "d loss / d " << w << "[" << i << "]";
    }
  }
  return g;
}

// --- one op at a time ----------------------------------------------------

struct OpCase {
  std::string name;
  std::vector<In> inputs;
  std::function<std::string(GraphBuilder&)> body;  // returns y
  std::vector<std::string> wrt;                    // empty: every float input
};

void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

std::vector<OpCase> op_cases() {
  using A = corpus::Attrs;
  auto unary = [](const std::string& kind, bool positive, A attrs = {}) {
    return OpCase{kind,
                  {positive ? pos_in("x", {"2", "3"}) : f_in("x", {"2", "3"})},
                  [=](GraphBuilder& g) { return g.op(kind, {"x"}, attrs); },
                  {}};
  };
  auto binary = [](const std::string& name, const std::string& kind, In a, In b) {
    return OpCase{name, {a, b}, [=](GraphBuilder& g) { return g.op(kind, {"a", "b"}); }, {}};
  };
  auto matmul = [](const std::string& name, corpus::Shape a, corpus::Shape b, int ta, int tb) {
    return OpCase{name,
                  {f_in("a", a), f_in("b", b)},
                  [=](GraphBuilder& g) {
                    return g.op("matmul", {"a", "b"}, {{"transpose_a", ta}, {"transpose_b", tb}});
                  },
                  {}};
  };
  auto one = [](const std::string& name, In x, std::function<std::string(GraphBuilder&)> f) {
    return OpCase{name, {x}, std::move(f), {}};
  };
  std::vector<OpCase> c;
  c.push_back(binary("add_broadcast", "add", f_in("a", {"2", "3"}), f_in("b", {"3"})));
  c.push_back(
      binary("sub_broadcast_both", "sub", f_in("a", {"2", "1", "3"}), f_in("b", {"4", "1"})));
  c.push_back(binary("mul_broadcast", "mul", f_in("a", {"2", "3"}), f_in("b", {"2", "1"})));
  c.push_back(binary("mul_scalar_operand", "mul", f_in("a", {"2", "3"}), f_in("b", {})));
  c.push_back(binary("div_broadcast", "div", f_in("a", {"2", "3"}), pos_in("b", {"3"})));
  c.push_back(binary("maximum", "maximum", f_in("a", {"2", "3"}), f_in("b", {"3"})));
  c.push_back(binary("minimum", "minimum", f_in("a", {"3"}), f_in("b", {"2", "3"})));
  for (const char* k :
       {"neg", "exp", "tanh", "sigmoid", "silu", "gelu", "relu", "identity", "square"})
    c.push_back(unary(k, false));
  for (const char* k : {"log", "sqrt", "rsqrt", "reciprocal"}) c.push_back(unary(k, true));
  c.push_back(unary("scale", false, {{"factor", 1.7}}));
  c.push_back(unary("add_scalar", false, {{"value", 0.3}}));
  auto pow = [&](const std::string& name, double e, bool positive) {
    OpCase p = unary("pow", positive, {{"exponent", e}});
    p.name = name;
    return p;
  };
  c.push_back(pow("pow_3", 3.0, false));
  c.push_back(pow("pow_2", 2.0, false));
  c.push_back(pow("pow_1", 1.0, false));
  c.push_back(pow("pow_0", 0.0, false));
  c.push_back(pow("pow_minus_2", -2.0, true));
  c.push_back(pow("pow_half", 0.5, true));
  c.push_back(pow("pow_2_5", 2.5, true));
  c.push_back(one("cast_f32_to_f64", In{"x", DType::f32, {"2", "3"}}, [](GraphBuilder& g) {
    return g.op("cast", {"x"}, {{"dtype", "f64"}});
  }));
  c.push_back(matmul("matmul", {"2", "3"}, {"3", "4"}, 0, 0));
  c.push_back(matmul("matmul_ta", {"3", "2"}, {"3", "4"}, 1, 0));
  c.push_back(matmul("matmul_tb", {"2", "3"}, {"4", "3"}, 0, 1));
  c.push_back(matmul("matmul_ta_tb", {"3", "2"}, {"4", "3"}, 1, 1));
  c.push_back(matmul("matmul_batched_weight", {"2", "3", "4"}, {"4", "5"}, 0, 0));
  c.push_back(matmul("matmul_batch_broadcast", {"2", "1", "3", "4"}, {"3", "4", "2"}, 0, 0));
  c.push_back(matmul("matmul_batch_broadcast_ta_tb", {"2", "4", "3"}, {"1", "5", "4"}, 1, 1));
  auto red = [&](const std::string& name, const std::string& kind, std::vector<std::string> dims,
                 int keep) {
    return one(name, f_in("x", {"2", "3", "4"}), [=](GraphBuilder& g) {
      return g.op(kind, {"x"}, {{"dims", ints(dims)}, {"keepdim", keep}});
    });
  };
  c.push_back(red("reduce_sum_dim1", "reduce_sum", {"1"}, 0));
  c.push_back(red("reduce_sum_keepdim", "reduce_sum", {"0", "2"}, 1));
  c.push_back(red("reduce_sum_all", "reduce_sum", {"0", "1", "2"}, 0));
  c.push_back(red("reduce_mean_last", "reduce_mean", {"-1"}, 0));
  c.push_back(red("reduce_mean_keepdim", "reduce_mean", {"0", "1"}, 1));
  c.push_back(red("reduce_max_dim1", "reduce_max", {"1"}, 0));
  c.push_back(red("reduce_max_keepdim_two_dims", "reduce_max", {"0", "2"}, 1));
  c.push_back(one("softmax_last", f_in("x", {"2", "3", "4"}), [](GraphBuilder& g) {
    return g.op("softmax", {"x"}, {{"dim", -1}});
  }));
  c.push_back(one("softmax_dim0", f_in("x", {"3", "4"}), [](GraphBuilder& g) {
    return g.op("softmax", {"x"}, {{"dim", 0}});
  }));
  c.push_back(one("log_softmax", f_in("x", {"2", "3", "4"}), [](GraphBuilder& g) {
    return g.op("log_softmax", {"x"}, {{"dim", 1}});
  }));
  c.push_back(OpCase{"rmsnorm",
                     {f_in("x", {"2", "3", "4"}), f_in("w", {"4"})},
                     [](GraphBuilder& g) {
                       return g.op("rmsnorm", {"x", "w"}, {{"eps", 1e-5}});
                     },
                     {}});
  c.push_back(OpCase{"rmsnorm_rank1",
                     {f_in("x", {"5"}), f_in("w", {"5"})},
                     [](GraphBuilder& g) {
                       return g.op("rmsnorm", {"x", "w"}, {{"eps", 1e-3}});
                     },
                     {}});
  c.push_back(OpCase{"layernorm",
                     {f_in("x", {"3", "4"}), f_in("w", {"4"}), f_in("b", {"4"})},
                     [](GraphBuilder& g) {
                       return g.op("layernorm", {"x", "w", "b"}, {{"eps", 1e-5}});
                     },
                     {}});
  for (const char* k : {"rope", "rope_grad"})
    c.push_back(
        OpCase{k,
               {f_in("x", {"2", "3", "4"}), f_in("cos", {"3", "2"}), f_in("sin", {"3", "2"})},
               [k](GraphBuilder& g) {
                 return g.op(k, {"x", "cos", "sin"});
               },
               {"x"}});
  c.push_back(binary("swiglu", "swiglu", f_in("a", {"2", "3"}), f_in("b", {"2", "3"})));
  c.push_back(OpCase{"embedding",
                     {f_in("table", {"5", "3"}), ints_in("ids", DType::i64, {"2", "4"}, 0, 5)},
                     [](GraphBuilder& g) {
                       return g.op("embedding", {"table", "ids"});
                     },
                     {}});
  c.push_back(OpCase{"embedding_vocab_shard",
                     {f_in("table", {"4", "3"}), ints_in("ids", DType::i64, {"6"}, 0, 9)},
                     [](GraphBuilder& g) {
                       return g.op("embedding", {"table", "ids"}, {{"offset", 3}});
                     },
                     {}});
  c.push_back(OpCase{"embedding_grad",
                     {ints_in("ids", DType::i64, {"4"}, 0, 5), f_in("dy", {"4", "3"})},
                     [](GraphBuilder& g) {
                       return g.op("embedding_grad", {"ids", "dy"}, {{"vocab", 5}});
                     },
                     {}});
  for (const char* r :
       {"mean", "sum"})  // mask weights in (0, 1): the mean's denominator is positive
    c.push_back(
        OpCase{std::string("cross_entropy_") + r,
               {f_in("logits", {"4", "5"}), ints_in("labels", DType::i64, {"4"}, 0, 5),
                In{"mask", DType::f64, {"4"}, 0.0, 1.0, false}},
               [r](GraphBuilder& g) {
                 return g.op("cross_entropy", {"logits", "labels", "mask"}, {{"reduction", r}});
               },
               {"logits"}});
  c.push_back(OpCase{"pick_vocab_shard",
                     {f_in("logits", {"4", "3"}), ints_in("labels", DType::i64, {"4"}, 0, 7)},
                     [](GraphBuilder& g) {
                       return g.op("pick", {"logits", "labels"}, {{"offset", 2}});
                     },
                     {}});
  c.push_back(one("reshape", f_in("x", {"2", "3", "4"}), [](GraphBuilder& g) {
    return g.op("reshape", {"x"}, {{"shape", ints({"6", "4"})}});
  }));
  c.push_back(one("transpose", f_in("x", {"2", "3", "4"}), [](GraphBuilder& g) {
    return g.op("transpose", {"x"}, {{"perm", ints({"2", "0", "1"})}});
  }));
  c.push_back(one("slice", f_in("x", {"2", "4", "3"}), [](GraphBuilder& g) {
    return g.op("slice", {"x"}, {{"dim", 1}, {"offset", 1}, {"size", 2}});
  }));
  c.push_back(OpCase{"concat",
                     {f_in("a", {"2", "1"}), f_in("b", {"2", "3"}), f_in("c", {"2", "2"})},
                     [](GraphBuilder& g) {
                       return g.op("concat", {"a", "b", "c"}, {{"dim", -1}});
                     },
                     {}});
  c.push_back(one("broadcast_to", f_in("x", {"2", "1"}), [](GraphBuilder& g) {
    return g.op("broadcast_to", {"x"}, {{"shape", ints({"4", "2", "3"})}});
  }));
  c.push_back(one("pad", f_in("x", {"2", "3"}), [](GraphBuilder& g) {
    return g.op("pad", {"x"}, {{"dim", 0}, {"before", 1}, {"after", 2}});
  }));
  c.push_back(OpCase{
      "where",
      {ints_in("cond", DType::i1, {"2", "3"}, 0, 2), f_in("a", {"2", "3"}), f_in("b", {"3"})},
      [](GraphBuilder& g) {
        return g.op("where", {"cond", "a", "b"});
      },
      {}});
  c.push_back(one("topk_mask_is_constant", f_in("x", {"2", "4"}), [](GraphBuilder& g) {
    return g.op("mul", {g.op("topk_mask", {"x"}, {{"k", 2}}), "x"});
  }));
  c.push_back(one("fill_is_constant", f_in("x", {"2", "3"}), [](GraphBuilder& g) {
    std::string k = g.op("fill", {}, {{"value", 2.5}, {"shape", ints({"3"})}, {"dtype", "f64"}});
    return g.op("mul", {"x", k});
  }));
  return c;
}

class AutodiffOp : public testing::TestWithParam<OpCase> {};

TEST_P(AutodiffOp, MatchesFiniteDifferences) {
  const OpCase& c = GetParam();
  GraphBuilder g;
  for (const auto& in : c.inputs) g.input(in.name, in.dt, in.shape);
  std::string y = c.body(g);
  DiagList d;
  TypeMap t = check_graph(g.graph(), {}, nullptr, Diag{}, d);
  ASSERT_TRUE(d.empty()) << diags_str(d);
  // loss = sum(y * r) with a random r, so every element of dy differs.
  corpus::Shape ys;
  for (const auto& e : t.at(y).shape) ys.push_back(e.str());
  g.input("r", t.at(y).dtype, ys);
  std::string yr = g.op("mul", {y, "r"});
  std::vector<std::string> all;
  for (size_t k = 0; k < ys.size(); ++k) all.push_back(std::to_string(k));
  std::string loss = ys.empty() ? yr : g.op("reduce_sum", {yr}, {{"dims", ints(all)}}, "loss");
  std::mt19937 rng(1234);
  std::vector<In> ins = c.inputs;
  ins.push_back(In{"r", t.at(y).dtype, ys});
  Env env = make_env(ins, rng);
  std::vector<std::string> wrt = c.wrt;
  if (wrt.empty())
    for (const auto& in : c.inputs)
      if (is_float(in.dt) && !in.integer) wrt.push_back(in.name);
  check_grads(g.graph(), {}, loss, wrt, env);
}

INSTANTIATE_TEST_SUITE_P(Autodiff, AutodiffOp, testing::ValuesIn(op_cases()),
                         [](const testing::TestParamInfo<OpCase>& i) { return i.param.name; });

// --- graphs --------------------------------------------------------------

TEST(AutodiffGraph, MultiUseAccumulates) {
  // x feeds five uses (one op twice), w two; a missed or doubled contribution shows.
  GraphBuilder g;
  g.input("x", DType::f64, {"2", "3"});
  g.input("w", DType::f64, {"3"});
  std::string sq = g.op("mul", {"x", "x"});
  std::string a = g.op("add", {sq, g.op("exp", {"x"})});
  std::string b = g.op("mul", {a, "x"});
  std::string c = g.op("add", {b, g.op("mul", {"x", "w"})});
  std::string d = g.op("add", {c, c});
  std::string e = g.op("div", {d, g.op("add_scalar", {g.op("square", {"w"})}, {{"value", 1.0}})});
  g.op("reduce_sum", {e}, {{"dims", ints({"0", "1"})}}, "loss");
  std::mt19937 rng(7);
  Env env = make_env({f_in("x", {"2", "3"}), f_in("w", {"3"})}, rng);
  check_grads(g.graph(), {}, "loss", {"x", "w"}, env);
}

TEST(AutodiffGraph, BroadcastingChain) {
  // Size-1 dims, missing leading dims and a scalar, on both operand sides.
  GraphBuilder g;
  g.input("a", DType::f64, {"3", "1"});
  g.input("b", DType::f64, {"1", "4"});
  g.input("c", DType::f64, {"4"});
  g.input("s", DType::f64, {});
  g.input("t", DType::f64, {"2", "1", "1"});
  g.input("cond", DType::i1, {"3", "1"});
  std::string ab = g.op("mul", {"a", "b"});  // [3,4]
  std::string abc = g.op("sub", {"c", ab});  // [3,4]
  std::string q = g.op("div", {abc, g.op("add_scalar", {g.op("square", {"s"})}, {{"value", 1.0}})});
  std::string r = g.op("mul", {"t", q});  // [2,3,4]
  std::string m = g.op("maximum", {r, "c"});
  std::string w = g.op("where", {"cond", m, "s"});
  std::string y = g.op("mul", {w, g.op("broadcast_to", {"b"}, {{"shape", ints({"2", "3", "4"})}})});
  g.op("reduce_sum", {y}, {{"dims", ints({"0", "1", "2"})}}, "loss");
  std::mt19937 rng(11);
  Env env = make_env({f_in("a", {"3", "1"}), f_in("b", {"1", "4"}), f_in("c", {"4"}), f_in("s", {}),
                      f_in("t", {"2", "1", "1"}), ints_in("cond", DType::i1, {"3", "1"}, 0, 2)},
                     rng);
  check_grads(g.graph(), {}, "loss", {"a", "b", "c", "s", "t"}, env);
}

// A tiny decoder block: embedding, rmsnorm, rope'd single-head attention with
// softmax, a residual silu MLP, and cross-entropy.
TEST(AutodiffGraph, TransformerBlockEndToEnd) {
  GraphBuilder g;
  std::vector<In> ins = {ints_in("ids", DType::i64, {"4"}, 0, 6),
                         ints_in("labels", DType::i64, {"4"}, 0, 6),
                         In{"mask", DType::f64, {"4"}, 1, 2, true},
                         f_in("cos", {"4", "2"}),
                         f_in("sin", {"4", "2"}),
                         f_in("table", {"6", "4"}),
                         f_in("g1", {"4"}),
                         f_in("wq", {"4", "4"}),
                         f_in("wk", {"4", "4"}),
                         f_in("wv", {"4", "4"}),
                         f_in("wo", {"4", "4"}),
                         f_in("g2", {"4"}),
                         f_in("w1", {"4", "8"}),
                         f_in("w2", {"8", "4"}),
                         f_in("wout", {"4", "6"})};
  for (const auto& in : ins) g.input(in.name, in.dt, in.shape);
  std::string x = g.op("embedding", {"table", "ids"});
  std::string xn = g.op("rmsnorm", {x, "g1"}, {{"eps", 1e-5}});
  std::string q = g.op("rope", {g.op("matmul", {xn, "wq"}), "cos", "sin"});
  std::string k = g.op("rope", {g.op("matmul", {xn, "wk"}), "cos", "sin"});
  std::string v = g.op("matmul", {xn, "wv"});
  std::string s = g.op("scale", {g.op("matmul", {q, k}, {{"transpose_b", 1}})}, {{"factor", 0.5}});
  std::string p = g.op("softmax", {s}, {{"dim", -1}});
  std::string x2 = g.op("add", {x, g.op("matmul", {g.op("matmul", {p, v}), "wo"})});
  std::string hn = g.op("rmsnorm", {x2, "g2"}, {{"eps", 1e-5}});
  std::string h = g.op("silu", {g.op("matmul", {hn, "w1"})});
  std::string x3 = g.op("add", {x2, g.op("matmul", {h, "w2"})});
  std::string logits = g.op("matmul", {x3, "wout"});
  g.op("cross_entropy", {logits, "labels", "mask"}, {}, "loss");
  std::mt19937 rng(5);
  Env env = make_env(ins, rng);
  env["mask"].data[2] = 0;
  Graph bw = check_grads(g.graph(), {}, "loss",
                         {"table", "g1", "wq", "wk", "wv", "wo", "g2", "w1", "w2", "wout"}, env);
  EXPECT_GT(bw.ops.size(), g.graph().ops.size() * 2);
}

TEST(AutodiffGraph, UnreachedValuesGetZeros) {
  GraphBuilder g;
  g.input("x", DType::f32, {"2", "3"});
  g.input("unused", DType::f32, {"5"});
  g.input("ids", DType::i64, {"2"});
  g.op("reduce_sum", {g.op("exp", {"x"})}, {{"dims", ints({"0", "1"})}}, "loss");
  Graph gr = g.build();
  auto names = append_backward(gr, request("loss", {"x", "unused"}), {}, nullptr);
  EXPECT_EQ(names.at("unused"), "d_unused");
  const Op& zero = gr.ops.back();
  EXPECT_EQ(zero.kind, "fill");
  EXPECT_EQ(zero.results[0], "d_unused");
  EXPECT_EQ(std::get<double>(*zero.attr("value")), 0.0);
  DiagList d;
  TypeMap t = check_graph(gr, {}, nullptr, Diag{}, d);
  EXPECT_TRUE(d.empty()) << diags_str(d);
  EXPECT_EQ(t.at("d_unused").str(), "f32[5]");
  EXPECT_EQ(t.at(names.at("x")).str(), "f32[2,3]");

  Graph g2 = g.build();
  try {
    append_backward(g2, request("loss", {"ids"}), {}, nullptr);
    ADD_FAILURE() << "an integer wrt must be rejected";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("ids"), std::string::npos) << e.what();
  }
}

TEST(AutodiffGraph, NamesArePrefixedAndUnique) {
  GraphBuilder g;
  g.input("w", DType::f64, {"3"});
  g.input("x", DType::f64, {"3"});
  std::string taken = g.op("mul", {"w", "x"}, {}, "d_w");  // a forward value already named d_w
  g.op("reduce_sum", {g.op("mul", {taken, "w"})}, {{"dims", ints({"0"})}}, "loss");
  Graph gr = g.build();
  GradRequest req = request("loss", {"w", "x"});
  req.prefix = "d_";
  auto names = append_backward(gr, req, {}, nullptr);
  EXPECT_EQ(names.at("w"), "d_w_1");
  EXPECT_EQ(names.at("x"), "d_x");
  std::set<std::string> seen(gr.inputs.begin(), gr.inputs.end());
  for (const auto& op : gr.ops)
    for (const auto& r : op.results) EXPECT_TRUE(seen.insert(r).second) << "defined twice: " << r;
  std::mt19937 rng(3);
  check_grads(g.graph(), {}, "loss", {"w", "x"},
              make_env({f_in("w", {"3"}), f_in("x", {"3"})}, rng));
}

TEST(AutodiffGraph, SeedsReplaceTheLoss) {
  // The gradient of h comes from outside (e.g. the next pipeline stage).
  GraphBuilder g;
  g.input("x", DType::f64, {"2", "3"});
  g.input("w", DType::f64, {"3", "4"});
  g.input("g_h", DType::f64, {"2", "4"});
  std::string h = g.op("tanh", {g.op("matmul", {"x", "w"})}, {}, "h");
  Graph seeded = g.build();
  GradRequest req;
  req.seeds = {{h, "g_h"}};
  req.wrt = {"w", "x"};
  auto names = append_backward(seeded, req, {}, nullptr);
  // Same gradients as for loss = sum(h * g_h).
  g.op("reduce_sum", {g.op("mul", {h, "g_h"})}, {{"dims", ints({"0", "1"})}}, "loss");
  std::mt19937 rng(9);
  Env env = make_env({f_in("x", {"2", "3"}), f_in("w", {"3", "4"}), f_in("g_h", {"2", "4"})}, rng);
  Graph ref = check_grads(g.graph(), {}, "loss", {"w", "x"}, env);
  NumDomain<double> dom;
  Env a = run_graph(dom, seeded, {}, env), b = run_graph(dom, ref, {}, env);
  for (const char* w : {"w", "x"}) {
    const T& ga = a.at(names.at(w));
    const T& gb = b.at(std::string("d_") + w);
    ASSERT_EQ(ga.shape, gb.shape);
    for (size_t i = 0; i < ga.data.size(); ++i) EXPECT_NEAR(ga.data[i], gb.data[i], 1e-12);
  }
}

void expect_no_adjoint(Graph g, const std::string& loss, const std::vector<std::string>& wrt,
                       const std::string& needle, const Bindings& b = {},
                       const Mesh* mesh = nullptr) {
  try {
    append_backward(g, request(loss, wrt), b, mesh);
    ADD_FAILURE() << "expected InvalidInput naming " << needle;
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no adjoint"), std::string::npos) << e.what();
  }
}

TEST(AutodiffGraph, OpWithoutAdjointIsNamed) {
  GraphBuilder g;
  g.input("x", DType::f32, {"2", "3"});
  g.input("dy", DType::f32, {"2", "3"});
  std::string y = g.op("softmax_grad", {"x", "dy"}, {{"dim", -1}}, "sg");
  g.op("reduce_sum", {y}, {{"dims", ints({"0", "1"})}}, "loss");
  expect_no_adjoint(g.build(), "loss", {"x"}, "softmax_grad -> sg");
  // Off the path from the wrt values to the loss, the same op is fine.
  Graph gr = g.build();
  EXPECT_NO_THROW(append_backward(gr, request("loss", {}), {}, nullptr));

  GraphBuilder l;
  l.input("x", DType::f32, {"3"});
  auto out = l.loop("2", "i", {"x"}, [](GraphBuilder& body) {
    body.input("xi", DType::f32, {"3"});
    body.output(body.op("exp", {"xi"}));
  });
  l.op("reduce_sum", {out[0]}, {{"dims", ints({"0"})}}, "loss");
  expect_no_adjoint(l.build(), "loss", {"x"}, "loop");
}

// --- plans -----------------------------------------------------------------

T cols(const T& w, int64_t off, int64_t n) {
  T out({w.shape[0], n}, 0.0);
  for (int64_t i = 0; i < w.shape[0]; ++i)
    for (int64_t j = 0; j < n; ++j) out.data[i * n + j] = w.data[i * w.shape[1] + off + j];
  return out;
}
T rows(const T& w, int64_t off, int64_t n) {
  T out({n, w.shape[1]}, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < w.shape[1]; ++j)
      out.data[i * w.shape[1] + j] = w.data[(off + i) * w.shape[1] + j];
  return out;
}

Bindings plan_bindings(const Plan& p) {
  Bindings b = p.dims;
  for (const auto& a : p.mesh.axes) b[a.name] = a.size;
  return b;
}

void expect_plan_valid(const Plan& p) {
  // Programs check and the schedule (forward and backward) neither deadlocks
  // nor leaves a message unreceived; placements are not the point here.
  DiagList d;
  std::map<std::string, TypeMap> types;
  for (const auto& prog : p.programs)
    types[prog.name] = check_graph(prog.graph, plan_bindings(p), &p.mesh,
                                   Diag{"autodiff", prog.name, "", "", ""}, d);
  EXPECT_TRUE(d.empty()) << diags_str(d);
  if (!d.empty()) return;
  check_schedule(p, types, "autodiff", d);
  EXPECT_TRUE(d.empty()) << diags_str(d);
}

std::map<int64_t, Env> run_plan(const Plan& p, const std::map<int64_t, Env>& inputs) {
  NumDomain<double> dom;
  PlanRunner<NumDomain<double>> runner(p, dom);
  runner.run([&](int64_t r, const Program&, const std::string& n) { return inputs.at(r).at(n); },
             {});
  std::map<int64_t, Env> out;
  for (const auto& [r, env] : inputs) out[r] = runner.env(r);
  return out;
}

// Central differences of a scalar function of one tensor entry.
double fd(const std::function<double(const Env&)>& f, Env env, const std::string& v, size_t i) {
  env[v].data[i] += kStep;
  double up = f(env);
  env[v].data[i] -= 2 * kStep;
  return (up - f(env)) / (2 * kStep);
}

// Megatron MLP on tp=2: x -> grad_allreduce ("f") -> column-parallel w1 ->
// silu -> row-parallel w2 -> allreduce ("g"). The plan's shard gradients must
// be the single-device gradients of the same loss; with reduce=avg the spec
// output is the mean of the two partial products.
void tp_mlp(const std::string& reduce) {
  const int64_t B = 3, H = 4, F = 6, tp = 2;
  double k = reduce == "avg" ? 0.5 : 1.0;
  GraphBuilder s;
  s.input("x", DType::f64, {"3", "4"});
  s.input("w1", DType::f64, {"4", "6"});
  s.input("w2", DType::f64, {"6", "4"});
  s.input("r", DType::f64, {"3", "4"});
  std::string sy =
      s.op("scale", {s.op("matmul", {s.op("silu", {s.op("matmul", {"x", "w1"})}), "w2"})},
           {{"factor", k}});
  s.op("reduce_sum", {s.op("mul", {sy, "r"})}, {{"dims", ints({"0", "1"})}}, "loss");
  Graph spec = s.build();

  corpus::PlanBuilder pb("tp_mlp");
  pb.axis("tp", tp).dim("B", B).dim("H", H).dim("F", F);
  GraphBuilder& g = pb.program("main");
  g.input("x", DType::f64, {"B", "H"});
  g.input("w1s", DType::f64, {"H", "F/tp"});
  g.input("w2s", DType::f64, {"F/tp", "H"});
  g.input("r", DType::f64, {"B", "H"});
  std::string xf = g.op("grad_allreduce", {"x"}, {{"grad_axes", corpus::strings({"tp"})}});
  std::string a = g.op("silu", {g.op("matmul", {xf, "w1s"})});
  std::string y = g.op("allreduce", {g.op("matmul", {a, "w2s"})},
                       {{"axes", corpus::strings({"tp"})}, {"reduce", reduce}});
  g.op("reduce_sum", {g.op("mul", {y, "r"})}, {{"dims", ints({"0", "1"})}}, "loss");
  Plan plan = pb.build();
  auto names = append_backward(plan.programs[0].graph, request("loss", {"x", "w1s", "w2s"}),
                               plan_bindings(plan), &plan.mesh);
  EXPECT_EQ(names.at("w1s"), "d_w1s");
  expect_plan_valid(plan);

  std::mt19937 rng(42);
  Env env = make_env({f_in("x", {"3", "4"}), f_in("w1", {"4", "6"}), f_in("w2", {"6", "4"}),
                      f_in("r", {"3", "4"})},
                     rng);
  std::map<int64_t, Env> in;
  for (int64_t t = 0; t < tp; ++t)
    in[t] = Env{{"x", env["x"]},
                {"w1s", cols(env["w1"], t * F / tp, F / tp)},
                {"w2s", rows(env["w2"], t * F / tp, F / tp)},
                {"r", env["r"]}};
  auto out = run_plan(plan, in);
  NumDomain<double> dom;
  auto loss = [&](const Env& e) { return scalar_of(run_graph(dom, spec, {}, e), "loss"); };
  for (int64_t t = 0; t < tp; ++t) {
    const Env& o = out.at(t);
    EXPECT_NEAR(scalar_of(o, "loss"), loss(env), 1e-12);
    const T& dx = o.at(names.at("x"));
    for (size_t i = 0; i < dx.data.size(); ++i)
      EXPECT_NEAR(dx.data[i], fd(loss, env, "x", i), kTol) << "rank " << t << " dx[" << i << "]";
    const T& dw1 = o.at(names.at("w1s"));
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < F / tp; ++j)
        EXPECT_NEAR(dw1.data[i * (F / tp) + j], fd(loss, env, "w1", i * F + t * F / tp + j), kTol)
            << "rank " << t << " dw1[" << i << "," << j << "]";
    const T& dw2 = o.at(names.at("w2s"));
    for (int64_t i = 0; i < F / tp; ++i)
      for (int64_t j = 0; j < H; ++j)
        EXPECT_NEAR(dw2.data[i * H + j], fd(loss, env, "w2", (t * F / tp + i) * H + j), kTol)
            << "rank " << t << " dw2[" << i << "," << j << "]";
  }
}

TEST(AutodiffPlan, TensorParallelMlpMatchesSpec) { tp_mlp("sum"); }
TEST(AutodiffPlan, TensorParallelMlpAvgMatchesSpec) { tp_mlp("avg"); }

// Sequence parallel: allgather the sequence shards, column/row parallel MLP,
// reduce_scatter back; each rank's loss covers its rows, the spec's loss is
// their sum (with reduce=avg, of the mean of the two partial products).
void sp_mlp(const std::string& reduce) {
  const int64_t S = 4, H = 3, F = 4, tp = 2;
  double k = reduce == "avg" ? 0.5 : 1.0;
  GraphBuilder s;
  s.input("x", DType::f64, {"4", "3"});
  s.input("w1", DType::f64, {"3", "4"});
  s.input("w2", DType::f64, {"4", "3"});
  s.input("r", DType::f64, {"4", "3"});
  std::string sy =
      s.op("scale", {s.op("matmul", {s.op("gelu", {s.op("matmul", {"x", "w1"})}), "w2"})},
           {{"factor", k}});
  s.op("reduce_sum", {s.op("mul", {sy, "r"})}, {{"dims", ints({"0", "1"})}}, "loss");
  Graph spec = s.build();

  corpus::PlanBuilder pb("sp_mlp");
  pb.axis("tp", tp).dim("S", S).dim("H", H).dim("F", F);
  GraphBuilder& g = pb.program("main");
  g.input("xs", DType::f64, {"S/tp", "H"});
  g.input("w1s", DType::f64, {"H", "F/tp"});
  g.input("w2s", DType::f64, {"F/tp", "H"});
  g.input("rs", DType::f64, {"S/tp", "H"});
  auto tpx = corpus::strings({"tp"});
  std::string xa = g.op("allgather", {"xs"}, {{"axes", tpx}, {"dim", 0}});
  std::string yp = g.op("matmul", {g.op("gelu", {g.op("matmul", {xa, "w1s"})}), "w2s"});
  std::string ys = g.op("reduce_scatter", {yp}, {{"axes", tpx}, {"dim", 0}, {"reduce", reduce}});
  g.op("reduce_sum", {g.op("mul", {ys, "rs"})}, {{"dims", ints({"0", "1"})}}, "loss");
  Plan plan = pb.build();
  auto names = append_backward(plan.programs[0].graph, request("loss", {"xs", "w1s", "w2s"}),
                               plan_bindings(plan), &plan.mesh);
  expect_plan_valid(plan);

  std::mt19937 rng(17);
  Env env = make_env({f_in("x", {"4", "3"}), f_in("w1", {"3", "4"}), f_in("w2", {"4", "3"}),
                      f_in("r", {"4", "3"})},
                     rng);
  std::map<int64_t, Env> in;
  const int64_t Ss = S / tp, Fs = F / tp;
  for (int64_t t = 0; t < tp; ++t)
    in[t] = Env{{"xs", rows(env["x"], t * Ss, Ss)},
                {"w1s", cols(env["w1"], t * Fs, Fs)},
                {"w2s", rows(env["w2"], t * Fs, Fs)},
                {"rs", rows(env["r"], t * Ss, Ss)}};
  auto out = run_plan(plan, in);
  NumDomain<double> dom;
  auto loss = [&](const Env& e) { return scalar_of(run_graph(dom, spec, {}, e), "loss"); };
  for (int64_t t = 0; t < tp; ++t) {
    const Env& o = out.at(t);
    const T& dx = o.at(names.at("xs"));
    for (int64_t i = 0; i < Ss; ++i)
      for (int64_t j = 0; j < H; ++j)
        EXPECT_NEAR(dx.data[i * H + j], fd(loss, env, "x", (t * Ss + i) * H + j), kTol)
            << "rank " << t;
    const T& dw1 = o.at(names.at("w1s"));
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < Fs; ++j)
        EXPECT_NEAR(dw1.data[i * Fs + j], fd(loss, env, "w1", i * F + t * Fs + j), kTol)
            << "rank " << t;
    const T& dw2 = o.at(names.at("w2s"));
    for (int64_t i = 0; i < Fs; ++i)
      for (int64_t j = 0; j < H; ++j)
        EXPECT_NEAR(dw2.data[i * H + j], fd(loss, env, "w2", (t * Fs + i) * H + j), kTol)
            << "rank " << t;
  }
}

TEST(AutodiffPlan, SequenceParallelMlpMatchesSpec) { sp_mlp("sum"); }
TEST(AutodiffPlan, SequenceParallelMlpAvgMatchesSpec) { sp_mlp("avg"); }

// all_to_all is a permutation across ranks: with every rank's loss summed, the
// gradient of each rank's input is the finite difference of that sum.
TEST(AutodiffPlan, AllToAllIsItsOwnTransposeAdjoint) {
  corpus::PlanBuilder pb("a2a");
  pb.axis("ep", 2);
  GraphBuilder& g = pb.program("main");
  g.input("x", DType::f64, {"4", "3"});
  g.input("r", DType::f64, {"2", "6"});
  std::string y = g.op("all_to_all", {g.op("tanh", {"x"})},
                       {{"axes", corpus::strings({"ep"})}, {"split_dim", 0}, {"concat_dim", 1}});
  g.op("reduce_sum", {g.op("mul", {g.op("sigmoid", {y}), "r"})}, {{"dims", ints({"0", "1"})}},
       "loss");
  Plan fwd = pb.build();
  Plan plan = fwd;
  auto names = append_backward(plan.programs[0].graph, request("loss", {"x"}), plan_bindings(plan),
                               &plan.mesh);
  expect_plan_valid(plan);
  std::mt19937 rng(23);
  std::map<int64_t, Env> in;
  for (int64_t t = 0; t < 2; ++t)
    in[t] = make_env({f_in("x", {"4", "3"}), f_in("r", {"2", "6"})}, rng);
  auto out = run_plan(plan, in);
  for (int64_t t = 0; t < 2; ++t) {
    const T& dx = out.at(t).at(names.at("x"));
    for (size_t i = 0; i < dx.data.size(); ++i) {
      auto total = [&](double delta) {
        auto p = in;
        p[t]["x"].data[i] += delta;
        auto o = run_plan(fwd, p);
        return scalar_of(o.at(0), "loss") + scalar_of(o.at(1), "loss");
      };
      EXPECT_NEAR(dx.data[i], (total(kStep) - total(-kStep)) / (2 * kStep), kTol) << "rank " << t;
    }
  }
}

// Two pipeline stages: the first sends its activation and, in the backward,
// receives its gradient from the same peer under tag + tag_offset.
TEST(AutodiffPlan, PipelineSendRecvMatchesSpec) {
  GraphBuilder s;
  s.input("x", DType::f64, {"2", "3"});
  s.input("w1", DType::f64, {"3", "3"});
  s.input("w2", DType::f64, {"3", "3"});
  s.input("r", DType::f64, {"2", "3"});
  std::string sy = s.op("matmul", {s.op("tanh", {s.op("matmul", {"x", "w1"})}), "w2"});
  s.op("reduce_sum", {s.op("mul", {sy, "r"})}, {{"dims", ints({"0", "1"})}}, "loss");
  Graph spec = s.build();

  corpus::PlanBuilder pb("pp");
  pb.axis("pp", 2).dim("B", 2).dim("H", 3);
  GraphBuilder& s0 = pb.program("stage0", {{"pp", {0}}});
  s0.input("x", DType::f64, {"B", "H"});
  s0.input("w1", DType::f64, {"H", "H"});
  std::string h = s0.op("tanh", {s0.op("matmul", {"x", "w1"})});
  s0.op_n("send", {h}, {{"peer", corpus::coords({{"pp", "1"}})}, {"tag", 7}}, {});
  GraphBuilder& s1 = pb.program("stage1", {{"pp", {1}}});
  s1.input("w2", DType::f64, {"H", "H"});
  s1.input("r", DType::f64, {"B", "H"});
  std::string h1 = s1.op("recv", {},
                         {{"peer", corpus::coords({{"pp", "0"}})},
                          {"tag", 7},
                          {"shape", ints({"B", "H"})},
                          {"dtype", "f64"}});
  s1.op("reduce_sum", {s1.op("mul", {s1.op("matmul", {h1, "w2"}), "r"})},
        {{"dims", ints({"0", "1"})}}, "loss");
  Plan plan = pb.build();
  Bindings b = plan_bindings(plan);
  auto n0 = append_backward(plan.programs[0].graph, request("", {"w1"}), b, &plan.mesh);
  auto n1 = append_backward(plan.programs[1].graph, request("loss", {"w2"}), b, &plan.mesh);
  const Op& back_recv = plan.programs[0].graph.ops[3];
  ASSERT_EQ(back_recv.kind, "recv");
  EXPECT_EQ(std::get<DimExpr>(*back_recv.attr("tag")).str(), "1007");
  expect_plan_valid(plan);

  std::mt19937 rng(31);
  Env env = make_env({f_in("x", {"2", "3"}), f_in("w1", {"3", "3"}), f_in("w2", {"3", "3"}),
                      f_in("r", {"2", "3"})},
                     rng);
  auto out = run_plan(plan, {{0, Env{{"x", env["x"]}, {"w1", env["w1"]}}},
                             {1, Env{{"w2", env["w2"]}, {"r", env["r"]}}}});
  NumDomain<double> dom;
  auto loss = [&](const Env& e) { return scalar_of(run_graph(dom, spec, {}, e), "loss"); };
  const T& dw1 = out.at(0).at(n0.at("w1"));
  for (size_t i = 0; i < dw1.data.size(); ++i)
    EXPECT_NEAR(dw1.data[i], fd(loss, env, "w1", i), kTol) << i;
  const T& dw2 = out.at(1).at(n1.at("w2"));
  for (size_t i = 0; i < dw2.data.size(); ++i)
    EXPECT_NEAR(dw2.data[i], fd(loss, env, "w2", i), kTol) << i;
}

TEST(AutodiffPlan, AllreduceMaxHasNoAdjoint) {
  corpus::PlanBuilder pb("max");
  pb.axis("tp", 2);
  GraphBuilder& g = pb.program("main");
  g.input("x", DType::f32, {"3"});
  std::string y =
      g.op("allreduce", {"x"}, {{"axes", corpus::strings({"tp"})}, {"reduce", "max"}}, "m");
  g.op("reduce_sum", {y}, {{"dims", ints({"0"})}}, "loss");
  Plan p = pb.build();
  expect_no_adjoint(p.programs[0].graph, "loss", {"x"}, "allreduce -> m", plan_bindings(p),
                    &p.mesh);
}

}  // namespace
}  // namespace parity::ir
