// Mesh, microbatch and shape reduction: a smaller instance of a case whose
// verification implies the original's, when the checked preconditions hold
// (docs/soundness.md). What could not be reduced is said, with the reason.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/plan.h"
#include "ir/validate.h"

namespace parity::reduce {

struct Options {
  bool mesh = true;   // mesh axes (dp, tp, cp, ep, ...) and their coordinates
  bool shape = true;  // dim symbols, microbatch counts included
  int64_t keep = 2;   // coordinates kept of each run of interchangeable ones
  int64_t least = 2;  // the least value of a reduced dim or shard extent (below it only if so given)
  size_t threads = 0; // validating the reduced instance (0: one per hardware thread)
  // An instance only to look for a counterexample in: a literal equal to a
  // size at its reduced value does not keep that size (that guard is against
  // hiding a difference, which only matters to VERIFIED); a literal equal to
  // a size as given still does (a smaller size would change what it means).
  bool refute = false;
  // With `refute`: a float literal equal to a size as given does not keep
  // that size either; it is listed in Result::readings with the values it
  // would take in the reduced instance if it stood for each size it equals.
  // A difference counts only when it shows under every reading.
  bool reread_literals = false;
  // The instance of verify's second look (verify/check.cpp): every index
  // term is kept apart from every size that differs from it as given, not
  // only from its one-renaming variants (reduce/distinct_sizes.h), by raising
  // floors for a few rounds and never by pinning (too strict for the
  // instance that is proved: sizes would stay as given); and the first
  // reduced instance that does not validate ends the reduction (unchanged,
  // `invalid_at` set) instead of keeping sizes until one does.
  bool second_look = false;
  // A float literal of a scalar attribute (ir::AttrSpec::scalar) equal to a
  // size as given does not keep that size: it is listed in
  // Result::generalized, and the reduced instance is proved with it read as
  // an indeterminate (docs/soundness.md, "Literals read as indeterminates"). Only a proof for every
  // value of it counts.
  bool generalize_literals = false;
  // Only the sizes: `dims` and `axes` of the first instance the rounds
  // settle on, neither validated nor retried (`reduced` is left empty). What
  // verify's second look compares its instance's sizes with.
  bool sizes_only = false;
  // Sizes (dims or mesh axes) kept as given, with the reason (verify keeps
  // those of a spec output that the reduced instance's placements do not
  // cover).
  std::map<std::string, std::string> keep_sizes;
  // The value types of the case as given, when its validation kept them
  // (symbolic, so they hold for a folded case's values too); what is not
  // found there is inferred again.
  const ir::TypeMap* given_spec_types = nullptr;
  const std::map<std::string, ir::TypeMap>* given_types = nullptr;
};

// A float literal that equals a size as given, left unpinned by
// Options::reread_literals: where it sits, and what it becomes in the reduced
// instance if it stands for each size it equals.
struct Reading {
  std::string program;  // empty: the spec
  std::string result;   // the first result of its op (value names are unique in a program)
  std::string attr;
  double value = 0;
  std::vector<std::pair<std::string, double>>
      as;  // ("1/q with ep=64", its value at the reduced sizes)
};

// One mesh axis: reduced coordinate -> the original coordinate it stands for.
struct AxisMap {
  std::string axis;
  int64_t from = 0, to = 0;
  std::vector<int64_t> orig_of;
};

struct Result {
  ir::Case reduced;
  bool changed = false;
  std::vector<std::string> applied;  // "dp 64 -> 2", "dim B 1024 -> 4"
  std::vector<std::string> kept;     // "pp kept at 16: send/recv peers move along it"
  std::vector<AxisMap> axes;         // every axis of the mesh, reduced or not
  std::map<std::string, std::pair<int64_t, int64_t>> dims;  // changed dims: (original, reduced)
  ir::TypeMap spec_types;  // of the reduced spec, from its validation (when changed)
  std::map<std::string, ir::TypeMap> program_types;  // of its programs, likewise
  std::vector<Reading> readings;  // with Options::reread_literals
  // With Options::generalize_literals: the literal values read as
  // indeterminates, each with the size it equals ("0.0883... (1/sqrt(q) with D=128)").
  std::map<double, std::string> generalized;
  std::string invalid_at;         // with Options::second_look: why a reduced instance did not validate

  // The original rank a reduced rank stands for, and as text: `rank 5 (pp=0,dp=37,tp=1)`.
  int64_t original_rank(const ir::Mesh& original, int64_t reduced_rank) const;
  std::string original_rank_str(const ir::Mesh& original, int64_t reduced_rank) const;
};

// Never throws on a validated case; an unreducible case comes back unchanged
// with the reasons in `kept`.
Result reduce_case(const ir::Case& c, const Options& opt = {});

// Sets the literal `r` names to `value` in `c` (a reduced instance); false
// when its op is not there.
bool set_literal(ir::Case& c, const Reading& r, double value);

}  // namespace parity::reduce
