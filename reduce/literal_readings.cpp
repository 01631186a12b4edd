#include "reduce/literal_readings.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "reduce/walk.h"

namespace parity::reduce {

namespace {

// A scaling literal (`factor`, `value`), also when written as an integer.
std::optional<double> scaling_literal(const ir::Op& op, const std::string& key, const ir::Attr& a) {
  if (key != "factor" && key != "value") return std::nullopt;
  return float_literal(op, key, a);
}

struct Size {
  std::string text;  // "B=8192", "dp*ep=8192"
  double given, reduced;
};

}  // namespace

std::vector<Reading> power_readings(const ir::Case& given, const Result& r) {
  std::vector<Reading> out;
  if (!given.spec || !r.changed) return out;
  // Every size as given, and the ones the reduction changed.
  std::map<std::string, std::pair<int64_t, int64_t>> all;
  for (const auto& [k, v] : given.plan.dims) all[k] = {v, v};
  for (const auto& [k, v] : given.spec->dims) all[k] = {v, v};
  for (const auto& a : given.plan.mesh.axes) all[a.name] = {a.size, a.size};
  for (const auto& [k, v] : r.dims) all[k] = v;
  for (const auto& m : r.axes) all[m.axis] = {m.from, m.to};
  std::vector<Size> qs;
  for (const auto& [x, xv] : all) {
    if (xv.first == xv.second) continue;
    qs.push_back({x + "=" + std::to_string(xv.first), static_cast<double>(xv.first),
                  static_cast<double>(xv.second)});
    for (const auto& [y, yv] : all)
      if (y != x && !(yv.first != yv.second && y < x))  // a pair of changed sizes once
        qs.push_back({x + "*" + y + "=" + std::to_string(xv.first * yv.first),
                      static_cast<double>(xv.first * yv.first),
                      static_cast<double>(xv.second * yv.second)});
  }
  if (qs.empty()) return out;
  // The spec's own scaling constants (0.02 for an aux-loss coefficient) and
  // a norm's eps, and 1.
  std::set<double> cs{1.0};
  std::map<std::string, const ir::Op*> spec_op;
  walk_ops(given.spec->graph, [&](const ir::Op& op) {
    if (!op.results.empty()) spec_op.emplace(op.results[0], &op);
    for (const auto& [k, a] : op.attrs) {
      const std::optional<double> x = k == "eps" && std::holds_alternative<double>(a)
                                          ? std::optional<double>(std::get<double>(a))
                                          : scaling_literal(op, k, a);
      if (x && std::isfinite(*x) && *x != 0 && std::fabs(*x) != 1) cs.insert(std::fabs(*x));
    }
  });
  std::map<double, std::vector<std::pair<std::string, double>>> memo;  // literal -> its readings
  for (const auto& prog : given.plan.programs)
    walk_ops(prog.graph, [&](const ir::Op& op) {
      if (op.results.empty()) return;
      for (const auto& [key, attr] : op.attrs) {
        const std::optional<double> x = scaling_literal(op, key, attr);
        if (!x || !std::isfinite(*x) || *x == 0 || std::fabs(*x) == 1) continue;
        // An op the spec has with the same literal computes the same on both sides.
        if (auto it = spec_op.find(op.results[0]);
            it != spec_op.end() && it->second->kind == op.kind)
          if (const ir::Attr* b = it->second->attr(key))
            if (auto y = scaling_literal(*it->second, key, *b); y && *y == *x) continue;
        const double a = std::fabs(*x);
        Reading rd;
        if (auto m = memo.find(*x); m != memo.end()) {
          rd.as = m->second;
        } else {
          for (const double c : cs)
            for (const auto& q : qs)
              for (const double k : {2.0, -2.0, 1.0, -1.0, 0.5}) {
                // q and 1/q are pinned by the reduction; sqrt(q) is read
                // alone (a constant times it meets literals by accident).
                if (c == 1 ? (k == 1 || k == -1) : k == 0.5) continue;
                const double t = c * std::pow(q.given, k);
                if (!(std::fabs(a - t) <= 1e-9 * t)) continue;
                const double v = std::copysign(c * std::pow(q.reduced, k), *x);
                if (v == *x || rd.as.size() >= 4) continue;
                bool seen = false;
                for (const auto& [t2, v2] : rd.as) seen |= v2 == v;
                if (seen) continue;
                char buf[160];
                std::snprintf(buf, sizeof buf, "%.6g*q^%g with %s", c, k, q.text.c_str());
                rd.as.push_back({buf, v});
              }
          memo.emplace(*x, rd.as);
        }
        if (rd.as.empty()) continue;
        rd.program = prog.name;
        rd.result = op.results[0];
        rd.attr = key;
        rd.value = *x;
        out.push_back(std::move(rd));
      }
    });
  return out;
}

}  // namespace parity::reduce
