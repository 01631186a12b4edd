// Structural validation: everything that makes a spec or plan malformed,
// reported with file, program, op, rank and what was expected.
#pragma once
#include <map>
#include <string>

#include "ir/error.h"
#include "ir/plan.h"

namespace parity::ir {

using TypeMap = std::map<std::string, TensorType>;

// Schedule events simulated by default before the check is left to a reduced instance.
inline constexpr size_t kScheduleBudget = 50'000'000;

// Checks one graph (ops known, attributes, operands defined, shape rules,
// declared types, regions) and returns the type of every value, nested regions
// included (value names are unique across a program). `where` carries file and
// program for messages.
TypeMap check_graph(const Graph& g, const Bindings& b, const Mesh* mesh, const Diag& where, DiagList& out);

void validate_spec(const Spec& s, const std::string& file, DiagList& out, TypeMap* types = nullptr);

// Validates the plan alone and, when `spec` is given, its placements against it.
// `types` receives each program's value types when non-null, `spec_types` the
// spec's. Programs are checked on up to `threads` threads (0: one per
// hardware thread).
void validate_plan(const Plan& p, const Spec* spec, const std::string& file, DiagList& out,
                   std::map<std::string, TypeMap>* types = nullptr, size_t threads = 0,
                   TypeMap* spec_types = nullptr);

// Simulates every rank's sequence of collectives and point-to-point ops and
// reports deadlocks: recv without send, send without recv, ranks of one group
// issuing different collectives, a pipeline order that waits in a cycle.
// Plans that unroll to more than `budget` events are not simulated here (the
// verifier simulates their reduced instance).
void check_schedule(const Plan& p, const std::map<std::string, TypeMap>& types, const std::string& file, DiagList& out,
                    size_t budget = kScheduleBudget);

// Everything above for a complete case; `spec_types` receives the spec's
// value types when non-null (the stage builder needs them), `types` each
// program's (the layer fold's stubs do).
DiagList validate_case(const Case& c, const std::string& file, size_t schedule_budget = kScheduleBudget,
                       size_t threads = 0, TypeMap* spec_types = nullptr,
                       std::map<std::string, TypeMap>* types = nullptr);

}  // namespace parity::ir
