#include "ir/dim_expr.h"

#include <algorithm>
#include <cctype>

#include "ir/error.h"

namespace parity::ir {

DimExpr::DimExpr(int64_t v) : node_(std::make_shared<Node>(Node{Kind::Const, v, {}, {}, {}})) {}

DimExpr DimExpr::sym(const std::string& name) {
  return DimExpr(std::make_shared<Node>(Node{Kind::Sym, 0, name, {}, {}}));
}

DimExpr DimExpr::binary(Kind k, const DimExpr& a, const DimExpr& b) {
  // Fold constants so printed shapes stay readable (`2*4` prints `8`).
  if (a.is_const() && b.is_const()) {
    int64_t x = a.const_value(), y = b.const_value(), r;
    switch (k) {
      case Kind::Add:
        if (!__builtin_add_overflow(x, y, &r)) return DimExpr(r);
        break;
      case Kind::Sub:
        if (!__builtin_sub_overflow(x, y, &r)) return DimExpr(r);
        break;
      case Kind::Mul:
        if (!__builtin_mul_overflow(x, y, &r)) return DimExpr(r);
        break;
      case Kind::Div:
        if (y != 0 && !(x == INT64_MIN && y == -1) && x % y == 0) return DimExpr(x / y);
        break;
      case Kind::Mod:
        if (y != 0 && !(x == INT64_MIN && y == -1)) {  // as evaluation: never negative
          r = x % y;
          return DimExpr(r < 0 ? r + (y < 0 ? -y : y) : r);
        }
        break;
      default: break;
    }
  }
  if (k == Kind::Mul) {
    if (a.is_const() && a.const_value() == 1) return b;
    if (b.is_const() && b.const_value() == 1) return a;
  }
  if ((k == Kind::Div) && b.is_const() && b.const_value() == 1) return a;
  if ((k == Kind::Add || k == Kind::Sub) && b.is_const() && b.const_value() == 0) return a;
  if (k == Kind::Add && a.is_const() && a.const_value() == 0) return b;
  return DimExpr(std::make_shared<Node>(Node{k, 0, {}, a.node_, b.node_}));
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Add, a, b); }
DimExpr operator-(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Sub, a, b); }
DimExpr operator*(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Mul, a, b); }
DimExpr operator/(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Div, a, b); }
DimExpr operator%(const DimExpr& a, const DimExpr& b) { return DimExpr::binary(DimExpr::Kind::Mod, a, b); }

// On nodes, not DimExprs: wrapping each operand would copy a shared_ptr (two
// atomic operations) per node, and validation and stage keys evaluate often.
bool DimExpr::eval_node(const Node& n, const Bindings& b, int64_t& out) {
  switch (n.kind) {
    case Kind::Const: out = n.value; return true;
    case Kind::Sym: {
      auto it = b.find(n.name);
      if (it == b.end()) return false;
      out = it->second;
      return true;
    }
    case Kind::Neg: {
      int64_t v;
      if (!eval_node(*n.lhs, b, v)) return false;
      if (v == INT64_MIN) return false;
      out = -v;
      return true;
    }
    default: break;
  }
  int64_t x, y;
  if (!eval_node(*n.lhs, b, x) || !eval_node(*n.rhs, b, y)) return false;
  switch (n.kind) {
    case Kind::Add: return !__builtin_add_overflow(x, y, &out);
    case Kind::Sub: return !__builtin_sub_overflow(x, y, &out);
    case Kind::Mul: return !__builtin_mul_overflow(x, y, &out);
    case Kind::Div:
      if (y == 0 || (x == INT64_MIN && y == -1) || x % y != 0) return false;
      out = x / y;
      return true;
    case Kind::Mod:
      if (y == 0 || (x == INT64_MIN && y == -1)) return false;
      out = x % y;
      if (out < 0) out += y < 0 ? -y : y;
      return true;
    default: return false;
  }
}

bool DimExpr::try_eval(const Bindings& b, int64_t& out) const { return eval_node(*node_, b, out); }

std::shared_ptr<const DimExpr::Node> DimExpr::bind_node(const std::shared_ptr<const Node>& n, const Bindings& b) {
  switch (n->kind) {
    case Kind::Const: return n;
    case Kind::Sym: {
      auto it = b.find(n->name);
      return it == b.end() ? n : std::make_shared<Node>(Node{Kind::Const, it->second, {}, {}, {}});
    }
    default: break;
  }
  auto l = bind_node(n->lhs, b);
  auto r = n->rhs ? bind_node(n->rhs, b) : nullptr;
  if (l == n->lhs && r == n->rhs) return n;
  auto m = std::make_shared<Node>(Node{n->kind, 0, {}, l, r});
  // Folded by evaluation itself, so a fold never changes a value or a failure.
  static const Bindings kNone;
  int64_t v;
  if (l->kind == Kind::Const && (!r || r->kind == Kind::Const) && eval_node(*m, kNone, v))
    return std::make_shared<Node>(Node{Kind::Const, v, {}, {}, {}});
  return m;
}

DimExpr DimExpr::bind(const Bindings& b) const { return DimExpr(bind_node(node_, b)); }

