// Verdict reports: the human summary and the versioned JSON document.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "ir/plan.h"
#include "verify/check.h"

namespace parity::cli {

constexpr int kReportSchemaVersion = 2;
std::string verdict_text(const verify::Verdict& v, const std::string& label, const ir::Case& c);
// `files` (when given) are recorded with a digest of their contents, so a
// saved result can be presented again (`explain --from`) and refused when
// the files changed.
nlohmann::json verdict_json(const verify::Verdict& v, const std::string& label,
                            const std::vector<std::string>& files = {});
// A digest of the files' contents; "" when one cannot be read (stdin).
std::string inputs_digest(const std::vector<std::string>& files);
// Reads a result `verdict_json` wrote (tools/report_read.cpp); the files and
// digest it records go to `files` and `digest`. Throws ir::InvalidInput with
// the position of what is wrong.
verify::Verdict verdict_from_json(const std::string& file, std::vector<std::string>* files, std::string* digest);
// The counterexample's cause (verify/culprit.h) as JSON; null when none was found.
nlohmann::json culprit_json(const verify::Counterexample& x);

}  // namespace parity::cli
