// parity verify-mlir: MLIR's own SPMD partitioner checked against its input.
#include <fmt/format.h>

#include "frontend/mlir/api.h"
#include "ir/validate.h"
#include "tools/cli.h"
#include "tools/report.h"
#include "verify/check.h"

namespace parity::cli {

void add_verify_mlir(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand(
      "verify-mlir",
      "run MLIR's sharding-propagation and shard-partition on an annotated module and prove the result equal to it");
  static std::string file;
  static frontend::mlirio::Options mopt;
  static verify::VerifyOptions opt;
  static bool print_partitioned = false;
  cmd->add_option("file", file, "an MLIR module with shard.grid and shard.shard annotations")->required();
  cmd->add_option("--func", mopt.func, "the function to check (default: the only one)");
  cmd->add_flag("--print-partitioned", print_partitioned, "print MLIR's partitioned module first");
  cmd->add_option("--solver", opt.solver, "z3, cvc5, or both (they must agree)")
      ->check(CLI::IsMember({"z3", "cvc5", "both"}));
  cmd->add_option("--timeout-ms", opt.timeout_ms, "per-obligation solver timeout")->check(kPositiveTime);
  cmd->add_option("--seed", opt.seed, "seed of the concrete screening points");
  cmd->add_option("--points", opt.random_points, "concrete screening points")->check(number_in(0, 1e6));
  cmd->callback([&run] {
    run = [] {
      limit_memory();
      frontend::mlirio::Partitioned p;
      try {
        p = frontend::mlirio::partition_and_import(file, mopt);
      } catch (const frontend::mlirio::MlirFailure& e) {
        fmt::print("UNKNOWN  {}: MLIR failure: {}\n", file, e.what());
        return static_cast<int>(kUnknown);
      } catch (const frontend::mlirio::Unsupported& e) {
        fmt::print("UNKNOWN  {}: {}\n", file, e.what());
        return static_cast<int>(kUnknown);
      }
      if (print_partitioned) fmt::print("{}\n", p.partitioned);
      // The function as written (the spec) is the user's: an error there
      // (no results) is INVALID, as `verify` says, not MLIR's failure.
      if (p.c.spec) {
        ir::DiagList sd;
        ir::validate_spec(*p.c.spec, file, sd);
        if (!sd.empty()) {
          fmt::print(stderr, "{}", invalid_text(sd.items, file));
          return 2;
        }
      }
      verify::Verdict v;
      try {
        v = verify::verify_case(p.c, file, opt);
      } catch (const ir::InvalidInput& e) {
        v.kind = verify::VerdictKind::invalid;
        v.reason = e.what();
        v.diags.push_back(e.diag());
      }
      // The module parsed and MLIR's verifier accepted both it and the
      // partitioned function, so a structural error in what was imported is
      // not the user's input: the partitioned function's values do not fit
      // the shardings it was given (MLIR's pass), or the import is off.
      if (v.kind == verify::VerdictKind::invalid) {
        std::string what;
        for (const auto& d : v.diags) what += (what.empty() ? "" : "; ") + d.plain();
        if (what.empty()) what = v.reason;
        fmt::print("UNKNOWN  {}: MLIR failure: the partitioned function does not fit its shardings: {}\n", file, what);
        return static_cast<int>(kUnknown);
      }
      fmt::print(v.kind == verify::VerdictKind::invalid ? stderr : stdout, "{}", verdict_text(v, file, p.c));
      return verify::verdict_exit_code(v.kind);
    };
  });
}

}  // namespace parity::cli
