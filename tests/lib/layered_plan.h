// The plan the layer tests share: Llama-3 405B's training step over
// DP2 TP2 PP2 with two microbatches and 16 layers, so each pipeline stage
// holds 8 layers, 6 of them interior.
#pragma once
#include "corpus/generator.h"

namespace parity::test_plans {

inline corpus::GenOptions llama16() {
  corpus::GenOptions o;
  o.model = "llama3-405b";
  o.dp = 2;
  o.tp = 2;
  o.pp = 2;
  o.mb = 2;
  o.layers = 16;
  return o;
}

}  // namespace parity::test_plans
