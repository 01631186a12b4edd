// Reverse-mode autodiff over the IR: specs and plan programs are written
// forward only, and this pass appends their backward ops. Collectives get
// their adjoints, the conventions of Megatron-LM:
//   allreduce(sum) -> identity        grad_allreduce -> allreduce(sum)
//   allreduce(avg) -> scale 1/n       allgather      -> reduce_scatter(sum)
//   reduce_scatter -> allgather       all_to_all     -> all_to_all (split/concat swapped)
//   send           -> recv of the gradient from the same peer; recv -> send back
// The verifier then checks what these conventions produce.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/mesh.h"

namespace parity::ir {

struct GradRequest {
  std::string loss;              // scalar value to differentiate (ignored when `seeds` is given)
  std::vector<std::string> wrt;  // values to differentiate with respect to
  // Optional: gradients flowing in from outside (value -> name of its
  // gradient, already defined in the graph, e.g. received from the next
  // pipeline stage). When empty, d loss / d loss = 1.
  std::map<std::string, std::string> seeds;
  int64_t tag_offset = 1000;     // tags of the backward p2p ops: forward tag + offset
  std::string prefix = "d_";     // names of gradient values: prefix + value (+ suffix on reuse)
};

// Appends the backward of `g` (loops are not supported: differentiate a loop
// body instead) and returns, for each `wrt` value, the name of its gradient
// (a zero-filled value when the loss does not depend on it). Throws
// InvalidInput naming the op when an op has no adjoint.
std::map<std::string, std::string> append_backward(Graph& g, const GradRequest& req, const Bindings& b,
                                                   const Mesh* mesh);

}  // namespace parity::ir
