// `parity run`: executes a plan numerically (every rank on its communicator)
// and, with --compare, checks its placed values against a single-device run of
// the spec (exec/compare.h). Under `mpirun -np N ... --ranks mpi` every process
// runs one rank; only rank 0 prints, and all exit with rank 0's code.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "exec/comm_mpi.h"
#include "exec/comm_nccl.h"
#include "exec/compare.h"
#include "exec/cuda_kernels.h"
#include "exec/runner.h"
#include "ir/validate.h"
#include "tools/cli.h"
#include "tools/progress_line.h"

namespace parity::cli {

namespace {

struct RunArgs {
  std::vector<std::string> files;
  std::string backend = "cpu", ranks = "threads", dtype = "f32", json_out;
  uint64_t seed = 1;
  bool compare = false, no_validate = false, failing_only = false;
  double timeout_s = 30;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string index_str(const std::vector<int64_t>& idx) {
  return idx.empty() ? "" : fmt::format("[{}]", fmt::join(idx, ","));
}

// Everything a report needs, filled as far as the run got.
struct Report {
  std::string verdict = "ERROR";  // MATCH, DIFFERS, RAN, INVALID, ERROR, UNSUPPORTED
  int code = kInvalid;
  std::string message;
  std::vector<std::string> errors;
  std::string plan;
  int64_t ranks = 0, values = 0;
  double plan_s = 0, spec_s = 0, control_s = 0;
  std::optional<exec::Comparison> cmp;
};

nlohmann::json report_json(const RunArgs& a, const std::string& label, const Report& r) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["command"] = "run";
  j["case"] = label;
  j["plan"] = r.plan;
  j["backend"] = a.backend;
  j["ranks"] = a.ranks;
  j["dtype"] = a.dtype;
  j["seed"] = a.seed;
  j["timeout_s"] = a.timeout_s;
  j["verdict"] = r.verdict;
  j["exit_code"] = r.code;
  j["message"] = r.message;
  j["errors"] = r.errors;
  j["active_ranks"] = r.ranks;
  j["placed_values"] = r.values;
  j["seconds"] = {{"plan", r.plan_s}, {"spec", r.spec_s}, {"control", r.control_s}};
  if (r.cmp) {
    j["tolerance"] = {
        {"k", r.cmp->opt.k},
        {"floor_eps", r.cmp->opt.floor_eps},
        {"inherit", r.cmp->opt.inherit},
        {"rule",
         "max(k * control error, floor_eps * epsilon(dtype) * max|spec|, perturbed_k * perturbed error, "
         "inherit * relative tolerance of the one placed value it is computed from * max|spec|) per spec "
         "value"},
        {"control", "spec rerun with pairwise summation and the reference matmul"}};
    for (const auto& t : r.cmp->tensors)
      j["tensors"].push_back({{"spec_value", t.spec_value},
                              {"output", t.output},
                              {"pieces", t.pieces},
                              {"elements", t.elements},
                              {"max_abs_error", t.max_abs},
                              {"max_rel_error", t.max_rel},
                              {"max_ulp", t.max_ulp},
                              {"control_error", t.control},
                              {"perturbed_error", t.perturbed},
                              {"cancellation", t.cancels},
                              {"scale", t.scale},
                              {"tolerance", t.tol},
                              {"ok", t.ok},
                              {"worst",
                               {{"index", t.worst_index},
                                {"plan", t.worst_plan},
                                {"spec", t.worst_spec},
                                {"where", t.worst_where},
                                {"ratio_to_tolerance", t.worst_ratio}}}});
  }
  return j;
}

std::string report_text(const RunArgs& a, const std::string& label, const Report& r) {
  std::string s;
  if (r.ranks)
    s += fmt::format("run {}: plan {} on {} ranks ({}, {}, {}, seed {}): plan {:.4f} s", label,
                     r.plan, r.ranks, a.ranks, a.backend, a.dtype, a.seed, r.plan_s);
  if (r.cmp) {
    s += fmt::format(", spec {:.4f} s, control and perturbed {:.4f} s\n", r.spec_s, r.control_s);
    s += fmt::format("  {:<16} {:>8} {:>11} {:>11} {:>9} {:>11} {:>11}\n", "value (*output)",
                     "elements", "max abs", "max rel", "max ulp", "control", "tolerance");
    int64_t hidden = 0;
    for (const auto& t : r.cmp->tensors)
      if (a.failing_only && t.ok)
        ++hidden;
      else
        s += fmt::format(
            "  {:<16} {:>8} {:>11.3g} {:>11.3g} {:>9.3g} {:>11.3g} {:>11.3g}  {}\n",
            (t.output ? "*" : " ") + t.spec_value, t.elements, t.max_abs, t.max_rel, t.max_ulp, t.control, t.tol,
            (t.ok ? std::string("ok") : "DIFFERS at " + t.spec_value + index_str(t.worst_index)) +
                (t.cancels ? " (cancellation: tolerance from the perturbed run)" : ""));
    if (hidden) s += fmt::format("  ({} values within their tolerance not shown: --failing-only)\n", hidden);
  } else if (r.ranks) {
    s += "\n";
  }
  s += r.message + "\n";
  return s;
}

// Runs on every process; returns the report (meaningful on the root only).
Report run_case(const RunArgs& a, const std::string& label, exec::Communicator* world, bool& root) {
  Report r;
  exec::RunOptions o;
  o.dtype = *exec::parse_dtype(a.dtype);
  o.device = a.backend == "cuda" ? exec::Device::cuda : exec::Device::cpu;
  o.ranks = a.ranks == "mpi" ? exec::Ranks::mpi : exec::Ranks::threads;
  o.timeout_s = a.timeout_s;
  // One process draws the line (under MPI every rank has a stderr); it is
  // erased when this returns, before the report is printed.
  std::optional<ProgressLine> progress;
  if (o.ranks == exec::Ranks::threads) progress.emplace(label);
  auto phase = [&](const char* p) {
    if (progress) progress->phase(p);
  };
  phase("reading");
  ir::Case c = load_case(a.files);
  r.plan = c.plan.name;
  phase("validating");
  if (!a.no_validate)
    if (ir::DiagList d = ir::validate_case(c, label); !d.empty()) {
      r.verdict = "INVALID";
      for (const auto& x : d.items) r.errors.push_back(x.str());
      r.message = invalid_text(d.items, label);
      r.message.pop_back();  // report_text ends it
      return r;
    }
  if (!c.spec)
    throw ir::InvalidInput("run needs a spec: program inputs are sliced from the spec's inputs");
  if (c.plan.programs.empty()) throw ir::InvalidInput("run needs a plan");
  exec::Values inputs = exec::make_inputs(*c.spec, a.seed, o.dtype);
  exec::PlanRun run;
  phase("running the plan");
  try {
    run = exec::run_plan(c, inputs, o, world);
  } catch (const exec::RunError& e) {
    r.errors = e.errors;
    r.message = "ERROR: " + e.errors[0];
    return r;
  }
  root = run.root;
  if (!run.root) return r;
  r.ranks = run.ranks;
  r.values = static_cast<int64_t>(run.values.size());
  r.plan_s = run.seconds;
  auto pieces = exec::assemble(c.plan, run.values);
  if (!a.compare) {
    r.verdict = "RAN";
    r.code = kOk;
    r.message = fmt::format(
        "RAN: {} placed values ({} pieces in spec coordinates); add --compare to check them",
        r.values, pieces.size());
    return r;
  }
  auto t0 = std::chrono::steady_clock::now();
  exec::RunOptions so = o;
  so.device = exec::Device::cpu;  // the reference runs on the CPU
  phase("running the spec");
  exec::Values spec = exec::run_spec(c, inputs, so);
  r.spec_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  phase("running the control and perturbed spec");
  exec::Values control = exec::run_spec(c, inputs, exec::control_options(so));
  exec::Values perturbed = exec::run_spec(c, inputs, exec::perturbed_options(so));
  r.control_s = seconds_since(t0);
  phase("comparing");
  r.cmp = exec::compare(*c.spec, pieces, spec, control, o.dtype, {}, &perturbed);
  r.verdict = r.cmp->match ? "MATCH" : "DIFFERS";
  r.code = r.cmp->match ? kOk : kMismatch;
  r.message = r.cmp->summary();
  return r;
}

int run_command(const RunArgs& a) {
  const std::string label = files_label(a.files);
  std::unique_ptr<exec::Communicator> world;
  bool root = true;
  Report r;
  try {
    if (!exec::parse_dtype(a.dtype))
      throw ir::InvalidInput("unknown dtype '" + a.dtype + "' (f32, bf16, f64)");
    if (a.ranks == "mpi") {
      world = exec::make_mpi_comm();
      root = world->rank() == 0;
      if (a.backend == "cuda") world = exec::make_nccl_comm(std::move(world), a.dtype == "bf16");
    } else if (a.backend == "cuda" && !exec::cuda::available()) {
      throw exec::Unsupported(exec::cuda::built() ? "no CUDA device (--backend cuda)"
                                                  : exec::cuda::unavailable_reason() + " (--backend cuda)");
    }
    r = run_case(a, label, world.get(), root);
  } catch (const exec::Unsupported& e) {
    r.verdict = "UNSUPPORTED", r.code = kUnknown,
    r.message = std::string("UNSUPPORTED: ") + e.what();
  } catch (const ir::InvalidInput& e) {
    r.verdict = "INVALID", r.code = kInvalid, r.message = invalid_text({e.diag()}, label);
    r.message.pop_back();
  } catch (const std::bad_alloc&) {
    r.verdict = "UNSUPPORTED", r.code = kUnknown,
    r.message = "UNSUPPORTED: ran out of memory (the plan's tensors are too large to run at the sizes given; the "
                "limit is PARITY_MAX_MEMORY_GB, default 80% of physical memory)";
  } catch (const std::exception& e) {
    r.verdict = "ERROR", r.code = kInvalid, r.message = std::string("ERROR: ") + e.what();
  }
  if (r.errors.empty() && r.code != kOk && r.code != kMismatch) r.errors.push_back(r.message);
  if (root) {
    bool ok = r.code == kOk || r.code == kMismatch;
    if (a.json_out == "-") {
      fmt::print("{}\n", report_json(a, label, r).dump(2));
    } else {
      std::string text = report_text(a, label, r);
      if (r.verdict == "ERROR")
        for (size_t i = 1; i < r.errors.size(); ++i) text += "  also: " + r.errors[i] + "\n";
      fmt::print(ok ? stdout : stderr, "{}", text);
      if (!a.json_out.empty()) {
        std::ofstream f(a.json_out);
        if (!f) throw std::runtime_error("cannot write " + a.json_out);
        f << report_json(a, label, r).dump(2) << "\n";
      }
    }
  }
  // Every process exits with the root's code (mpirun reports the first nonzero).
  if (world) {
    try {
      world->set_timeout(std::max(a.timeout_s, 600.0));  // the root may still be comparing
      r.code = std::stoi(world->broadcast_bytes(std::to_string(r.code), 0));
    } catch (const std::exception&) {
      // The root is gone or stuck: keep this process's own code.
    }
  }
  return r.code;
}

}  // namespace

void add_run(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand(
      "run", "execute the plan numerically on every rank; --compare checks it against the spec");
  static RunArgs a;
  cmd->add_option("files", a.files, "CASE, or SPEC PLAN")->required();
  cmd->add_option("--backend", a.backend,
                  "where kernels run: cpu, or cuda (cuBLAS matmul; NCCL with --ranks mpi)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--ranks", a.ranks,
                  "threads (one per rank, in process) or mpi (one process per rank under mpirun)")
      ->check(CLI::IsMember({"threads", "mpi"}));
  cmd->add_option("--dtype", a.dtype, "f32, bf16 (f32 compute rounded after each op) or f64")
      ->check(CLI::IsMember({"f32", "bf16", "f64"}));
  cmd->add_option("--seed", a.seed, "seed of the generated spec inputs");
  cmd->add_flag("--compare", a.compare,
                "compare every placed value with a single-device run of the spec");
  cmd->add_flag("--failing-only", a.failing_only,
                "with --compare, list only the values that exceed their tolerance");
  cmd->add_option("--timeout-s", a.timeout_s,
                  "longest wait of one communication call before the run fails")
      ->check(kPositiveTime);
  cmd->add_option("--json", a.json_out, "write the report as JSON to this file (- for stdout)");
  cmd->add_flag("--no-validate", a.no_validate,
                "skip structural validation (to watch a malformed plan fail at run time)");
  cmd->callback([&run] {
    run = [] {
      // An allocation past it is a clear UNSUPPORTED, not the kernel's OOM
      // kill. Not on the GPU: CUDA and NCCL reserve address space far past
      // physical memory (ncclCommInitRank failed with "out of memory" on an
      // idle H100 under it).
      if (a.backend != "cuda") limit_memory();
      return run_command(a);
    };
  });
}

}  // namespace parity::cli
