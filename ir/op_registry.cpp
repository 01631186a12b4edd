#include "ir/op_registry.h"

#include <algorithm>

#include "ir/error.h"

namespace parity::ir {

void ShapeCtx::fail(const std::string& msg) const { throw InvalidInput(msg); }

int64_t ShapeCtx::eval(const DimExpr& e) const {
  int64_t v;
  if (e.try_eval(b_, v)) return v;
  try {
    return e.eval(b_);
  } catch (const InvalidInput& err) {
    fail(err.what());
  }
}

bool ShapeCtx::same(const DimExpr& a, const DimExpr& b) const { return eval(a) == eval(b); }

void ShapeCtx::expect_same(const DimExpr& a, const DimExpr& b, const std::string& what) const {
  if (!same(a, b))
    fail(what + ": " + a.str() + " (=" + std::to_string(eval(a)) + ") vs " + b.str() + " (=" +
         std::to_string(eval(b)) + ")");
}

namespace {
template <class T>
const T* get_as(const ShapeCtx& c, const std::string& name, AttrKind want, bool required) {
  const Attr* a = c.op.attr(name);
  if (!a) {
    if (required) c.fail("missing attribute '" + name + "' (" + attr_kind_name(want) + ")");
    return nullptr;
  }
  if (!std::holds_alternative<T>(*a))
    c.fail("attribute '" + name + "' must be " + attr_kind_name(want) + ", got " + attr_kind_name(attr_kind(*a)));
  return &std::get<T>(*a);
}
}  // namespace

double ShapeCtx::f(const std::string& name, double dflt) const {
  // Integers are accepted where a float is expected (`factor: 2`).
  if (const Attr* a = op.attr(name); a && std::holds_alternative<DimExpr>(*a)) return double(eval(std::get<DimExpr>(*a)));
  const double* v = get_as<double>(*this, name, AttrKind::Float, false);
  return v ? *v : dflt;
}
double ShapeCtx::f(const std::string& name) const {
  if (const Attr* a = op.attr(name); a && std::holds_alternative<DimExpr>(*a)) return double(eval(std::get<DimExpr>(*a)));
  return *get_as<double>(*this, name, AttrKind::Float, true);
}
std::string ShapeCtx::s(const std::string& name) const { return *get_as<std::string>(*this, name, AttrKind::String, true); }
std::string ShapeCtx::s(const std::string& name, const std::string& dflt) const {
  const std::string* v = get_as<std::string>(*this, name, AttrKind::String, false);
  return v ? *v : dflt;
}
DimExpr ShapeCtx::i(const std::string& name) const { return *get_as<DimExpr>(*this, name, AttrKind::Int, true); }
int64_t ShapeCtx::ival(const std::string& name, int64_t dflt) const {
  const DimExpr* v = get_as<DimExpr>(*this, name, AttrKind::Int, false);
  return v ? eval(*v) : dflt;
}
Dims ShapeCtx::ints(const std::string& name) const { return *get_as<Dims>(*this, name, AttrKind::Ints, true); }
Strings ShapeCtx::strs(const std::string& name) const { return *get_as<Strings>(*this, name, AttrKind::Strings, true); }

size_t ShapeCtx::axis(int64_t d, size_t k) const {
  int64_t r = static_cast<int64_t>(in.at(k).rank());
  if (d < -r || d >= r) fail("dim " + std::to_string(d) + " out of range for operand " + std::to_string(k) + " of rank " + std::to_string(r));
  return static_cast<size_t>(d < 0 ? d + r : d);
}

void ShapeCtx::for_each_coord(const DimExpr& e, const std::function<void(const Bindings&)>& check) const {
  std::set<std::string> syms;
  e.symbols(syms);
  std::vector<std::pair<std::string, int64_t>> ranges;
  for (const auto& s : syms) {
    if (s.empty() || s[0] != '$') continue;
    std::string n = s.substr(1);
    if (auto it = loop_vars_.find(n); it != loop_vars_.end()) {
      ranges.push_back({s, it->second});
      continue;
    }
    std::optional<size_t> ax = mesh_ ? mesh_->axis_index(n) : std::nullopt;
    if (!ax) fail("'" + s + "' in '" + e.str() + "' is neither a mesh axis nor an enclosing loop variable");
    ranges.push_back({s, mesh_->axes[*ax].size});
  }
  Bindings b = b_;
  std::function<void(size_t)> rec = [&](size_t k) {
    if (k == ranges.size()) return check(b);
    for (int64_t v = 0; v < ranges[k].second; ++v) {
      b[ranges[k].first] = v;
      rec(k + 1);
    }
  };
  rec(0);
}

int64_t ShapeCtx::group_size() const {
  const Attr* axes = op.attr("axes");
  const Attr* groups = op.attr("groups");
  if (!mesh_) fail("collective outside a plan program");
  if ((axes != nullptr) == (groups != nullptr)) fail("a collective needs exactly one of 'axes' (mesh axes) or 'groups' (explicit rank groups)");
  if (axes) {
    if (!std::holds_alternative<Strings>(*axes)) fail("attribute 'axes' must be strings");
    int64_t n = 1;
    const auto& names = std::get<Strings>(*axes);
    if (names.empty()) fail("attribute 'axes' is empty");
    for (size_t k = 0; k < names.size(); ++k) {
      const std::string& a = names[k];
      auto i = mesh_->axis_index(a);
      if (!i) fail("unknown mesh axis '" + a + "'");
      if (std::find(names.begin(), names.begin() + static_cast<long>(k), a) != names.begin() + static_cast<long>(k))
        fail("mesh axis '" + a + "' is listed twice in 'axes'");
      n *= mesh_->axes[*i].size;
    }
    return n;
  }
  if (!std::holds_alternative<Groups>(*groups)) fail("attribute 'groups' must be rank groups");
  const auto& g = std::get<Groups>(*groups);
  if (g.empty() || g[0].empty()) fail("attribute 'groups' is empty");
  for (const auto& grp : g)
    if (grp.size() != g[0].size()) fail("groups of one collective must have equal sizes");
  return static_cast<int64_t>(g[0].size());
}

std::vector<DimExpr> broadcast_shapes(const ShapeCtx& c, const std::vector<DimExpr>& a, const std::vector<DimExpr>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<DimExpr> out(n);
  for (size_t k = 0; k < n; ++k) {
    bool ha = k + a.size() >= n, hb = k + b.size() >= n;
    const DimExpr* da = ha ? &a[k + a.size() - n] : nullptr;
    const DimExpr* db = hb ? &b[k + b.size() - n] : nullptr;
    if (!da) { out[k] = *db; continue; }
    if (!db) { out[k] = *da; continue; }
    int64_t va = c.eval(*da), vb = c.eval(*db);
    if (va == vb) out[k] = *da;
    else if (va == 1) out[k] = *db;
    else if (vb == 1) out[k] = *da;
    else c.fail("operand shapes do not broadcast at dim " + std::to_string(k) + ": " + da->str() + " (=" +
                std::to_string(va) + ") vs " + db->str() + " (=" + std::to_string(vb) + ")");
  }
  return out;
}

const OpRegistry& OpRegistry::get() {
  static const OpRegistry reg = [] {
    OpRegistry r;
    register_elementwise_ops(r);
    register_linalg_ops(r);
    register_shape_ops(r);
    register_nn_ops(r);
    register_collective_ops(r);
    return r;
  }();
  return reg;
}

const OpDef* OpRegistry::find(const std::string& name) const {
  auto it = defs_.find(name);
  return it == defs_.end() ? nullptr : &it->second;
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> v;
  for (const auto& [n, d] : defs_) v.push_back(&d);
  return v;
}

void OpRegistry::add(OpDef d) { defs_[d.name] = std::move(d); }

namespace {
const AttrSpec* attr_spec(const std::string& kind, const std::string& attr) {
  const OpDef* d = OpRegistry::get().find(kind);
  if (!d) return nullptr;
  for (const auto& a : d->attrs)
    if (a.name == attr) return &a;
  return nullptr;
}
}  // namespace

bool is_scalar_attr(const std::string& kind, const std::string& attr) {
  const AttrSpec* a = attr_spec(kind, attr);
  return a && a->scalar;
}

bool is_extent_attr(const std::string& kind, const std::string& attr) {
  const AttrSpec* a = attr_spec(kind, attr);
  return a && a->extent;
}

}  // namespace parity::ir
