// Differential comparison of a plan's numbers against its spec's.
//
// Floating-point results of a correct plan differ from the spec's only by the
// order of additions (a split matmul, an allreduce of partial sums). How much
// reassociation alone moves each value is measured by a control run: the spec
// again with pairwise summation and the reference (non-BLAS) matmul. Per spec
// value T:
//
//   control(T) = max |spec - control| over T
//   scale(T)   = max |spec| over T
//   tol(T)     = max(k * control(T), floor_eps * epsilon(dtype) * scale(T))
//
// with k = 16 and floor_eps = 8 by default (the floor covers values that
// reassociation does not touch, e.g. a sum of two terms).
//
// A value that is zero by cancellation is rounding noise in any run, and a
// plan that computes its terms on other ranks or in other blocks rounds them
// differently from the spec, while the control run may round them alike (the
// rows of a sequence whose tokens are all equal give gradients of wq and wk
// that are exactly zero in the spec and 1e-11 in a TP+SP plan, in f32). And a
// value can be more sensitive to rounding than reassociation shows (the
// control run orders a short sum as the spec does; AdamW's m / (sqrt(v) +
// eps) amplifies a gradient's last bits). So a perturbed run (every float
// value the spec defines moved by up to one ulp, perturbed_options: rounding
// noise at every op, independent between elements) measures that
// sensitivity, perturbed(T) = max |spec - perturbed| over T, and
//
//   tol(T) = max(tol(T), perturbed_k * perturbed(T))        (perturbed_k = 2)
//
// A value T it moves by more than cancel_ulps * epsilon(dtype) * scale(T)
// (64 by default: far more than rounding moves a well-conditioned value) is
// cancellation noise and gets k * perturbed(T) instead.
//
// A value computed from exactly one other placed value (a gradient's sum of
// squares) inherits its rounding: its relative tolerance tol(T)/scale(T) is
// at least inherit (2) times the source's own (so nothing compounds).
//
// An element matches when |plan - spec| <= tol(T); a NaN matches only a NaN.
// The verdict is MATCH when every element of every placed value does, else
// DIFFERS, naming the element with the largest error relative to its
// tolerance.
#pragma once
#include <string>
#include <vector>

#include "exec/runner.h"

namespace parity::exec {

struct CompareOptions {
  double k = 16;
  double floor_eps = 8;
  // A value that the perturbed run moves by more than this many epsilons of
  // its largest element is cancellation noise (see compare()).
  double cancel_ulps = 64;
  // Every value's tolerance is at least this many times its perturbed error.
  double perturbed_k = 2;
  // A value's relative tolerance is at least this many times that of the
  // placed values it is computed from (see compare()).
  double inherit = 2;
};

// RunOptions of the control run for a run with options `o`.
RunOptions control_options(const RunOptions& o);
// RunOptions of the perturbed run: the spec again with every float value it
// defines moved by up to one unit in the last place (RunOptions::perturb).
RunOptions perturbed_options(const RunOptions& o);

struct TensorStats {
  std::string spec_value;
  bool output = false;  // a spec output (else an input or intermediate)
  int64_t pieces = 0, elements = 0;
  double max_abs = 0, max_rel = 0, max_ulp = 0;
  double control = 0, scale = 0, tol = 0;
  double perturbed = 0;  // max |spec - perturbed run|
  bool cancels = false;  // tolerance taken from the perturbed run
  // The element with the largest |plan - spec| / tol.
  double worst_ratio = 0;
  std::vector<int64_t> worst_index;
  double worst_plan = 0, worst_spec = 0;
  std::string worst_where;
  bool ok = true;
};

struct Comparison {
  bool match = true;
  DType dtype = DType::f32;
  CompareOptions opt;
  std::vector<TensorStats> tensors;  // in order of first definition in the plan
  // The tensor holding the worst element (nullptr when nothing was compared).
  const TensorStats* worst() const;
  // `MATCH: ...` or `DIFFERS: <tensor>[index] ...`.
  std::string summary() const;
};

// Compares every piece with the spec's value at its coordinates. Throws
// ir::InvalidInput when a piece lies outside its spec value, names a value the
// spec does not define, or a spec output element is covered by no piece.
Comparison compare(const ir::Spec& spec, const std::vector<Piece>& pieces,
                   const Values& spec_values, const Values& control, DType dtype,
                   const CompareOptions& opt = {}, const Values* perturbed = nullptr);

// Distance in units in the last place of `dtype` between two values of it.
double ulp_distance(double a, double b, DType dtype);

}  // namespace parity::exec
