// Byte encoding of one rank's outcome, so MPI ranks can send theirs to the root.
#pragma once
#include <string>
#include <vector>

#include "exec/runner.h"

namespace parity::exec {

// What one rank reports after running its program.
struct RankOutcome {
  enum Kind { ok, failed, timed_out, peer_failed } kind = ok;  // failed: the rank's own error
  std::string error;
  std::vector<PlacedValue> values;
};

std::string encode_outcome(const RankOutcome& o);
// Throws std::runtime_error on malformed bytes.
RankOutcome decode_outcome(const std::string& bytes);

}  // namespace parity::exec
