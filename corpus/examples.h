// Hand-written example cases: one training step of a 2-layer MLP (matmul, silu,
// matmul, squared-error loss, backward, SGD) and three plans that implement it.
// Their text forms are checked in under corpus/cases/examples/.
#pragma once
#include <string>
#include <vector>

#include "ir/plan.h"

namespace parity::corpus {

// The single-device step: dims B=4, H=4, F=8; inputs x, y (data), w1, w2
// (param); outputs loss, dw1, dw2, w1n, w2n.
ir::Spec mlp_spec();

// Megatron tensor parallelism over tp=2: w1 split by columns, w2 by rows, one
// allreduce in the forward pass.
ir::Case mlp_tp2();
// Two pipeline stages (pp=2) over M=2 microbatches, with send/recv in a loop and
// gradients accumulated across microbatches.
ir::Case pipeline_pp2();
// Data parallelism over dp=2: each rank takes B/dp rows; gradients and the loss
// are allreduced.
ir::Case dp2();

struct Example {
  std::string name;  // file stem under corpus/cases/examples/
  ir::Case (*make)();
};
const std::vector<Example>& examples();

}  // namespace parity::corpus
