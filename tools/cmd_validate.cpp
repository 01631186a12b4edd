#include <fmt/format.h>

#include "ir/validate.h"
#include "tools/cli.h"
#include "tools/progress_line.h"

namespace parity::cli {

void add_validate(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("validate", "structural checks: ops, shapes, placements, groups, p2p matching, deadlocks");
  static std::vector<std::string> files;
  cmd->add_option("files", files, "CASE, or SPEC PLAN")->required();
  cmd->callback([&run] {
    run = [] {
      std::string label = files_label(files);
      ir::DiagList d;
      {
        ProgressLine progress(label);  // erased before the result is printed
        progress.phase("reading");
        ir::Case c = load_case(files);
        progress.phase("validating");
        d = ir::validate_case(c, label);
      }
      int rc = report_diags(d);
      if (rc == kOk) fmt::print("OK: {} is well formed\n", label);
      return rc;
    };
  });
}

}  // namespace parity::cli
