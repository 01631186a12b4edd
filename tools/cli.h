// The parity CLI: each subcommand registers itself on the CLI11 app and returns
// an exit code: 0 verified/ok, 1 mismatch, 2 invalid input or usage, 3 unknown.
#pragma once
#include <cmath>
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/plan.h"

namespace parity::cli {

// Rejects nan and inf, which CLI11's number checks let through.
inline const CLI::Validator kFinite(
    [](std::string& v) {
      try {
        size_t used = 0;
        const double x = std::stod(v, &used);
        if (used != v.size() || !std::isfinite(x)) return "'" + v + "' is not a finite number";
      } catch (const std::exception&) {
        return "'" + v + "' is not a number";
      }
      return std::string();
    },
    "FINITE");

enum Exit { kOk = 0, kMismatch = 1, kInvalid = 2, kUnknown = 3 };

using Action = std::function<int()>;
void add_inspect(CLI::App& app, Action& run);
void add_validate(CLI::App& app, Action& run);
void add_verify(CLI::App& app, Action& run);
void add_gen(CLI::App& app, Action& run);
void add_run(CLI::App& app, Action& run);
void add_explain(CLI::App& app, Action& run);
void add_reduce(CLI::App& app, Action& run);
#ifdef PARITY_HAVE_MLIR
void add_verify_mlir(CLI::App& app, Action& run);
#endif

// Input that parses but cannot be decided (an MLIR op the importer does not
// model, MLIR's partitioner failing): the verdict is UNKNOWN (exit 3).
class UnknownInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Caps the process's address space (PARITY_MAX_MEMORY_GB, default 80% of
// physical memory; 0: none), so that running out of memory is an UNKNOWN
// verdict, not the OOM killer's.
void limit_memory();

// Loads `CASE` or `SPEC PLAN` (a spec file and a plan file). Throws ir::InvalidInput.
ir::Case load_case(const std::vector<std::string>& files);
// "a.pbtxt" or "spec.pbtxt + plan.pbtxt", for messages.
std::string files_label(const std::vector<std::string>& files);
// Prints every diagnostic of a validation and returns kInvalid, or kOk if none.
int report_diags(const ir::DiagList& d);

}  // namespace parity::cli
