#include <fmt/format.h>

#include "frontend/proto/case_io.h"
#include "tools/cli.h"

namespace parity::cli {

ir::Case load_case(const std::vector<std::string>& files) {
  if (files.empty() || files.size() > 2) throw ir::InvalidInput("expected CASE or SPEC PLAN");
  ir::Case c = frontend::read_case(files[0]);
  if (files.size() == 1) return c;
  ir::Case p = frontend::read_case(files[1]);
  if (!c.spec) throw ir::InvalidInput(ir::Diag{files[0], "", "", "", "holds no spec (expected SPEC PLAN)"});
  if (p.plan.programs.empty()) throw ir::InvalidInput(ir::Diag{files[1], "", "", "", "holds no plan (expected SPEC PLAN)"});
  c.plan = std::move(p.plan);
  return c;
}

std::string files_label(const std::vector<std::string>& files) {
  return files.size() == 2 ? files[0] + " + " + files[1] : files.empty() ? "" : files[0];
}

int report_diags(const ir::DiagList& d) {
  if (d.empty()) return kOk;
  for (const auto& x : d.items) fmt::print(stderr, "INVALID: {}\n", x.str());
  return kInvalid;
}

}  // namespace parity::cli
