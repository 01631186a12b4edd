// Importing XLA's HLO text into parity: the single-device module is the spec;
// the module after XLA's SPMD partitioner (one program every partition runs)
// is the plan, its placements read from the shardings of the parameters and
// results. `parity_jax` (frontend/jax) writes both from a JAX program.
#pragma once
#include <set>
#include <string>

#include "frontend/hlo/hints.h"
#include "frontend/hlo/importer.h"
#include "ir/plan.h"

namespace parity::frontend::hlo {

// `.hlo` or `.hlo.txt`.
bool is_hlo_path(const std::string& path);

// The mesh of a plan: its `// parity-mesh: dp=2 tp=4` line, else one axis `p`
// over `num_partitions`.
ir::Mesh mesh_of(const Module& plan);

struct ImportOptions {
  // Placements of intermediate values inferred by running both (hints.h).
  bool infer_placements = true;
};

// Throws ir::InvalidInput (malformed text, at FILE:LINE:COL) or Unsupported.
// `hints` (optional) receives what was inferred (hints.h).
ir::Case import_pair(const std::string& spec_path, const std::string& plan_path,
                     const ImportOptions& opt = {}, Hints* hints = nullptr);

}  // namespace parity::frontend::hlo
