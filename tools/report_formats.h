// Verdict reports for CI and people: JUnit XML, SARIF 2.1.0, and the
// self-contained HTML page of `parity explain`, plus the helpers they share.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ir/plan.h"
#include "verify/check.h"

namespace parity::cli {

// What a report is about: the files given (`CASE` or `SPEC PLAN`), their label,
// and the loaded case (null when the input could not be read at all).
struct ReportInput {
  std::vector<std::string> files;
  std::string label;
  const ir::Case* c = nullptr;
};

// A position in an input file; line 0 when unknown.
struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;
};

std::string verdict_junit(const verify::Verdict& v, const ReportInput& in);
nlohmann::json verdict_sarif(const verify::Verdict& v, const ReportInput& in);
std::string explain_html(const verify::Verdict& v, const ReportInput& in);

// --- shared by the formats ---

// The N of a trailing "(line N)" in an op label such as `identity -> o (line 298)`; 0 if none.
int label_line(std::string_view op_label);
// The op that defines `value` in `g` or its nested regions, or null (inputs, unknown names).
const ir::Op* find_def(const ir::Graph& g, const std::string& value);
// `program.value -> spec_value`, as in verify::PlacementStats::label.
std::string placement_label(const ir::Placement& p);
// The placement label a counterexample belongs to.
std::string cex_placement(const verify::Counterexample& x);
// Where a diagnostic points: its file (a `FILE:LINE:COL` parse position is split off;
// a `SPEC + PLAN` label resolves to the file holding the program) and its op's line.
SourcePos diag_pos(const ir::Diag& d, const ReportInput& in);
// Where the plan value `program.value` is defined (its op's line in the plan file).
SourcePos plan_value_pos(const ReportInput& in, const std::string& program,
                         const std::string& value);
// Where the spec value is defined (in the spec file).
SourcePos spec_value_pos(const ReportInput& in, const std::string& value);
// `[0,3]`
std::string index_str(const std::vector<int64_t>& i);
// The counterexample as indented text lines (untruncated expressions).
std::string cex_text(const verify::Counterexample& x);
// The operation where the numbers part and why (verify/culprit.h), one or two
// lines; "" when none was found.
std::string culprit_text(const verify::Counterexample& x);
// The counterexample's lineage, one line per step (at most `max_steps`); "" when none.
std::string lineage_text(const verify::Counterexample& x, size_t max_steps);
// XML/HTML text and attribute escaping; drops characters XML 1.0 does not allow.
std::string xml_escape(std::string_view s);

// --- shared by `verify` and `explain` ---

// Loads `CASE` or `SPEC PLAN` into `c` and verifies it; unreadable input becomes an
// INVALID verdict. Shows elapsed time on stderr when it is a terminal and CI is unset.
verify::Verdict load_and_verify(const std::vector<std::string>& files,
                                const verify::VerifyOptions& opt, ir::Case& c);

}  // namespace parity::cli
