// SMT back ends behind one interface. A query asks whether two terms are equal
// for every value of the variables and every interpretation of the
// uninterpreted functions (exp, log, rsqrt, ...).
#pragma once
#include <map>
#include <memory>
#include <string>

#include "verify/term.h"

namespace parity::verify {

enum class SmtStatus { proved, refuted, unknown };

struct SmtAnswer {
  SmtStatus status = SmtStatus::unknown;
  std::map<uint32_t, double> model;  // variable index -> value (refuted)
  std::string reason;                // unknown: timeout, incomplete, ...
};

class SmtBackend {
 public:
  virtual ~SmtBackend() = default;
  virtual const char* name() const = 0;
  virtual SmtAnswer prove_equal(const TermTable& t, TermId a, TermId b, unsigned timeout_ms) = 0;
  // A model of a != b with every denominator nonzero, or unknown: asked when
  // a model of prove_equal does not reproduce with the real functions (a
  // division by zero is a free value to the solver, a NaN to the plan). Only
  // its models count (re-checked concretely); "proved" here proves nothing.
  virtual SmtAnswer find_defined_model(const TermTable&, TermId, TermId, unsigned) { return {}; }
};

std::unique_ptr<SmtBackend> make_z3();
std::unique_ptr<SmtBackend> make_cvc5();

}  // namespace parity::verify
