// The parity CLI: each subcommand registers itself on the CLI11 app and returns
// an exit code: 0 verified/ok, 1 mismatch, 2 invalid input or usage, 3 unknown.
#pragma once
#include <cmath>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <functional>
#include <set>
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
      } catch (const std::out_of_range&) {
        return "'" + v + "' is out of range";
      } catch (const std::exception&) {
        return "'" + v + "' is not a number";
      }
      return std::string();
    },
    "FINITE");

// A finite number in [lo, hi] (lo excluded when `open`), with a message that
// names the bounds briefly (CLI11's own prints a double's bound in 300 digits).
inline CLI::Validator number_in(double lo, double hi, bool open = false) {
  return CLI::Validator(
      [=](std::string& v) {
        std::string bad = kFinite(v);
        if (!bad.empty()) return bad;
        const double x = std::stod(v);
        if (x < lo || (open && x == lo) || x > hi)
          return fmt::format("{} is out of range: {} {:g} and at most {:g}", v, open ? "above" : "at least", lo, hi);
        return std::string();
      },
      fmt::format("{}{:g}..{:g}", open ? ">" : "", lo, hi));
}
// Counts and sizes: a positive integer, at most 2^20 (a mesh axis, microbatches, layers).
inline const CLI::Validator kCount = CLI::Range(int64_t{1}, int64_t{1} << 20);
// Seconds and milliseconds: positive and below a century, so that clocks cannot overflow.
inline const CLI::Validator kPositiveTime = number_in(0, 3e9, true);
inline const CLI::Validator kTimeOrZero = number_in(0, 3e9);
inline const CLI::Validator kNonNegative = number_in(0, 9e15);

enum Exit { kOk = 0, kMismatch = 1, kInvalid = 2, kUnknown = 3 };

using Action = std::function<int()>;
void add_inspect(CLI::App& app, Action& run);
void add_validate(CLI::App& app, Action& run);
void add_verify(CLI::App& app, Action& run);
void add_gen(CLI::App& app, Action& run);
void add_run(CLI::App& app, Action& run);
void add_explain(CLI::App& app, Action& run);
void add_reduce(CLI::App& app, Action& run);
void add_verify_jax(CLI::App& app, Action& run);
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
// HLO input: whether load_case infers placements of intermediate values
// (frontend/hlo/hints.h), and the plan values the last load placed so and
// where its numbers part from the spec's.
extern bool infer_hlo_placements;
extern std::set<std::string> inferred_hlo_values;
extern std::string hlo_culprit;
// "a.pbtxt" or "spec.pbtxt + plan.pbtxt", for messages.
std::string files_label(const std::vector<std::string>& files);
// Prints every diagnostic of a validation and returns kInvalid, or kOk if none.
int report_diags(const ir::DiagList& d);
// Diagnostics as compilers write them (`FILE:LINE:COL: error: ... [check]`,
// one per line), then `INVALID: N problems` (`in LABEL` when given).
std::string invalid_text(const std::vector<ir::Diag>& d, const std::string& label = "");
// Creates `dir` if needed and checks that a file can be written there; throws
// ir::InvalidInput naming `option` otherwise (a cache that silently stays
// empty would cost every later run its speed).
void require_writable_dir(const std::string& dir, const std::string& option);

}  // namespace parity::cli
