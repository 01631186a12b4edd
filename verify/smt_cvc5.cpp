#include <cvc5/cvc5.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "verify/smt.h"

namespace parity::verify {

namespace {

using cvc5::Kind;

class Cvc5Backend : public SmtBackend {
 public:
  const char* name() const override { return "cvc5"; }

  // cvc5's per-query time limit is not checked everywhere (a norm written
  // pow(x, 0.5) ran 15 minutes and 3.6 GB past a 10 s limit), and it has
  // no interrupt: each query runs in a child process that is killed when
  // the limit and a grace period have passed. Where no child can be made,
  // the query runs here.
  SmtAnswer prove_equal(const TermTable& t, TermId a, TermId b, unsigned timeout_ms) override {
    int fds[2];
    if (::pipe(fds) != 0) return solve(t, a, b, timeout_ms);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return solve(t, a, b, timeout_ms);
    }
    if (pid == 0) {
      ::close(fds[0]);
      const std::string out = encode(solve(t, a, b, timeout_ms));
      for (size_t at = 0; at < out.size();) {
        const ssize_t k = ::write(fds[1], out.data() + at, out.size() - at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        at += static_cast<size_t>(k);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms + std::max(2000u, timeout_ms / 2));
    std::string buf;
    bool killed = false;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        ::kill(pid, SIGKILL);
        killed = true;
        break;
      }
      pollfd p{fds[0], POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      char tmp[65536];
      const ssize_t k = ::read(fds[0], tmp, sizeof tmp);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;
      buf.append(tmp, static_cast<size_t>(k));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    SmtAnswer ans;
    if (killed) {
      ans.reason = "cvc5: no answer within the time limit (" + std::to_string(timeout_ms) + " ms); stopped";
    } else if (!decode(buf, ans)) {
      ans = SmtAnswer{};
      ans.reason = WIFSIGNALED(status) ? "cvc5: the solver died (signal " + std::to_string(WTERMSIG(status)) + ")"
                                       : "cvc5: no answer";
    }
    return ans;
  }

 private:
  // status, reason, then (variable, value) pairs; all in this machine's byte order.
  static std::string encode(const SmtAnswer& a) {
    std::string s;
    auto put = [&s](const void* p, size_t n) { s.append(static_cast<const char*>(p), n); };
    const int32_t st = static_cast<int32_t>(a.status);
    const uint64_t n = a.reason.size(), m = a.model.size();
    put(&st, sizeof st);
    put(&n, sizeof n);
    s += a.reason;
    put(&m, sizeof m);
    for (const auto& [k, v] : a.model) {
      put(&k, sizeof k);
      put(&v, sizeof v);
    }
    return s;
  }
  static bool decode(const std::string& s, SmtAnswer& a) {
    size_t at = 0;
    auto get = [&](void* p, size_t n) {
      if (n > s.size() - at) return false;
      std::memcpy(p, s.data() + at, n);
      at += n;
      return true;
    };
    int32_t st = 0;
    uint64_t n = 0, m = 0;
    if (!get(&st, sizeof st) || st < 0 || st > 2 || !get(&n, sizeof n) || n > s.size() - at) return false;
    a.status = static_cast<SmtStatus>(st);
    a.reason = s.substr(at, n);
    at += n;
    if (!get(&m, sizeof m)) return false;
    for (uint64_t i = 0; i < m; ++i) {
      uint32_t k = 0;
      double v = 0;
      if (!get(&k, sizeof k) || !get(&v, sizeof v)) return false;
      a.model[k] = v;
    }
    return at == s.size();
  }

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

 private:
  struct Enc {
    const TermTable& t;
    cvc5::Solver& s;
    std::unordered_map<TermId, cvc5::Term> memo;
    std::map<uint32_t, cvc5::Term> vars;
    std::map<std::string, cvc5::Term> funs;
    std::vector<cvc5::Term> side;

    cvc5::Term rat(const Rational& r) { return s.mkReal(r.num(), r.den()); }

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
      if (n.kind == TK::Const) return s.mkInteger(n.nums[0].num() / n.nums[0].den());
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