int64_t DimExpr::eval(const Bindings& b) const {
  int64_t v;
  if (try_eval(b, v)) return v;
  // Find the precise reason for the message.
  std::set<std::string> syms;
  symbols(syms);
  for (const auto& s : syms)
    if (!b.count(s)) throw InvalidInput("dim expression '" + str() + "': symbol '" + s + "' is not bound");
  throw InvalidInput("dim expression '" + str() + "': inexact division, division by zero or overflow under the bindings");
}

int DimExpr::degree_in(const std::string& s) const {
  const Node& n = *node_;
  switch (n.kind) {
    case Kind::Const: return 0;
    case Kind::Sym: return n.name == s ? 1 : 0;
    case Kind::Neg: return lhs().degree_in(s);
    case Kind::Add:
    case Kind::Sub: return std::max(lhs().degree_in(s), rhs().degree_in(s));
    case Kind::Mul: return std::min(99, lhs().degree_in(s) + rhs().degree_in(s));
    case Kind::Div:
    case Kind::Mod: return lhs().degree_in(s) || rhs().degree_in(s) ? 99 : 0;
  }
  return 99;
}

void DimExpr::symbols(std::set<std::string>& out) const {
  if (node_->kind == Kind::Sym) out.insert(node_->name);
  if (node_->lhs) DimExpr(node_->lhs).symbols(out);
  if (node_->rhs) DimExpr(node_->rhs).symbols(out);
}

namespace {
int prec(DimExpr::Kind k) {
  switch (k) {
    case DimExpr::Kind::Add:
    case DimExpr::Kind::Sub: return 1;
    case DimExpr::Kind::Mul:
    case DimExpr::Kind::Div:
    case DimExpr::Kind::Mod: return 2;
    default: return 3;
  }
}
}  // namespace

std::string DimExpr::str() const {
  const Node& n = *node_;
  switch (n.kind) {
    case Kind::Const: return std::to_string(n.value);
    case Kind::Sym: return n.name;
    case Kind::Neg: return "-" + DimExpr(n.lhs).str();
    default: break;
  }
  DimExpr l(n.lhs), r(n.rhs);
  std::string ls = l.str(), rs = r.str();
  if (prec(l.kind()) < prec(n.kind)) ls = "(" + ls + ")";
  // Right operand of a non-commutative or equal-precedence op needs parentheses.
  // A right operand of equal precedence keeps its parentheses: `a*(b/c)` and
  // `a*b/c` differ under exact division, and printing must round-trip exactly.
  if (prec(r.kind()) <= prec(n.kind)) rs = "(" + rs + ")";
  const char* op = n.kind == Kind::Add ? "+" : n.kind == Kind::Sub ? "-" : n.kind == Kind::Mul ? "*" : n.kind == Kind::Div ? "/" : "%";
  return ls + op + rs;
}

namespace {
struct Parser {
  const std::string& s;
  size_t i = 0;
  [[noreturn]] void fail(const std::string& what) {
    throw InvalidInput("dim expression '" + s + "': " + what + " at column " + std::to_string(i + 1));
  }
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  DimExpr expr() {
    DimExpr a = term();
    for (;;) {
      ws();
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        char c = s[i++];
        DimExpr b = term();
        a = c == '+' ? a + b : a - b;
      } else {
        return a;
      }
    }
  }
  DimExpr term() {
    DimExpr a = unary();
    for (;;) {
      ws();
      if (i < s.size() && (s[i] == '*' || s[i] == '/' || s[i] == '%')) {
        char c = s[i++];
        DimExpr b = unary();
        a = c == '*' ? a * b : c == '/' ? a / b : a % b;
      } else {
        return a;
      }
    }
  }
  DimExpr unary() {
    ws();
    if (i < s.size() && s[i] == '-') {
      ++i;
      return DimExpr(int64_t{0}) - atom();
    }
    return atom();
  }
  DimExpr atom() {
    ws();
    if (i >= s.size()) fail("unexpected end");
    char c = s[i];
    if (c == '(') {
      ++i;
      DimExpr e = expr();
      ws();
      if (i >= s.size() || s[i] != ')') fail("expected ')'");
      ++i;
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (v > (INT64_MAX - 9) / 10) fail("integer too large");
        v = v * 10 + (s[i++] - '0');
      }
      return DimExpr(v);
    }
    if (c == '$' || c == '_' || std::isalpha(static_cast<unsigned char>(c))) {
      size_t start = i++;
      while (i < s.size() && (s[i] == '_' || std::isalnum(static_cast<unsigned char>(s[i])))) ++i;
      if (c == '$' && i == start + 1) fail("expected an axis name after '$'");
      return DimExpr::sym(s.substr(start, i - start));
    }
    fail(std::string("unexpected character '") + c + "'");
  }
};
}  // namespace

DimExpr DimExpr::parse(const std::string& text) {
  if (text.size() > 4096) throw InvalidInput("dim expression longer than 4096 characters");
  Parser p{text};
  DimExpr e = p.expr();
  p.ws();
  if (p.i != text.size()) p.fail("trailing text");
  return e;
}

}  // namespace parity::ir
