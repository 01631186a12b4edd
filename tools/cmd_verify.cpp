#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "tools/cli.h"
#include "tools/progress_line.h"
#include "tools/report.h"
#include "tools/report_formats.h"
#include "tools/stage_procs.h"
#include "verify/check.h"

namespace parity::cli {

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f || !(f << text) || !f.flush()) throw std::runtime_error("cannot write " + path);
}

// `--time-limit` bounds the deciding of obligations, and each solver call
// has its own timeout; but a solver can ignore its interrupt (Z3 deep in a
// rewrite of a large nonlinear term ran 10 times past the limit). Past the
// limit by a tenth and 10 s more, this reports UNKNOWN and ends the process:
// a CI gate always ends.
class HardDeadline {
 public:
  HardDeadline(double limit_s, std::function<void()> on_expiry) {
    if (limit_s <= 0) return;
    const auto after = std::chrono::duration<double>(limit_s * 1.1 + 10);
    worker_ = std::thread([this, after, f = std::move(on_expiry)] {
      std::unique_lock<std::mutex> lk(m_);
      if (cv_.wait_for(lk, after, [this] { return done_; })) return;
      f();  // reports and exits
    });
  }
  ~HardDeadline() {
    {
      std::lock_guard<std::mutex> lk(m_);
      done_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread worker_;
};

}  // namespace

verify::Verdict load_and_verify(const std::vector<std::string>& files,
                                const verify::VerifyOptions& opt, ir::Case& c) {
  verify::Verdict v;
  try {
    auto t0 = std::chrono::steady_clock::now();
    c = load_case(files);
    double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ProgressLine progress(files_label(files));
    verify::VerifyOptions o = opt;
    o.progress = progress.sink();
    v = verify::verify_case(c, files_label(files), o);
    v.read_seconds = read_s;
    // A placement parity inferred (HLO input) is a guess: where one does not
    // hold, the verdict is the plan's without them.
    if (v.kind == verify::VerdictKind::mismatch && v.cex && inferred_hlo_values.count(v.cex->value)) {
      const std::string culprit = hlo_culprit;
      infer_hlo_placements = false;
      c = load_case(files);
      infer_hlo_placements = true;
      hlo_culprit = culprit;
      v = verify::verify_case(c, files_label(files), o);
      v.read_seconds = read_s;
    }
    if (v.kind == verify::VerdictKind::mismatch && !hlo_culprit.empty()) {
      v.notes.push_back("where the plan's numbers part from the spec's (a run of both at one point): the first "
                        "operation whose result matches no spec value while its operands do is " + hlo_culprit);
      // One answer: the importer's, which matches values by their source
      // operation; the generic walk reads the inferred placements as given.
      if (v.cex) v.cex->culprit.reset();
    }
  } catch (const ir::InvalidInput& e) {  // unreadable input still gets a report
    v.kind = verify::VerdictKind::invalid;
    v.reason = e.what();
    v.diags.push_back(e.diag());
  }
  return v;
}

void add_verify(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand(
      "verify", "prove that the plan computes the spec's training step, or show where it diverges");
  static std::vector<std::string> files;
  static verify::VerifyOptions opt;
  static std::string json_out, junit_out, sarif_out;
  cmd->add_option("files", files, "CASE, or SPEC PLAN")->required();
  cmd->add_option("--solver", opt.solver, "z3, cvc5, or both (they must agree)")
      ->check(CLI::IsMember({"z3", "cvc5", "both"}));
  cmd->add_option("--timeout-ms", opt.timeout_ms, "per-obligation solver timeout")->check(kPositiveTime);
  cmd->add_option("--seed", opt.seed, "seed of the concrete screening points");
  cmd->add_option("--points", opt.random_points, "concrete screening points")->check(number_in(0, 1e6));
  cmd->add_option("--time-limit", opt.time_limit_s,
                  "seconds the whole-plan check may spend deciding obligations; the rest are UNKNOWN (0: none)")
      ->check(kTimeOrZero);
  cmd->add_option("--expand-budget", opt.expand_budget,
                  "monomials allowed when expanding products")
      ->check(kNonNegative);
  cmd->add_flag("--smt-all", opt.smt_all,
                "send every obligation not equal by canonical form to the solver");
  static bool no_reduce = false, no_stages = false, no_fold = false;
  cmd->add_option("--cache", opt.cache_dir,
                  "remember proved stages in DIR and skip them in later runs (keys compared in full)");
  cmd->add_option("--threads", opt.threads,
                  "threads validating, building and proving distinct stages (default: one per hardware "
                  "thread); under mpirun "
                  "the processes share the stages too");
  cmd->add_flag("--no-stages", no_stages,
                "check the whole plan at once instead of proving each distinct stage once");
  cmd->add_flag("--no-fold", no_fold,
                "prove every layer's stages, not only one layer of each run of layers that are exact "
                "images of one another");
  cmd->add_flag("--no-reduce", no_reduce,
                "verify the plan at the mesh, microbatches and dims given, without reduction");
  cmd->add_option("--json", json_out, "write the verdict as JSON to this file (- for stdout)");
  cmd->add_option("--junit", junit_out, "write a JUnit XML report to this file (- for stdout)");
  cmd->add_option("--sarif", sarif_out, "write a SARIF 2.1.0 log to this file (- for stdout)");
  cmd->callback([&run] {
    if ((json_out == "-") + (junit_out == "-") + (sarif_out == "-") > 1)
      throw CLI::ValidationError("--json/--junit/--sarif", "only one report can go to stdout (-)");
    run = [] {
      limit_memory();
      if (!opt.cache_dir.empty()) require_writable_dir(opt.cache_dir, "--cache");
      std::string label = files_label(files);
      ir::Case c;
      opt.reduce = !no_reduce;
      opt.stages = !no_stages;
      opt.fold = !no_fold;
      StageProcesses procs;
      opt.shards = procs.shards();
      // Whoever reports first (the verdict, or the hard deadline) reports alone.
      std::mutex report_m;
      bool reported = false;
      auto report = [&](const verify::Verdict& v, const ir::Case& rc) {
        ReportInput in{files, label, &rc};
        // At most one report replaces the text on stdout; the others go to their files.
        std::vector<std::pair<std::string, std::string>> outs;
        if (!json_out.empty()) outs.emplace_back(json_out, verdict_json(v, label, files).dump(2) + "\n");
        if (!junit_out.empty()) outs.emplace_back(junit_out, verdict_junit(v, in));
        if (!sarif_out.empty()) outs.emplace_back(sarif_out, verdict_sarif(v, in).dump(2) + "\n");
        bool to_stdout = false;
        for (const auto& [path, text] : outs) {
          if (path != "-") continue;
          fmt::print("{}", text);
          std::fflush(stdout);
          to_stdout = true;
        }
        // Diagnostics of invalid input go to stderr, as with `validate`.
        if (!to_stdout)
          fmt::print(v.kind == verify::VerdictKind::invalid ? stderr : stdout, "{}",
                     verdict_text(v, label, rc));
        for (const auto& [path, text] : outs)
          if (path != "-") write_file(path, text);
      };
      const ir::Case no_case;  // the case may be half read when the deadline passes
      const auto started = std::chrono::steady_clock::now();
      HardDeadline deadline(procs.index() == 0 ? opt.time_limit_s : 0, [&] {
        std::lock_guard<std::mutex> lk(report_m);
        if (reported) return;
        verify::Verdict v;
        v.kind = verify::VerdictKind::unknown;
        v.solver = opt.solver;
        v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        v.reason = fmt::format(
            "the time limit (--time-limit {} s) ran out and the check was still running a tenth of it and 10 s "
            "later (a solver that does not answer its interrupt, or reduction and stages taking that long); "
            "nothing was concluded",
            opt.time_limit_s);
        try {
          report(v, no_case);
        } catch (const std::exception& e) {
          fmt::print(stderr, "error: {}\n", e.what());
        }
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(verify::verdict_exit_code(v.kind));
      });
      verify::Verdict v = load_and_verify(files, opt, c);
      // Under mpirun every process reaches the same verdict; process 0 reports it.
      if (procs.index() != 0) return verify::verdict_exit_code(v.kind);
      std::lock_guard<std::mutex> lk(report_m);
      reported = true;
      report(v, c);
      return verify::verdict_exit_code(v.kind);
    };
  });
}

}  // namespace parity::cli
