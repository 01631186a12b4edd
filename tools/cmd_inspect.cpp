#include <fmt/format.h>

#include "ir/op_registry.h"
#include "ir/print.h"
#include "reduce/layer_blocks.h"
#include "tools/cli.h"

namespace parity::cli {

void add_inspect(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("inspect", "summary and readable listing of a spec, a plan or a case");
  static std::vector<std::string> files;
  static bool ops = false, summary_only = false, layers = false;
  cmd->add_option("files", files, "CASE, or SPEC PLAN");
  cmd->add_flag("--ops", ops, "list the known ops with their semantics");
  cmd->add_flag("--summary", summary_only, "print the summary only");
  cmd->add_flag("--layers", layers,
                "the ops grouped into blocks by the layer number in their value names, and which layers "
                "are exact images of the layer before (where the others differ)");
  cmd->callback([&run] {
    run = [] {
      if (ops) {
        for (const auto* d : ir::OpRegistry::get().all()) {
          std::string attrs;
          for (const auto& a : d->attrs) attrs += (attrs.empty() ? "" : ", ") + a.name + (a.required ? "" : "?");
          fmt::print("{:<20} {:<55} {}\n", d->name, attrs.empty() ? "-" : attrs, d->doc);
        }
        return int(kOk);
      }
      if (files.empty()) throw ir::InvalidInput("inspect: expected CASE or SPEC PLAN (or --ops)");
      ir::Case c = load_case(files);
      std::string label = files_label(files);
      fmt::print("{}", ir::summarize_case(c));
      if (summary_only) return int(kOk);
      if (layers) {
        fmt::print("\n{}", reduce::layers_report(reduce::find_layer_blocks(c)));
        return int(kOk);
      }
      ir::DiagList d;
      ir::TypeMap st;
      std::map<std::string, ir::TypeMap> pt;
      if (c.spec) {
        ir::validate_spec(*c.spec, label, d, &st);
        fmt::print("\n{}", ir::print_spec(*c.spec, &st));
      }
      if (!c.plan.programs.empty()) {
        ir::validate_plan(c.plan, c.spec ? &*c.spec : nullptr, label, d, &pt);
        fmt::print("\n{}", ir::print_plan(c.plan, &pt));
      }
      return report_diags(d);
    };
  });
}

}  // namespace parity::cli
