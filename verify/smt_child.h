// Runs one solver query in a child process that is killed once its time
// limit and a grace period have passed. Neither solver stops reliably at
// its own limit: cvc5 does not check `tlimit-per` everywhere (a norm written
// pow(x, 0.5) ran 15 minutes and 3.6 GB past a 10 s limit) and has no
// interrupt; z3 ignores its interrupt inside some nonlinear procedures (a
// clip coefficient written 1/max(...) ran 30 minutes, 17 GB). A query that is
// stopped is UNKNOWN; a gate always ends. Where no child can be made, the
// query runs in this process.
#pragma once
#include <functional>

#include "verify/smt.h"

namespace parity::verify {

SmtAnswer solve_in_child(const char* solver, unsigned timeout_ms,
                         const std::function<SmtAnswer()>& solve);

}  // namespace parity::verify
