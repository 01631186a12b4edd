#include <cvc5/cvc5.h>

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "verify/smt.h"
#include "verify/smt_child.h"

namespace parity::verify {

namespace {

using cvc5::Kind;

class Cvc5Backend : public SmtBackend {
 public:
  const char* name() const override { return "cvc5"; }

  // In a child process (smt_child.h): cvc5 does not stop at its limit everywhere.
  SmtAnswer prove_equal(const TermTable& t, TermId a, TermId b, unsigned timeout_ms) override {
    return solve_in_child("cvc5", timeout_ms, [&] { return solve(t, a, b, timeout_ms); });
  }

 private:
  static SmtAnswer solve(const TermTable& t, TermId a, TermId b, unsigned timeout_ms) {
    SmtAnswer ans;
    try {
      cvc5::Solver s;
      s.setLogic("ALL");
      s.setOption("produce-models", "true");
      // Per-query limit: tlimit would bound the whole process.
      s.setOption("tlimit-per", std::to_string(timeout_ms));
      Enc enc{t, s, {}, {}, {}, {}};
      cvc5::Term ea = enc.real(a), eb = enc.real(b);
      for (auto& c : enc.side) s.assertFormula(c);
      s.assertFormula(s.mkTerm(Kind::DISTINCT, {ea, eb}));
      cvc5::Result r = s.checkSat();
      if (r.isUnsat()) {
        ans.status = SmtStatus::proved;
      } else if (r.isSat()) {
        ans.status = SmtStatus::refuted;
        for (auto& [idx, v] : enc.vars) {
          cvc5::Term val = s.getValue(v);
          double d = 0;
          if (val.isInt64Value()) d = static_cast<double>(val.getInt64Value());
          else if (val.isRealValue()) {
            std::string q = val.getRealValue();
            auto slash = q.find('/');
            d = slash == std::string::npos ? std::stod(q) : std::stod(q.substr(0, slash)) / std::stod(q.substr(slash + 1));
          }
          ans.model[idx] = d;
        }
      } else {
        ans.reason = "cvc5: " + r.toString();
      }
    } catch (const std::exception& e) {
      ans.reason = std::string("cvc5: ") + e.what();
    }
    return ans;
  }

  struct Enc {
    const TermTable& t;
    cvc5::Solver& s;
    std::unordered_map<TermId, cvc5::Term> memo;
    std::map<uint32_t, cvc5::Term> vars;
    std::map<std::string, cvc5::Term> funs;
    std::vector<cvc5::Term> side;

    cvc5::Term rat(const Rational& r) { return r.is_small() ? s.mkReal(r.num(), r.den()) : s.mkReal(r.str()); }

    cvc5::Term fn(const std::string& name, const std::vector<cvc5::Term>& args) {
      auto it = funs.find(name);
      if (it == funs.end()) {
        std::vector<cvc5::Sort> dom(args.size(), s.getRealSort());
        it = funs.emplace(name, s.declareFun(name, dom, s.getRealSort())).first;
      }
      std::vector<cvc5::Term> ch{it->second};
      ch.insert(ch.end(), args.begin(), args.end());
      return s.mkTerm(Kind::APPLY_UF, ch);
    }

    cvc5::Term var(const Node& n) {
      uint32_t idx = static_cast<uint32_t>(n.aux);
      if (auto it = vars.find(idx); it != vars.end()) return it->second;
      const VarInfo& vi = t.vars()[idx];
      cvc5::Term e = s.mkConst(vi.integer ? s.getIntegerSort() : s.getRealSort(), vi.name);
      if (vi.integer) {
        std::vector<cvc5::Term> in{s.mkTerm(Kind::AND, {s.mkTerm(Kind::GEQ, {e, s.mkInteger(vi.lo)}),
                                                        s.mkTerm(Kind::LT, {e, s.mkInteger(vi.hi)})})};
        for (int64_t x : vi.extra) in.push_back(s.mkTerm(Kind::EQUAL, {e, s.mkInteger(x)}));
        side.push_back(in.size() == 1 ? in[0] : s.mkTerm(Kind::OR, in));
      }
      vars.emplace(idx, e);
      return e;
    }

