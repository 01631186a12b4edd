#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "corpus/models.h"
#include "frontend/proto/case_io.h"
#include "tools/cli.h"
#include "tools/progress_line.h"

namespace parity::cli {

namespace {

struct GenArgs {
  std::string model, out, step = "adamw", bug;
  corpus::GenOptions o;
  std::vector<std::string> dims;
  bool list = false;
  int expect_exit = -1;
  std::string expect_error;
};

int list_all() {
  fmt::print("models (reduced dims are bound in generated files; the published size is shown):\n");
  for (const auto& m : corpus::models()) {
    const auto& r = m.real;
    std::string shape = fmt::format("hidden {} layers {} heads {} kv {} ffn {} vocab {}", r.hidden, r.layers,
                                    r.heads, r.kv_heads, r.ffn, r.vocab);
    if (r.experts)
      shape += fmt::format(" | MLA q_lora {} kv_lora {} | MoE {} experts top-{} ffn {} ({} dense layers)", r.q_lora,
                           r.kv_lora, r.experts, r.topk, r.expert_ffn, r.dense_layers);
    fmt::print("  {:<18} {:<9} {}\n  {:<18} {:<9} {}\n", m.name, corpus::family_name(m.family), shape, "", "", r.notes);
    std::string small;
    for (const auto& [k, v] : m.dims) small += fmt::format("{}={} ", k, v);
    fmt::print("  {:<18} {:<9} reduced: {}L={}\n", "", "", small, m.layers);
  }
  fmt::print("\nbugs (--bug NAME[@rank=R|@mb=M|@layer=L]):\n");
  for (const auto& b : corpus::bugs())
    fmt::print("  {:<26} {}{}\n", b.name, b.description, b.needs.empty() ? "" : " [needs " + b.needs + "]");
  return kOk;
}

}  // namespace

void add_gen(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("gen", "generate a Megatron-style training-step spec and parallel plan");
  static GenArgs a;
  cmd->add_option("model", a.model, "model config (see --list)");
  cmd->add_flag("--list", a.list, "list models and bug injectors");
  cmd->add_option("--dp", a.o.dp, "data-parallel size")->check(kCount);
  cmd->add_option("--tp", a.o.tp, "tensor-parallel size")->check(kCount);
  cmd->add_option("--pp", a.o.pp, "pipeline stages")->check(kCount);
  cmd->add_option("--cp", a.o.cp, "context-parallel size")->check(kCount);
  cmd->add_option("--ep", a.o.ep, "expert-parallel size (MoE models)")->check(kCount);
  cmd->add_flag("--sp", a.o.sp, "sequence parallelism inside the tp group");
  cmd->add_option("--zero", a.o.zero,
                  "ZeRO stage 0-3: 1 optimizer state, 2 also gradients, 3 also parameters (FSDP)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--mb", a.o.mb, "microbatches per step")->check(kCount);
  cmd->add_option("--schedule", a.o.schedule,
                  "pipeline order: seq (forward+backward per microbatch loop), 1f1b, interleaved")
      ->check(CLI::IsMember({"seq", "1f1b", "interleaved"}));
  cmd->add_option("--vpp", a.o.vpp, "model chunks per stage (virtual stages, --schedule interleaved)")
      ->check(kCount);
  cmd->add_flag("--cp-balanced", a.o.cp_balanced,
                "load-balanced CP: rank i holds sequence chunks i and 2cp-1-i");
  cmd->add_option("--layers", a.o.layers, "layers of the reduced model (default or 0: config's, at least pp)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  cmd->add_option("--step", a.step, "grads | clip | adamw (default adamw: the full step)")
      ->check(CLI::IsMember({"grads", "clip", "adamw"}));
  cmd->add_option("--marks", a.o.marks, "placed intermediates: all, forward (no gradients) or io")
      ->check(CLI::IsMember({"all", "forward", "io"}));
  cmd->add_flag("--loop-marks,!--no-loop-marks", a.o.loop_marks,
                "place values inside the microbatch loop too (default on: per-microbatch localization, and verify "
                "can cut the loop into stages)");
  cmd->add_option("--dim", a.dims, "override a reduced dim, e.g. --dim H=16");
  cmd->add_option("--bug", a.bug, "inject a named bug, optionally at a rank, microbatch or layer");
  cmd->add_option("-o,--out", a.out, "case file to write (.pbtxt text, .pb binary)");
  cmd->add_option("--expect-exit", a.expect_exit, "write `# expect-cmd: verify` / `# expect-exit: N` headers");
  cmd->add_option("--expect-error", a.expect_error, "write an `# expect-error:` header");
  cmd->callback([&run] {
    run = [] {
      if (a.list) return list_all();
      if (a.model.empty()) throw ir::InvalidInput("gen: give a MODEL (see `parity gen --list`)");
      if (a.out.empty()) throw ir::InvalidInput("gen: give -o CASE");
      a.o.model = a.model;
      corpus::parse_step(a.step, a.o.step);
      for (const auto& d : a.dims) {
        auto eq = d.find('=');
        if (eq == std::string::npos) throw ir::InvalidInput("gen: --dim wants NAME=VALUE, got '" + d + "'");
        const std::string v = d.substr(eq + 1);
        size_t used = 0;
        long long x = 0;
        try {
          x = std::stoll(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != v.size() || v.empty() || x < 1)
          throw ir::InvalidInput("gen: --dim " + d + ": the value must be a positive integer");
        a.o.dims[d.substr(0, eq)] = x;
      }
      auto t0 = std::chrono::steady_clock::now();
      std::optional<ProgressLine> progress(std::in_place, a.out);  // erased before the summary
      progress->phase("generating");
      ir::Case c = corpus::generate(a.o);
      // An override of a dim the model does not have would be ignored silently.
      if (const corpus::ModelConfig* m = corpus::find_model(a.model))
        for (const auto& [k, v] : a.o.dims)
          if (!m->dims.count(k)) {
            std::string known;
            for (const auto& kv : m->dims) known += (known.empty() ? "" : ", ") + kv.first;
            throw ir::InvalidInput("gen: --dim " + k + "=" + std::to_string(v) + ": model " + a.model +
                                   " has no dim '" + k + "' (its dims: " + known + "; microbatches are --mb)");
          }
      if (!a.bug.empty()) corpus::inject_bug(c, a.bug);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::string header;
      if (a.expect_exit >= 0) header = corpus::case_header(a.o, a.bug, a.expect_exit, a.expect_error);
      auto fmt_ = frontend::format_for_path(a.out);
      progress->phase("writing");
      std::string bytes = frontend::write_case_string(c, fmt_);
      if (fmt_ == frontend::Format::text) bytes = header + bytes;
      std::ofstream f(a.out, std::ios::binary);
      if (!f || !(f << bytes)) throw std::runtime_error("cannot write " + a.out);
      progress.reset();
      size_t ops = c.spec ? c.spec->graph.ops.size() : 0;
      for (const auto& p : c.plan.programs) ops += p.graph.ops.size();
      fmt::print("wrote {}: {} bytes, {} ranks, {} programs, {} placements, {} top-level ops ({:.2f} s)\n", a.out,
                 bytes.size(), c.plan.mesh.num_ranks(), c.plan.programs.size(), c.plan.placements.size(), ops, secs);
      return int(kOk);
    };
  });
}

}  // namespace parity::cli
