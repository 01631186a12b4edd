#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tools/cli.h"
#include "tools/report.h"
#include "verify/check.h"

namespace parity::cli {

void add_verify(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("verify", "prove that the plan computes the spec's training step, or show where it diverges");
  static std::vector<std::string> files;
  static verify::VerifyOptions opt;
  static std::string json_out;
  cmd->add_option("files", files, "CASE, or SPEC PLAN")->required();
  cmd->add_option("--solver", opt.solver, "z3, cvc5, or both (they must agree)")->check(CLI::IsMember({"z3", "cvc5", "both"}));
  cmd->add_option("--timeout-ms", opt.timeout_ms, "per-obligation solver timeout");
  cmd->add_option("--seed", opt.seed, "seed of the concrete screening points");
  cmd->add_option("--points", opt.random_points, "concrete screening points");
  cmd->add_option("--expand-budget", opt.expand_budget, "monomials allowed when expanding products");
  cmd->add_flag("--smt-all", opt.smt_all, "send every obligation not equal by canonical form to the solver");
  cmd->add_option("--json", json_out, "write the verdict as JSON to this file (- for stdout)");
  cmd->callback([&run] {
    run = [] {
      std::string label = files_label(files);
      ir::Case c;
      verify::Verdict v;
      try {
        c = load_case(files);
        v = verify::verify_case(c, label, opt);
      } catch (const ir::InvalidInput& e) {  // unreadable input still gets a report
        v.kind = verify::VerdictKind::invalid;
        v.reason = e.what();
        v.diags.push_back(e.diag());
      }
      if (json_out == "-") {
        fmt::print("{}\n", verdict_json(v, label).dump(2));
      } else {
        // Diagnostics of invalid input go to stderr, as with `validate`.
        fmt::print(v.kind == verify::VerdictKind::invalid ? stderr : stdout, "{}", verdict_text(v, label, c));
        if (!json_out.empty()) {
          std::ofstream f(json_out);
          if (!f) throw std::runtime_error("cannot write " + json_out);
          f << verdict_json(v, label).dump(2) << "\n";
        }
      }
      return verify::verdict_exit_code(v.kind);
    };
  });
}

}  // namespace parity::cli
