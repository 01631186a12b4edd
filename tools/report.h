// Verdict reports: the human summary and the versioned JSON document.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "ir/plan.h"
#include "verify/check.h"

namespace parity::cli {

constexpr int kReportSchemaVersion = 2;
std::string verdict_text(const verify::Verdict& v, const std::string& label, const ir::Case& c);
nlohmann::json verdict_json(const verify::Verdict& v, const std::string& label);

}  // namespace parity::cli
