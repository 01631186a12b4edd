// Benchmarks of numeric execution (exec/): (1) a plan's execution, every rank on
// its own thread, against the single-device spec run of the same training step;
// (2) matmul GFLOP/s of the exec kernel (OpenBLAS behind the op interface),
// OpenBLAS called alone, and the reference semantics (ir::eval_local).
// Prints tables headed by the command that produced them.
#include <cblas.h>
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "corpus/generator.h"
#include "exec/kernels.h"
#include "exec/runner.h"

namespace {

using namespace parity;
using Clock = std::chrono::steady_clock;

// Median seconds of `reps` calls (after one warm-up call).
double median_seconds(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct PlanCase {
  std::string label;
  corpus::GenOptions g;
};

void bench_plans(int reps) {
  // Reduced Llama-3 shapes scaled up so kernels, not bookkeeping, dominate.
  std::map<std::string, int64_t> dims = {{"B", 4},  {"S", 16}, {"H", 32}, {"F", 64},
                                         {"NH", 4}, {"KV", 2}, {"D", 8},  {"V", 64}};
  auto make = [&](const std::string& label, int64_t dp, int64_t tp, int64_t pp, int64_t mb) {
    PlanCase c{label, {}};
    c.g.model = "llama3-8b";
    c.g.dp = dp, c.g.tp = tp, c.g.pp = pp, c.g.mb = mb;
    c.g.dims = dims;
    return c;
  };
  std::vector<PlanCase> cases = {make("dp=2", 2, 1, 1, 1), make("tp=2", 1, 2, 1, 1),
                                 make("dp=2 tp=2", 2, 2, 1, 1), make("pp=2 mb=2", 1, 1, 2, 2),
                                 make("dp=2 tp=2 pp=2 mb=2", 2, 2, 2, 2)};
  fmt::print(
      "\nPlan execution vs the single-device spec (llama3-8b reduced: B=4 S=16 H=32 F=64 NH=4 KV=2 "
      "D=8 V=64,\n"
      "f32, OpenBLAS matmul; plan ranks on threads; median of {} runs)\n",
      reps);
  fmt::print("{:<22} {:>5} {:>12} {:>12} {:>11} {:>13} {:>13}\n", "plan", "ranks", "spec ms",
             "plan ms", "plan/spec", "spec steps/s", "plan steps/s");
  for (const auto& pc : cases) {
    ir::Case c = corpus::generate(pc.g);
    exec::RunOptions o;
    exec::Values in = exec::make_inputs(*c.spec, 1, o.dtype);
    double spec = median_seconds(reps, [&] { exec::run_spec(c, in, o); });
    double plan = median_seconds(reps, [&] { exec::run_plan(c, in, o); });
    fmt::print("{:<22} {:>5} {:>12.2f} {:>12.2f} {:>11.2f} {:>13.1f} {:>13.1f}\n", pc.label,
               c.plan.mesh.num_ranks(), spec * 1e3, plan * 1e3, plan / spec, 1 / spec, 1 / plan);
  }
}

void bench_matmul(int reps) {
  fmt::print("\nmatmul [n,n] x [n,n], f32, GFLOP/s (median of {} runs; OpenBLAS threads: {})\n",
             reps, openblas_get_num_threads());
  fmt::print("{:>6} {:>14} {:>14} {:>14} {:>12}\n", "n", "exec kernel", "OpenBLAS", "reference",
             "kernel/BLAS");
  std::mt19937_64 g(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t n : {64, 128, 256, 512, 1024}) {
    exec::Tensor<float> a({n, n}, 0.f), b({n, n}, 0.f), c({n, n}, 0.f);
    for (auto& v : a.data) v = u(g);
    for (auto& v : b.data) v = u(g);
    double flops = 2.0 * static_cast<double>(n * n * n);
    ir::Op op;
    op.kind = "matmul";
    exec::Kernels<float> k(exec::KernelConfig{});
    int r = n >= 512 ? std::max(3, reps / 4) : reps;
    double tk = median_seconds(r, [&] { k.run(op, {&a, &b}, {}); });
    double tb = median_seconds(r, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                  static_cast<int>(n), static_cast<int>(n), 1.f, a.data.data(), static_cast<int>(n),
                  b.data.data(), static_cast<int>(n), 0.f, c.data.data(), static_cast<int>(n));
    });
    // The reference kernel is scalar and allocation-heavy: small sizes only.
    std::string ref = "-";
    if (n <= 256)
      ref = fmt::format(
          "{:.3f}", flops / median_seconds(3, [&] { exec::matmul_ref(a, b, false, false); }) / 1e9);
    fmt::print("{:>6} {:>14.2f} {:>14.2f} {:>14} {:>12.2f}\n", n, flops / tk / 1e9,
               flops / tb / 1e9, ref, tb / tk);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 9;
  bool plans = true, matmul = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--plans-only")
      matmul = false;
    else if (a == "--matmul-only")
      plans = false;
    else {
      fmt::print(stderr, "usage: {} [--reps N] [--plans-only | --matmul-only]\n", argv[0]);
      return 2;
    }
  }
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
  fmt::print("command: {}\n", cmd);
  if (plans) bench_plans(reps);
  if (matmul) bench_matmul(reps);
  return 0;
}
