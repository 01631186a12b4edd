#include <z3++.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "verify/smt.h"
#include "verify/smt_child.h"

namespace parity::verify {

namespace {

class Z3Backend : public SmtBackend {
 public:
  const char* name() const override { return "z3"; }

  // In a child process (smt_child.h): z3 ignores its interrupt inside some
  // nonlinear procedures; the watchdog below still stops it where it can.
  SmtAnswer prove_equal(const TermTable& t, TermId a, TermId b, unsigned timeout_ms) override {
    return solve_in_child("z3", timeout_ms, [&] { return query(t, a, b, timeout_ms, false); });
  }
  SmtAnswer find_defined_model(const TermTable& t, TermId a, TermId b, unsigned timeout_ms) override {
    SmtAnswer ans = solve_in_child("z3", timeout_ms, [&] { return query(t, a, b, timeout_ms, true); });
    if (ans.status == SmtStatus::proved) ans.status = SmtStatus::unknown;  // only models count
    return ans;
  }

 private:
  SmtAnswer query(const TermTable& t, TermId a, TermId b, unsigned timeout_ms, bool defined_only) {
    z3::context ctx;
    SmtAnswer ans;
    // The time limit is ours, not Z3's `timeout` parameter: Z3's timer
    // (scoped_timer, Z3 4.8.x) can deadlock when it fires at the moment the
    // check ends, which hung a run. A watchdog interrupts the context; it
    // covers asserting too, which alone took minutes on a large nonlinear
    // obligation.
    Watchdog dog(ctx, timeout_ms);
    try {
      Enc enc{t, ctx, {}, {}, {}, {}};
      z3::solver s(ctx);
      z3::expr ea = enc.real(a), eb = enc.real(b);
      for (auto& c : enc.side) s.add(c);
      if (defined_only)
        for (auto& d : enc.dens) s.add(d != ctx.real_val(0));
      s.add(ea != eb);
      z3::check_result r = dog.fired() ? z3::unknown : s.check();
      // An interrupt that raced with a finished check may spoil the model.
      if (dog.stop() && r != z3::unsat) r = z3::unknown;
      switch (r) {
        case z3::unsat: ans.status = SmtStatus::proved; break;
        case z3::sat: {
          ans.status = SmtStatus::refuted;
          z3::model m = s.get_model();
          for (auto& [idx, e] : enc.vars) {
            z3::expr v = m.eval(e, true);
            std::string str = Z3_get_numeral_decimal_string(ctx, v, 17);
            if (!str.empty() && str.back() == '?') str.pop_back();
            try {
              ans.model[idx] = std::stod(str);
            } catch (...) {
              ans.model[idx] = 0;
            }
          }
          break;
        }
        default: ans.reason = dog.fired() ? "z3: timeout" : "z3: " + s.reason_unknown(); break;
      }
    } catch (const z3::exception& e) {
      // An interrupt while asserting surfaces as an exception.
      ans.status = SmtStatus::unknown;
      ans.model.clear();
      ans.reason = dog.stop() ? std::string("z3: timeout") : std::string("z3: ") + e.msg();
    }
    return ans;
  }

 private:
  // Interrupts `ctx` after `ms` unless stopped first; stopped (and joined)
  // at the latest when it goes out of scope, before the context does.
  class Watchdog {
   public:
    Watchdog(z3::context& ctx, unsigned ms)
        : thread_([this, &ctx, ms] {
            std::unique_lock<std::mutex> lk(m_);
            if (cv_.wait_for(lk, std::chrono::milliseconds(ms), [this] { return done_; })) return;
            fired_ = true;
            // Again until stopped: Z3 clears an interrupt that arrives
            // before `check` starts.
            do ctx.interrupt();
            while (!cv_.wait_for(lk, std::chrono::milliseconds(2), [this] { return done_; }));
          }) {}
    ~Watchdog() { stop(); }
    // Stops the watchdog; whether it fired.
    bool stop() {
      {
        std::lock_guard<std::mutex> lk(m_);
        done_ = true;
      }
      cv_.notify_all();
      if (thread_.joinable()) thread_.join();
      return fired_;
    }
    bool fired() const { return fired_; }

   private:
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    std::atomic<bool> fired_{false};
    std::thread thread_;
  };

