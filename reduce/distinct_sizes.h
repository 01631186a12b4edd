// Sizes that differ as given must differ in the reduced instance where a plan
// can read one for the other: an offset `$tp*(H/tp)` written for `$tp*(V/tp)`
// is right once H and V both shrink to 4 (docs/soundness.md, "Sizes that
// coincide after the reduction").
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace parity::reduce {

// The size terms of a case: `index` are those a value is computed from (the
// coefficients and constant parts of offsets and coordinate expressions:
// `V/tp` in `$tp*(V/tp)`); `all` are every coordinate-free term of every
// expression (shapes, placements, attributes; `index` included) and every
// dim and axis symbol. A shape is checked as given, so a wrong size in a
// shape is INVALID whatever the reduction does; an index is not.
//
// Only an index term and a term that differs from it by one symbol renamed
// (`H/tp` and `V/tp`, `B/dp/tp` and `B/dp/M`, `dp` and `tp`) and by value as
// given are a pair to keep apart: that is the slip a plan makes (a wrong
// size in one place), and the value it was meant to have is the extent of a
// shard somewhere in the case. Keeping every pair of differing sizes apart
// would need as many distinct reduced values as there are sizes. An index
// that is one dim alone (`offset: DN`) pairs only with the dims of its own op
// (`size: DR`); pairing it with every size would keep every size of the case
// apart from it (docs/soundness.md says what is left uncovered). One axis
// alone (`factor: tp`) pairs with every other axis.
struct SizeTerms {
  struct Term {
    ir::DimExpr expr;
    int64_t given = 0;
    bool index = false;
    std::set<std::string> near;  // an index that is one size alone: the sizes of its ops
  };
  std::vector<Term> terms;  // distinct texts; those that do not evaluate as given are left out
  std::vector<std::pair<size_t, size_t>> pairs;  // (index term, its variant), differing as given
  // (index term, a term of the same op's attributes), differing as given:
  // with `all_pairs`, kept in their order too (count_coincidences).
  std::vector<std::pair<size_t, size_t>> ordered;
  // A slice's window edge (its offset, and offset plus size) and a position
  // along the same dim where the layout of its input changes (a pad's
  // `before` and its end, a concatenation's seams; through a few pads,
  // slices and concatenations): which region the window reads must not
  // change, so their order as given (before, at, after) is kept in every
  // instance (docs/soundness.md, "Sizes that coincide after the
  // reduction"). Coordinate-free edges and positions only.
  std::vector<std::pair<Term, Term>> regions;
  // Dims renamed between an index term and a variant equal to it as given
  // (`S/tp` and `V/tp` with S = V = 32): lowered together, so that a plan
  // reading one for the other is as right reduced as it is given.
  std::vector<std::pair<std::string, std::string>> ties;
};

// `all_pairs`: every index term pairs with every term that differs from it
// as given (Options::all_pairs).
SizeTerms size_terms(const ir::Case& c, const ir::Bindings& given, bool all_pairs = false);

// A pair whose two terms have one value under `b`, or, with `ordered`, whose
// order under `b` is the reverse of their order as given.
struct Coincidence {
  const SizeTerms::Term* index = nullptr;
  const SizeTerms::Term* other = nullptr;
  int64_t value = 0;        // the index term's, under `b`
  int64_t other_value = 0;  // the other's (== value unless the order is reversed)
  bool region = false;      // a window edge and a layout position (SizeTerms::regions)
  std::string str() const;
};

// How many pairs coincide under `b` (a term that does not evaluate under `b`
// coincides with nothing); `first` gets one of them. With `ordered`, a pair
// of `t.ordered` whose order is reversed, or whose values are equal, counts
// too: a slice at `$mb*M` where `$mb*(B/dp/cp/M)` is meant, with M = 32 < 64
// as given, is in bounds there and at every reduced size that keeps M the
// smaller, and out of bounds (so no instance to look at) where M is larger.
// Every pair of `t.regions` whose order under `b` differs from its order as
// given counts, whatever `ordered` says.
size_t count_coincidences(const SizeTerms& t, const ir::Bindings& b,
                          std::optional<Coincidence>* first = nullptr, bool ordered = false);

// How `e` moves when the symbol `x` grows, every symbol positive: 1 up, -1
// down, 0 not at all, 2 either way or unknown (a remainder, a product of
// parts that move apart).
int direction(const ir::DimExpr& e, const std::string& x);

}  // namespace parity::reduce