    cvc5::Term integer(TermId id) {
      const Node& n = t.node(id);
      if (n.kind == TK::IntVar) return var(n);
      if (n.kind == TK::Const) return s.mkInteger(n.nums[0].trunc().str());
      return s.mkTerm(Kind::TO_INTEGER, {real(id)});
    }

    cvc5::Term real(TermId id) {
      if (auto it = memo.find(id); it != memo.end()) return it->second;
      const Node& n = t.node(id);
      cvc5::Term r;
      switch (n.kind) {
        case TK::Const: r = rat(n.nums[0]); break;
        case TK::Var: r = var(n); break;
        case TK::IntVar: r = s.mkTerm(Kind::TO_REAL, {var(n)}); break;
        case TK::Sum: {
          std::vector<cvc5::Term> parts{rat(n.nums.back())};
          for (size_t k = 0; k < n.args.size(); ++k) parts.push_back(s.mkTerm(Kind::MULT, {rat(n.nums[k]), real(n.args[k])}));
          r = s.mkTerm(Kind::ADD, parts);
          break;
        }
        case TK::Prod: {
          std::vector<cvc5::Term> num{s.mkReal(1)}, den{s.mkReal(1)};
          for (size_t k = 0; k < n.args.size(); ++k) {
            int64_t e = n.nums[k].num();
            cvc5::Term f = real(n.args[k]);
            for (int64_t j = 0; j < (e < 0 ? -e : e); ++j) (e < 0 ? den : num).push_back(f);
          }
          cvc5::Term nt = num.size() == 1 ? num[0] : s.mkTerm(Kind::MULT, num);
          r = den.size() == 1 ? nt : s.mkTerm(Kind::DIVISION, {nt, s.mkTerm(Kind::MULT, den)});
          break;
        }
        case TK::App: {
          const auto f = static_cast<ir::Fn>(n.aux);
          r = fn(ir::fn_name(f) == std::string("gelu'") ? "gelu_grad" : ir::fn_name(f), {real(n.args[0])});
          // The ranges of the real functions (a model outside them is no
          // model of the plan): a clip coefficient's norm + eps is positive.
          if (f == ir::Fn::exp) side.push_back(s.mkTerm(Kind::GT, {r, s.mkReal(0)}));
          if (f == ir::Fn::sqrt) side.push_back(s.mkTerm(Kind::GEQ, {r, s.mkReal(0)}));
          break;
        }
        case TK::Max:
        case TK::Min: {
          r = real(n.args[0]);
          for (size_t k = 1; k < n.args.size(); ++k) {
            cvc5::Term x = real(n.args[k]);
            r = s.mkTerm(Kind::ITE, {s.mkTerm(n.kind == TK::Max ? Kind::GT : Kind::LT, {x, r}), x, r});
          }
          break;
        }
        case TK::Ind:
          r = s.mkTerm(Kind::ITE, {s.mkTerm(Kind::EQUAL, {integer(n.args[0]), s.mkInteger(n.nums[0].num())}), s.mkReal(1), s.mkReal(0)});
          break;
        case TK::PowC: r = fn("pow_" + std::to_string(n.nums[0].num()) + "_" + std::to_string(n.nums[0].den()), {real(n.args[0])}); break;
        case TK::TopK: {
          std::vector<cvc5::Term> args;
          for (TermId a : n.args) args.push_back(real(a));
          r = fn("topk" + n.nums[0].str() + "_" + std::to_string(n.aux) + "_of" + std::to_string(n.args.size()), args);
          break;
        }
      }
      memo.emplace(id, r);
      return r;
    }
  };
};

}  // namespace

std::unique_ptr<SmtBackend> make_cvc5() { return std::make_unique<Cvc5Backend>(); }

}  // namespace parity::verify