  struct Enc {
    const TermTable& t;
    z3::context& ctx;
    std::unordered_map<TermId, z3::expr> memo;
    std::map<uint32_t, z3::expr> vars;
    std::vector<z3::expr> side;
    std::vector<z3::expr> dens;  // every denominator of a product

    z3::expr rat(const Rational& r) { return ctx.real_val(r.str().c_str()); }

    z3::expr fn(const std::string& name, const std::vector<z3::expr>& args) {
      z3::sort_vector dom(ctx);
      for (size_t i = 0; i < args.size(); ++i) dom.push_back(ctx.real_sort());
      z3::func_decl f = ctx.function(name.c_str(), dom, ctx.real_sort());
      z3::expr_vector v(ctx);
      for (auto& a : args) v.push_back(a);
      return f(v);
    }

    // Integer-valued terms (ids) stay Int so that Ind compares exactly.
    z3::expr integer(TermId id) {
      const Node& n = t.node(id);
      if (n.kind == TK::IntVar) return var(n);
      if (n.kind == TK::Const) return ctx.int_val(n.nums[0].trunc().str().c_str());
      z3::expr r = real(id);
      return z3::expr(ctx, Z3_mk_real2int(ctx, r));
    }

    z3::expr var(const Node& n) {
      uint32_t idx = static_cast<uint32_t>(n.aux);
      if (auto it = vars.find(idx); it != vars.end()) return it->second;
      const VarInfo& vi = t.vars()[idx];
      z3::expr e = vi.integer ? ctx.int_const(vi.name.c_str()) : ctx.real_const(vi.name.c_str());
      if (vi.integer) {
        z3::expr in = e >= ctx.int_val(vi.lo) && e < ctx.int_val(vi.hi);
        for (int64_t x : vi.extra) in = in || e == ctx.int_val(x);
        side.push_back(in);
      }
      vars.emplace(idx, e);
      return e;
    }

    z3::expr real(TermId id) {
      if (auto it = memo.find(id); it != memo.end()) return it->second;
      const Node& n = t.node(id);
      z3::expr r(ctx);
      switch (n.kind) {
        case TK::Const: r = rat(n.nums[0]); break;
        case TK::Var: r = var(n); break;
        case TK::IntVar: r = z3::to_real(var(n)); break;
        case TK::Sum: {
          r = rat(n.nums.back());
          for (size_t k = 0; k < n.args.size(); ++k) r = r + rat(n.nums[k]) * real(n.args[k]);
          break;
        }
        case TK::Prod: {
          z3::expr num = ctx.real_val(1), den = ctx.real_val(1);
          bool has_den = false;
          for (size_t k = 0; k < n.args.size(); ++k) {
            int64_t e = n.nums[k].num();
            z3::expr f = real(n.args[k]);
            for (int64_t j = 0; j < (e < 0 ? -e : e); ++j) {
              if (e < 0) {
                den = den * f;
                has_den = true;
              } else {
                num = num * f;
              }
            }
          }
          if (has_den) dens.push_back(den);
          r = has_den ? num / den : num;
          break;
        }
        case TK::App: {
          const auto f = static_cast<ir::Fn>(n.aux);
          r = fn(ir::fn_name(f), {real(n.args[0])});
          // The ranges of the real functions (a model outside them is no
          // model of the plan): a clip coefficient's norm + eps is positive.
          if (f == ir::Fn::exp) side.push_back(r > ctx.real_val(0));
          if (f == ir::Fn::sqrt) side.push_back(r >= ctx.real_val(0));
          break;
        }
        case TK::Max:
        case TK::Min: {
          r = real(n.args[0]);
          for (size_t k = 1; k < n.args.size(); ++k) {
            z3::expr x = real(n.args[k]);
            r = n.kind == TK::Max ? z3::ite(x > r, x, r) : z3::ite(x < r, x, r);
          }
          break;
        }
        case TK::Ind:
          r = z3::ite(integer(n.args[0]) == ctx.int_val(n.nums[0].num()), ctx.real_val(1), ctx.real_val(0));
          break;
        case TK::PowC: r = fn("pow_" + n.nums[0].str(), {real(n.args[0])}); break;
        case TK::TopK: {
          std::vector<z3::expr> args;
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

std::unique_ptr<SmtBackend> make_z3() { return std::make_unique<Z3Backend>(); }

}  // namespace parity::verify
