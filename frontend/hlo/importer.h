// One HLO computation (the ENTRY, with the computations it calls inlined) to
// a parity graph. Float arrays become parity values; integer scalars and
// small integer arrays (partition-id, offset tables, iota) are evaluated per
// partition, exactly, so that a dynamic-slice offset becomes an expression of
// the mesh coordinates (`$tp * 4`). Anything else is Unsupported, naming the
// instruction and its line.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/hlo/text.h"
#include "ir/plan.h"

namespace parity::frontend::hlo {

// Valid HLO that uses something parity does not model: UNKNOWN, naming it.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Mode { spec, plan };

struct Imported {
  ir::Graph graph;
  std::vector<std::string> params;                 // parameter number -> value name
  std::vector<std::vector<int64_t>> param_shapes;  // as declared
  std::vector<std::string> results;                // the ROOT's elements (a tuple) or the ROOT
  std::vector<std::vector<int64_t>> result_shapes;
  std::vector<const Instr*> param_instrs;  // for their `sharding=`
  // The value each instruction defines, by what it computes and where in the
  // source (`dot@train.py:42`): spec and plan values of one key are the same
  // computation, whole or in pieces (hints.h).
  std::map<std::string, std::string> keys;
};

// `names`: the value name of each parameter (shared by spec and plan).
Imported import_entry(const Module& m, Mode mode, const ir::Mesh& mesh,
                      const std::vector<std::string>& names);

// The name a parameter gets: its `op_name` metadata (JAX writes the
// argument's name there), made a plain identifier; `arg<i>` without one.
std::vector<std::string> param_names(const Module& m);

}  // namespace parity::frontend::hlo
