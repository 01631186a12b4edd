#include "frontend/hlo/importer.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "frontend/hlo/sharding.h"
#include "ir/error.h"

namespace parity::frontend::hlo {

namespace {

using Shape = std::vector<int64_t>;

// Elements of a shape; past 2^62 it saturates (no module holds that many:
// such a shape is refused where its count is checked).
int64_t count(const Shape& s) {
  int64_t n = 1;
  for (auto d : s)
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 62)) return int64_t{1} << 62;
  return n;
}

bool is_float_elem(const std::string& e) {
  return e == "f32" || e == "bf16" || e == "f64" || e == "f16";
}
bool is_int_elem(const std::string& e) {
  return e == "pred" || e == "s8" || e == "s16" || e == "s32" || e == "s64" || e == "u8" ||
         e == "u16" || e == "u32" || e == "u64";
}

// A value of the imported computation.
struct Val {
  enum class K { tensor, ints, tuple, token };
  K k = K::tensor;
  std::string name;  // tensor: the parity value
  Shape shape;
  ir::DType dt = ir::DType::f32;
  // ints: the values on each partition (one row in a spec), row-major over shape.
  std::vector<std::vector<int64_t>> per_rank;
  std::vector<Val> elems;  // tuple
};

// Integer arrays evaluated per partition stay small: they are offset tables.
constexpr int64_t kMaxIntElems = 1 << 16;
// Float constants built element by element.
constexpr int64_t kMaxConstElems = 256;

class Importer {
 public:
  Importer(const Module& m, Mode mode, const ir::Mesh& mesh) : m_(m), mode_(mode), mesh_(mesh) {
    ranks_ = mode == Mode::plan ? mesh.num_ranks() : 1;
  }

  Imported run(const std::vector<std::string>& names) {
    const Computation* e = m_.entry();
    Imported out;
    std::map<int64_t, const Instr*> params;
    for (const auto& i : e->instrs)
      if (i.opcode == "parameter") {
        int64_t k = parse_int(i, i.operand_text, "parameter number");
        if (params.count(k)) fail(i, "a second parameter(" + std::to_string(k) + ")");
        params[k] = &i;
      }
    for (int64_t k = 0; k < static_cast<int64_t>(params.size()); ++k)
      if (!params.count(k)) fail(*e->root(), "parameter(" + std::to_string(k) + ") is missing");
    std::vector<Val> args;
    for (const auto& [k, ins] : params) {
      cur_ = ins;
      if (ins->shape.is_tuple) unsupported(*ins, "a tuple parameter");
      std::string n = static_cast<size_t>(k) < names.size() ? names[static_cast<size_t>(k)]
                                                            : "arg" + std::to_string(k);
      Val v;
      v.name = n;
      v.shape = ins->shape.dims;
      v.dt = dtype(*ins, ins->shape.elem);
      for (auto d : v.shape)
        if (d == 0) unsupported(*ins, "a zero-size parameter");
      g_.inputs.push_back(n);
      g_.types[n] = ir::TensorType{v.dt, dims_of(v.shape)};
      shapes_[n] = v.shape;
      used_.insert(n);
      out.params.push_back(n);
      out.param_shapes.push_back(v.shape);
      out.param_instrs.push_back(ins);
      args.push_back(v);
    }
    Val root = call(*e, args, "");
    std::vector<Val> res = root.k == Val::K::tuple ? root.elems : std::vector<Val>{root};
    std::set<std::string> taken(g_.inputs.begin(), g_.inputs.end());
    for (size_t k = 0; k < res.size(); ++k) {
      cur_ = e->root();
      std::string n = tensor(res[k], *e->root());
      // An input or a value returned twice gets its own output name.
      if (!taken.insert(n).second)
        n = emit("identity", {n}, {}, res[k].shape, "out" + std::to_string(k));
      out.results.push_back(n);
      out.result_shapes.push_back(res[k].shape);
    }
    g_.outputs = out.results;
    drop_dead_ops();
    std::set<std::string> defined;
    for (const auto& op : g_.ops) defined.insert(op.results.begin(), op.results.end());
    for (auto& [n, k] : keys_)
      if (defined.count(n)) out.keys.emplace(n, k);
    out.graph = std::move(g_);
    return out;
  }

 private:
  const Module& m_;
  Mode mode_;
  ir::Mesh mesh_;
  int64_t ranks_;
  ir::Graph g_;
  std::map<std::string, Shape> shapes_;
  std::set<std::string> used_;
  std::map<std::string, double> const_of_;  // fill results: their value
  const Instr* cur_ = nullptr;
  int depth_ = 0;
  std::map<std::string, std::string> keys_;

  bool is_input(const std::string& n) const {
    return std::find(g_.inputs.begin(), g_.inputs.end(), n) != g_.inputs.end();
  }

  static ir::Dims dims_of(const Shape& s) { return ir::Dims(s.begin(), s.end()); }

  // Constants folded into attributes (`scale`'s factor) and values HLO
  // computes but never uses: a dead literal would pin sizes for nothing.
  void drop_dead_ops() {
    std::set<std::string> live(g_.outputs.begin(), g_.outputs.end());
    std::vector<bool> keep(g_.ops.size(), false);
    for (size_t k = g_.ops.size(); k-- > 0;) {
      const ir::Op& op = g_.ops[k];
      bool used = op.results.empty();  // a send
      for (const auto& r : op.results) used |= live.count(r) > 0;
      if (!used) continue;
      keep[k] = true;
      live.insert(op.operands.begin(), op.operands.end());
    }
    std::vector<ir::Op> ops;
    for (size_t k = 0; k < g_.ops.size(); ++k)
      if (keep[k]) ops.push_back(std::move(g_.ops[k]));
    g_.ops = std::move(ops);
  }

  [[noreturn]] void unsupported(const Instr& i, const std::string& what) const {
    std::string at = m_.file + ":" + std::to_string(i.line) + ":" + std::to_string(i.col);
    std::string src = i.origin.empty() ? "" : " (" + i.origin + ")";
    throw Unsupported(at + ": unsupported '" + i.opcode + "' %" + i.name + src + ": " + what);
  }
  [[noreturn]] void fail(const Instr& i, const std::string& what) const {
    ir::Diag d{m_.file, "", "%" + i.name, "", what};
    d.line = i.line;
    d.col = i.col;
    d.check = "hlo";
    throw ir::InvalidInput(d);
  }

  int64_t parse_int(const Instr& i, const std::string& s, const std::string& what) const {
    try {
      size_t used = 0;
      long long v = std::stoll(s, &used);
      if (used != s.size()) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      fail(i, "expected an integer " + what + ", got '" + s + "'");
    }
  }
  std::vector<int64_t> ints_attr(const Instr& i, const std::string& key,
                                 bool required = true) const {
    const std::string* a = i.attr(key);
    if (!a) {
      if (required) fail(i, "missing attribute '" + key + "'");
      return {};
    }
    try {
      return int_list(*a);
    } catch (const std::exception&) {
      fail(i, "attribute '" + key + "' is not a list of integers: " + *a);
    }
  }

  ir::DType dtype(const Instr& i, const std::string& e) const {
    if (e == "f32" || e == "f16") return ir::DType::f32;
    if (e == "bf16") return ir::DType::bf16;
    if (e == "f64") return ir::DType::f64;
    if (e == "pred") return ir::DType::i1;
    if (is_int_elem(e)) return ir::DType::i64;
    unsupported(i, "element type " + e);
  }

  std::string fresh(const std::string& hint) {
    std::string base;
    for (char c : hint)
      base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
    std::string n = base;
    for (int k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
    used_.insert(n);
    return n;
  }

  std::string emit(const std::string& kind, std::vector<std::string> operands, ir::AttrMap attrs,
                   const Shape& shape, const std::string& hint = "") {
    ir::Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.attrs = std::move(attrs);
    if (cur_) {
      op.line = cur_->line;
      op.col = cur_->col;
      op.origin = cur_->origin;
    }
    std::string n = fresh(hint.empty() ? (cur_ ? cur_->name : "t") : hint);
    op.results = {n};
    g_.ops.push_back(std::move(op));
    shapes_[n] = shape;
    return n;
  }

  Val tensor_val(const std::string& n, const Shape& s, ir::DType dt = ir::DType::f32) {
    Val v;
    v.name = n;
    v.shape = s;
    v.dt = dt;
    return v;
  }

  std::string fill(double value, const Shape& s) {
    std::string n = emit("fill", {}, {{"value", value}, {"shape", dims_of(s)}}, s);
    const_of_[n] = value;
    return n;
  }

  // A float tensor from a value; integer arrays known on every partition
  // alike become constants.
  std::string tensor(const Val& v, const Instr& at) {
    if (v.k == Val::K::tensor) return v.name;
    if (v.k == Val::K::ints) {
      for (const auto& r : v.per_rank)
        if (r != v.per_rank[0])
          unsupported(at, "an integer value that differs between partitions used as data");
      return constant(at, std::vector<double>(v.per_rank[0].begin(), v.per_rank[0].end()), v.shape);
    }
    unsupported(at, "a tuple or token used as a tensor");
  }

  std::string constant(const Instr& at, const std::vector<double>& vals, const Shape& s) {
    bool same = std::all_of(vals.begin(), vals.end(), [&](double x) {
      return x == vals[0] || (std::isnan(x) && std::isnan(vals[0]));
    });
    if (vals.empty()) unsupported(at, "an empty constant");
    if (same) return fill(vals[0], s);
    if (count(s) > kMaxConstElems)
      unsupported(at, "a float constant array of " + std::to_string(count(s)) +
                          " distinct elements (at most " + std::to_string(kMaxConstElems) + ")");
    std::vector<std::string> parts;
    for (double x : vals) parts.push_back(fill(x, {1}));
    std::string flat =
        parts.size() == 1 ? parts[0] : emit("concat", parts, {{"dim", ir::DimExpr(0)}}, {count(s)});
    return reshape(flat, s);
  }

  std::string reshape(const std::string& x, const Shape& to) {
    if (shapes_.at(x) == to) return x;
    return emit("reshape", {x}, {{"shape", dims_of(to)}}, to);
  }
  std::string transpose(const std::string& x, const std::vector<int64_t>& perm) {
    bool id = true;
    for (size_t k = 0; k < perm.size(); ++k) id &= perm[k] == static_cast<int64_t>(k);
    if (id) return x;
    const Shape& s = shapes_.at(x);
    Shape out;
    for (auto p : perm) out.push_back(s[static_cast<size_t>(p)]);
    return emit("transpose", {x}, {{"perm", ir::Dims(perm.begin(), perm.end())}}, out);
  }
  // HLO broadcast: operand dim k lands on output dim `dims[k]`.
  std::string broadcast(const std::string& x, const Shape& to, const std::vector<int64_t>& dims) {
    auto c = const_of_.find(x);
    if (c != const_of_.end()) return fill(c->second, to);
    std::vector<int64_t> order(dims.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return dims[static_cast<size_t>(a)] < dims[static_cast<size_t>(b)];
    });
    std::string t = transpose(x, order);
    Shape mid(to.size(), 1);
    const Shape& xs = shapes_.at(x);
    for (size_t k = 0; k < dims.size(); ++k) mid[static_cast<size_t>(dims[k])] = xs[k];
    t = reshape(t, mid);
    if (mid == to) return t;
    return emit("broadcast_to", {t}, {{"shape", dims_of(to)}}, to);
  }

  // ---- integers per partition ----
  Val ints(const Shape& s, std::vector<std::vector<int64_t>> rows) {
    Val v;
    v.k = Val::K::ints;
    v.shape = s;
    v.per_rank = std::move(rows);
    return v;
  }
  Val ints_const(const Shape& s, const std::vector<int64_t>& vals) {
    return ints(s, std::vector<std::vector<int64_t>>(static_cast<size_t>(ranks_), vals));
  }
  // A per-partition scalar as an expression of the mesh coordinates:
  // c0 + sum c_a * $a, checked on every partition.
  // A per-partition scalar as an expression of the mesh coordinates: c0 plus
  // a multiple of each coordinate, or, where XLA treats an axis as several
  // (a size-4 axis as 2x2 to line one sharding up with another), of each
  // digit of it in mixed radix (`($a-$a%2)/2`); checked on every partition.
  ir::DimExpr affine(const Val& v, const Instr& at) {
    if (v.k != Val::K::ints || count(v.shape) != 1)
      unsupported(at, "an index operand not known as an integer");
    std::vector<int64_t> vals;
    for (const auto& r : v.per_rank) vals.push_back(r[0]);
    if (auto e = fit_affine(vals, std::vector<bool>(vals.size(), true))) return *e;
    unsupported(at,
                "an offset that is no affine function of the mesh coordinates or of their digits");
  }

  // `vals[rank]` on the ranks `present` marks, as c + sum coef * digit; the
  // digits are the whole coordinates first, then their mixed-radix digits.
  // Where every present rank has the same digit, its coefficient is free: 0,
  // 1 and -1 are tried, and the first formula `accept` takes is kept (a shift
  // that points the ranks receiving nothing outside their group).
  std::optional<ir::DimExpr> fit_affine(
      const std::vector<int64_t>& vals, const std::vector<bool>& present,
      const std::function<bool(const ir::DimExpr&)>& accept = {}) const {
    if (ranks_ == 1) return ir::DimExpr(vals[0]);
    struct Digit {
      size_t axis;
      int64_t stride, radix;  // digit = (coordinate / stride) % radix
    };
    auto digit = [&](const Digit& d, int64_t rank) {
      return (mesh_.coord_of(rank)[d.axis] / d.stride) % d.radix;
    };
    // c + sum coef * digit, with c from rank r0; checked on the present ranks.
    auto formula = [&](const std::vector<Digit>& digits, const std::vector<int64_t>& coef,
                       int64_t r0) -> std::optional<ir::DimExpr> {
      int64_t c0 = vals[static_cast<size_t>(r0)];
      for (size_t k = 0; k < digits.size(); ++k) c0 -= coef[k] * digit(digits[k], r0);
      for (int64_t r = 0; r < ranks_; ++r) {
        if (!present[static_cast<size_t>(r)]) continue;
        int64_t want = c0;
        for (size_t k = 0; k < digits.size(); ++k) want += coef[k] * digit(digits[k], r);
        if (want != vals[static_cast<size_t>(r)]) return std::nullopt;
      }
      ir::DimExpr e(c0);
      bool any = c0 != 0;
      for (size_t k = 0; k < digits.size(); ++k) {
        if (!coef[k]) continue;
        const Digit& d = digits[k];
        const int64_t n = mesh_.axes[d.axis].size;
        ir::DimExpr t = ir::DimExpr::sym("$" + mesh_.axes[d.axis].name);
        // Floor division as an exact one (dim expressions divide exactly).
        if (d.stride > 1) t = (t - t % ir::DimExpr(d.stride)) / ir::DimExpr(d.stride);
        if (d.stride * d.radix < n) t = t % ir::DimExpr(d.radix);
        if (coef[k] != 1) t = t * ir::DimExpr(coef[k]);
        e = any ? e + t : t;
        any = true;
      }
      return e;
    };
    auto fit = [&](const std::vector<Digit>& digits) -> std::optional<ir::DimExpr> {
      int64_t r0 = -1;
      for (int64_t r = 0; r < ranks_ && r0 < 0; ++r)
        if (present[static_cast<size_t>(r)]) r0 = r;
      if (r0 < 0) return std::nullopt;
      std::vector<int64_t> coef(digits.size(), 0);
      std::vector<size_t> free_digits;
      for (size_t k = 0; k < digits.size(); ++k) {
        bool found = false;
        for (int64_t r = 0; r < ranks_ && !found; ++r) {
          if (!present[static_cast<size_t>(r)] || digit(digits[k], r) == digit(digits[k], r0))
            continue;
          bool only = true;
          for (size_t j = 0; j < digits.size() && only; ++j)
            only = j == k || digit(digits[j], r) == digit(digits[j], r0);
          if (!only) continue;
          const int64_t dv = vals[static_cast<size_t>(r)] - vals[static_cast<size_t>(r0)];
          const int64_t dd = digit(digits[k], r) - digit(digits[k], r0);
          if (dv % dd) return std::nullopt;
          coef[k] = dv / dd;
          found = true;
        }
        if (found) continue;
        // No two values tell this digit's coefficient: every present rank
        // has the same digit there, or the digit never changes alone.
        for (int64_t r = 0; r < ranks_; ++r)
          if (present[static_cast<size_t>(r)] && digit(digits[k], r) != digit(digits[k], r0))
            return std::nullopt;
        free_digits.push_back(k);
      }
      if (free_digits.size() > 4) free_digits.resize(4);
      int64_t tries = 1;
      for (size_t j = 0; j < free_digits.size(); ++j) tries *= 3;
      for (int64_t t = 0; t < tries; ++t) {
        int64_t code = t;
        for (size_t f : free_digits) {
          coef[f] = code % 3 == 0 ? 0 : code % 3 == 1 ? 1 : -1;
          code /= 3;
        }
        auto e = formula(digits, coef, r0);
        if (e && (!accept || accept(*e))) return e;
      }
      return std::nullopt;
    };
    std::vector<Digit> whole, split;
    for (size_t a = 0; a < mesh_.axes.size(); ++a) {
      const int64_t n = mesh_.axes[a].size;
      if (n < 2) continue;
      whole.push_back({a, 1, n});
      std::vector<int64_t> primes;
      for (int64_t m = n, f = 2; m > 1; f = f * f > m ? m : f + (m % f != 0))
        if (m % f == 0) primes.push_back(f), m /= f;
      int64_t stride = n;
      for (auto f : primes) {
        stride /= f;
        split.push_back({a, stride, f});
      }
    }
    if (auto e = fit(whole)) return e;
    return fit(split);
  }

  const Val& get(const std::map<std::string, Val>& env, const Instr& i, size_t k) const {
    if (k >= i.operands.size()) fail(i, "expected at least " + std::to_string(k + 1) + " operands");
    auto it = env.find(i.operands[k]);
    if (it == env.end()) fail(i, "operand %" + i.operands[k] + " is not defined before it");
    return it->second;
  }

  // The reduction a computation applies to its two parameters: add, maximum, ...
  std::string reducer(const Instr& at, const std::string& attr) {
    const std::string* n = at.attr(attr);
    if (!n) fail(at, "missing attribute '" + attr + "'");
    std::string name = (*n)[0] == '%' ? n->substr(1) : *n;
    const Computation* c = m_.find(name);
    if (!c) fail(at, "no computation named '" + name + "'");
    const Instr* r = c->root();
    int params = 0;
    for (const auto& i : c->instrs) params += i.opcode == "parameter";
    if (params != 2 || r->operands.size() != 2 || c->instrs.size() != 3)
      unsupported(at, "a reduction computation other than one binary op of its two parameters");
    return r->opcode;
  }

  std::vector<std::vector<int64_t>> groups(const Instr& i) {
    const std::string* g = i.attr("replica_groups");
    // Without a channel id, a collective is across replicas: one here.
    if (!i.attr("channel_id")) return {{0}};
    try {
      const std::string* ids = i.attr("device_ids");
      return parse_replica_groups(g ? *g : "{}", ranks_, ids ? *ids : "");
    } catch (const std::exception& e) {
      unsupported(i, std::string("replica_groups: ") + e.what());
    }
  }
  // The group attribute of a parity collective, or nothing when every group
  // has one member (the identity).
  bool group_attr(const Instr& i, ir::AttrMap& a) {
    auto gs = groups(i);
    std::set<int64_t> seen;
    for (const auto& g : gs)
      for (auto r : g) {
        if (r < 0 || r >= ranks_)
          fail(i, "replica group member " + std::to_string(r) + " is not a partition");
        if (!seen.insert(r).second)
          fail(i, "partition " + std::to_string(r) + " is in two replica groups");
      }
    if (static_cast<int64_t>(seen.size()) != ranks_)
      unsupported(i, "replica groups that leave partitions out");
    if (gs.empty() || gs[0].size() == 1) return false;
    if (mode_ == Mode::spec)
      unsupported(i, "a collective over several devices in the single-device program");
    if (auto axes = axes_of_groups(gs, mesh_))
      a["axes"] = *axes;
    else
      a["groups"] = ir::Groups(gs);
    return true;
  }

  Val binary_float(const std::string& kind, const Val& a, const Val& b, const Instr& i) {
    std::string x = tensor(a, i), y = tensor(b, i);
    const Shape& s = i.shape.dims;
    auto cx = const_of_.find(x), cy = const_of_.find(y);
    // A literal on one side is an attribute, as parity's own plans write it.
    if (kind == "mul" && cy != const_of_.end())
      return tensor_val(emit("scale", {x}, {{"factor", cy->second}}, s), s);
    if (kind == "mul" && cx != const_of_.end())
      return tensor_val(emit("scale", {y}, {{"factor", cx->second}}, s), s);
    if (kind == "add" && cy != const_of_.end())
      return tensor_val(emit("add_scalar", {x}, {{"value", cy->second}}, s), s);
    if (kind == "add" && cx != const_of_.end())
      return tensor_val(emit("add_scalar", {y}, {{"value", cx->second}}, s), s);
    if (kind == "sub" && cy != const_of_.end())
      return tensor_val(emit("add_scalar", {x}, {{"value", -cy->second}}, s), s);
    return tensor_val(emit(kind, {x, y}, {}, s), s, a.dt);
  }

  Val int_binary(const Instr& i, const Val& a, const Val& b) {
    if (a.shape != b.shape) fail(i, "operand shapes differ");
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(ranks_));
    const std::string& op = i.opcode;
    std::string dir;
    if (op == "compare") {
      const std::string* d = i.attr("direction");
      if (!d) fail(i, "compare without a direction");
      dir = *d;
    }
    for (int64_t r = 0; r < ranks_; ++r) {
      const auto& x = a.per_rank[static_cast<size_t>(r)];
      const auto& y = b.per_rank[static_cast<size_t>(r)];
      auto& o = rows[static_cast<size_t>(r)];
      o.resize(x.size());
      for (size_t k = 0; k < x.size(); ++k) {
        int64_t p = x[k], q = y[k], v = 0;
        bool over = false;
        if (op == "add")
          over = __builtin_add_overflow(p, q, &v);
        else if (op == "subtract")
          over = __builtin_sub_overflow(p, q, &v);
        else if (op == "multiply")
          over = __builtin_mul_overflow(p, q, &v);
        else if (op == "divide" || op == "remainder") {
          if (q == 0) unsupported(i, "an integer division by zero");
          if (p == INT64_MIN && q == -1) unsupported(i, "an integer division past 64 bits");
          v = op == "divide" ? p / q : p % q;
        } else if (op == "maximum")
          v = std::max(p, q);
        else if (op == "minimum")
          v = std::min(p, q);
        else if (op == "and")
          v = p & q;
        else if (op == "or")
          v = p | q;
        else if (op == "compare") {
          if (dir == "EQ")
            v = p == q;
          else if (dir == "NE")
            v = p != q;
          else if (dir == "LT")
            v = p < q;
          else if (dir == "LE")
            v = p <= q;
          else if (dir == "GT")
            v = p > q;
          else if (dir == "GE")
            v = p >= q;
          else
            fail(i, "unknown comparison direction '" + dir + "'");
        } else
          unsupported(i, "on integers");
        if (over)
          unsupported(
              i, "integer arithmetic past 64 bits (XLA's integers wrap; parity does not model it)");
        o[k] = v;
      }
    }
    return ints(i.shape.dims, std::move(rows));
  }

  // Row-major gather of `x`'s elements at the positions `pick` gives each output position.
  static std::vector<int64_t> strides(const Shape& s) {
    std::vector<int64_t> st(s.size(), 1);
    for (size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
    return st;
  }
  Val int_slice(const Val& v, const Shape& out,
                const std::vector<std::vector<int64_t>>& starts_per_rank) {
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(ranks_));
    auto ist = strides(v.shape), ost = strides(out);
    int64_t n = count(out);
    for (int64_t r = 0; r < ranks_; ++r) {
      const auto& st = starts_per_rank[static_cast<size_t>(r)];
      auto& o = rows[static_cast<size_t>(r)];
      o.resize(static_cast<size_t>(n));
      for (int64_t e = 0; e < n; ++e) {
        int64_t src = 0, rem = e;
        for (size_t d = 0; d < out.size(); ++d) {
          int64_t idx = rem / ost[d];
          rem %= ost[d];
          src += (idx + st[d]) * ist[d];
        }
        o[static_cast<size_t>(e)] = v.per_rank[static_cast<size_t>(r)][static_cast<size_t>(src)];
      }
    }
    return ints(out, std::move(rows));
  }

  std::vector<int64_t> parse_int_literal(const Instr& i) {
    std::string t;
    for (char c : i.operand_text)
      if (c != '{' && c != '}') t += c;
    std::vector<int64_t> out;
    for (const auto& p : split_top(t)) {
      std::string s;
      for (char c : p)
        if (c != ' ') s += c;
      if (s.empty()) continue;
      if (s == "true")
        out.push_back(1);
      else if (s == "false")
        out.push_back(0);
      else
        out.push_back(parse_int(i, s, "literal"));
    }
    return out;
  }
  std::vector<double> parse_float_literal(const Instr& i) {
    std::string t;
    for (char c : i.operand_text)
      if (c != '{' && c != '}') t += c;
    std::vector<double> out;
    for (const auto& p : split_top(t)) {
      std::string s;
      for (char c : p)
        if (c != ' ') s += c;
      if (s.empty()) continue;
      if (s == "inf")
        out.push_back(HUGE_VAL);
      else if (s == "-inf")
        out.push_back(-HUGE_VAL);
      else if (s == "nan" || s == "-nan")
        out.push_back(std::nan(""));
      else {
        try {
          size_t used = 0;
          out.push_back(std::stod(s, &used));
          if (used != s.size()) throw std::invalid_argument(s);
        } catch (const std::exception&) {
          fail(i, "'" + s + "' is not a number");
        }
      }
    }
    return out;
  }

  Val call(const Computation& c, const std::vector<Val>& args, const std::string& prefix) {
    if (++depth_ > 64) unsupported(*c.root(), "calls nested more than 64 deep");
    std::map<std::string, Val> env;
    for (const auto& i : c.instrs) {
      cur_ = &i;
      Val v = instr(i, env, args, prefix);
      if (v.k == Val::K::tensor && !i.origin.empty() && !keys_.count(v.name) && !is_input(v.name))
        keys_[v.name] = i.opcode + "@" + i.origin;
      env[i.name] = std::move(v);
    }
    --depth_;
    return env.at(c.root()->name);
  }

  Val instr(const Instr& i, std::map<std::string, Val>& env, const std::vector<Val>& args,
            const std::string& prefix) {
    const std::string& op = i.opcode;
    const Shape& s = i.shape.dims;
    auto in = [&](size_t k) -> const Val& { return get(env, i, k); };
    auto need = [&](size_t n) {
      if (i.operands.size() != n)
        fail(i, "'" + op + "' takes " + std::to_string(n) + " operands, got " +
                    std::to_string(i.operands.size()));
    };
    auto out_float = [&]() {
      if (i.shape.is_tuple || !is_float_elem(i.shape.elem))
        unsupported(i, "a result of type " + i.shape.str());
    };
    auto res = [&](const std::string& n) { return tensor_val(n, s, dtype(i, i.shape.elem)); };
    bool int_result = !i.shape.is_tuple && is_int_elem(i.shape.elem);
    if (int_result && count(s) > kMaxIntElems)
      unsupported(i, "an integer array of more than " + std::to_string(kMaxIntElems) + " elements");

    if (op == "parameter") {
      int64_t k = parse_int(i, i.operand_text, "parameter number");
      if (k < 0 || static_cast<size_t>(k) >= args.size())
        fail(i, "parameter(" + std::to_string(k) + ") out of range");
      return args[static_cast<size_t>(k)];
    }
    if (op == "constant") {
      if (i.shape.is_tuple) unsupported(i, "a tuple constant");
      if (int_result) {
        auto v = parse_int_literal(i);
        if (static_cast<int64_t>(v.size()) != count(s))
          fail(i, "the literal's element count does not match the shape");
        return ints_const(s, v);
      }
      out_float();
      auto v = parse_float_literal(i);
      if (static_cast<int64_t>(v.size()) != count(s))
        fail(i, "the literal's element count does not match the shape");
      return res(constant(i, v, s));
    }
    if (op == "partition-id" || op == "replica-id") {
      std::vector<std::vector<int64_t>> rows;
      for (int64_t r = 0; r < ranks_; ++r) rows.push_back({op == "partition-id" ? r : 0});
      return ints({}, rows);
    }
    if (op == "iota") {
      if (!int_result) unsupported(i, "a float iota");
      auto d = ints_attr(i, "iota_dimension");
      if (d.size() != 1 || d[0] < 0 || static_cast<size_t>(d[0]) >= s.size())
        fail(i, "bad iota_dimension");
      auto st = strides(s);
      std::vector<int64_t> v(static_cast<size_t>(count(s)));
      for (int64_t e = 0; e < count(s); ++e)
        v[static_cast<size_t>(e)] =
            (e / st[static_cast<size_t>(d[0])]) % s[static_cast<size_t>(d[0])];
      return ints_const(s, v);
    }
    if (op == "tuple") {
      Val t;
      t.k = Val::K::tuple;
      for (size_t k = 0; k < i.operands.size(); ++k) t.elems.push_back(in(k));
      return t;
    }
    if (op == "get-tuple-element") {
      need(1);
      const Val& t = in(0);
      int64_t k = ints_attr(i, "index").at(0);
      if (t.k != Val::K::tuple || k < 0 || static_cast<size_t>(k) >= t.elems.size())
        fail(i, "bad tuple index");
      return t.elems[static_cast<size_t>(k)];
    }
    if (op == "opt-barrier" || op == "optimization-barrier") {
      need(1);
      return in(0);
    }
    if (op == "call") {
      const std::string* n = i.attr("to_apply");
      if (!n) fail(i, "call without to_apply");
      const Computation* c = m_.find((*n)[0] == '%' ? n->substr(1) : *n);
      if (!c) fail(i, "no computation " + *n);
      std::vector<Val> a;
      for (size_t k = 0; k < i.operands.size(); ++k) a.push_back(in(k));
      const Instr* saved = cur_;
      Val v = call(*c, a, prefix);
      cur_ = saved;
      return v;
    }
    if (op == "custom-call") {
      const std::string* t = i.attr("custom_call_target");
      std::string target = t ? *t : "";
      if (target.size() >= 2 && target.front() == '"') target = target.substr(1, target.size() - 2);
      // Annotations of where values live: the values are unchanged.
      static const std::set<std::string> kAnnotations = {
          "Sharding",     "SPMDFullToShardShape",       "SPMDShardToFullShape",      "MoveToHost",
          "MoveToDevice", "xla.sdy.FuncResultSharding", "xla.sdy.ShardingConstraint"};
      if (kAnnotations.count(target)) {
        need(1);
        const Val& x = in(0);
        if (x.k == Val::K::tensor && x.shape != s)
          unsupported(i, target + " that changes the shape");
        return x;
      }
      unsupported(i, "custom call target '" + target + "'");
    }

    // ---- integers, evaluated per partition ----
    bool int_operands = !i.operands.empty();
    for (size_t k = 0; k < i.operands.size(); ++k) int_operands &= in(k).k == Val::K::ints;
    if (int_operands && (int_result || op == "convert")) {
      if (op == "convert") {
        need(1);
        if (int_result) return ints(s, in(0).per_rank);
        Val v = in(0);
        out_float();
        return res(tensor(v, i));
      }
      if (op == "add" || op == "subtract" || op == "multiply" || op == "divide" ||
          op == "remainder" || op == "maximum" || op == "minimum" || op == "compare" ||
          op == "and" || op == "or") {
        need(2);
        return int_binary(i, in(0), in(1));
      }
      if (op == "negate") {
        need(1);
        Val v = in(0);
        for (auto& r : v.per_rank)
          for (auto& x : r) {
            if (x == INT64_MIN) unsupported(i, "integer arithmetic past 64 bits");
            x = -x;
          }
        return v;
      }
      if (op == "copy" || op == "reshape" || op == "bitcast") {
        need(1);
        Val v = in(0);
        if (count(v.shape) != count(s)) fail(i, "reshape changes the element count");
        v.shape = s;
        return v;
      }
      if (op == "select") {
        need(3);
        const Val &p = in(0), &a = in(1), &b = in(2);
        std::vector<std::vector<int64_t>> rows(static_cast<size_t>(ranks_));
        for (int64_t r = 0; r < ranks_; ++r) {
          auto& o = rows[static_cast<size_t>(r)];
          const auto& pr = p.per_rank[static_cast<size_t>(r)];
          for (size_t k = 0; k < a.per_rank[static_cast<size_t>(r)].size(); ++k)
            o.push_back(pr[pr.size() == 1 ? 0 : k] ? a.per_rank[static_cast<size_t>(r)][k]
                                                   : b.per_rank[static_cast<size_t>(r)][k]);
        }
        return ints(s, std::move(rows));
      }
      if (op == "clamp") {
        need(3);
        Val lo = in(0), x = in(1), hi = in(2);
        std::vector<std::vector<int64_t>> rows(static_cast<size_t>(ranks_));
        for (int64_t r = 0; r < ranks_; ++r)
          for (size_t k = 0; k < x.per_rank[static_cast<size_t>(r)].size(); ++k) {
            const auto& l = lo.per_rank[static_cast<size_t>(r)];
            const auto& h = hi.per_rank[static_cast<size_t>(r)];
            rows[static_cast<size_t>(r)].push_back(std::clamp(x.per_rank[static_cast<size_t>(r)][k],
                                                              l[l.size() == 1 ? 0 : k],
                                                              h[h.size() == 1 ? 0 : k]));
          }
        return ints(s, std::move(rows));
      }
      if (op == "broadcast") {
        need(1);
        const Val& x = in(0);
        auto dims = ints_attr(i, "dimensions");
        auto ost = strides(s), ist = strides(x.shape);
        std::vector<std::vector<int64_t>> rows(static_cast<size_t>(ranks_));
        for (int64_t r = 0; r < ranks_; ++r)
          for (int64_t e = 0; e < count(s); ++e) {
            int64_t src = 0;
            for (size_t k = 0; k < dims.size(); ++k) {
              int64_t idx =
                  (e / ost[static_cast<size_t>(dims[k])]) % s[static_cast<size_t>(dims[k])];
              src += (x.shape[k] == 1 ? 0 : idx) * ist[k];
            }
            rows[static_cast<size_t>(r)].push_back(
                x.per_rank[static_cast<size_t>(r)][static_cast<size_t>(src)]);
          }
        return ints(s, std::move(rows));
      }
      if (op == "slice") {
        need(1);
        auto st = slice_starts(i, in(0).shape);
        return int_slice(in(0), s,
                         std::vector<std::vector<int64_t>>(static_cast<size_t>(ranks_), st));
      }
      if (op == "dynamic-slice") {
        const Val& x = in(0);
        std::vector<std::vector<int64_t>> st(static_cast<size_t>(ranks_),
                                             std::vector<int64_t>(x.shape.size()));
        if (i.operands.size() != x.shape.size() + 1)
          fail(i, "dynamic-slice needs one start index per dim");
        for (size_t d = 0; d < x.shape.size(); ++d)
          for (int64_t r = 0; r < ranks_; ++r)
            st[static_cast<size_t>(r)][d] = std::clamp<int64_t>(
                in(d + 1).per_rank[static_cast<size_t>(r)][0], 0, x.shape[d] - s[d]);
        return int_slice(x, s, st);
      }
      unsupported(i, "on integers");
    }

    // ---- floats ----
    static const std::map<std::string, std::string> kUnary = {
        {"negate", "neg"},  {"exponential", "exp"}, {"log", "log"},          {"sqrt", "sqrt"},
        {"rsqrt", "rsqrt"}, {"tanh", "tanh"},       {"logistic", "sigmoid"}, {"copy", "identity"}};
    static const std::map<std::string, std::string> kBinary = {
        {"add", "add"},    {"subtract", "sub"},    {"multiply", "mul"},
        {"divide", "div"}, {"maximum", "maximum"}, {"minimum", "minimum"}};
    if (auto u = kUnary.find(op); u != kUnary.end()) {
      need(1);
      out_float();
      return res(emit(u->second, {tensor(in(0), i)}, {}, s));
    }
    if (auto b = kBinary.find(op); b != kBinary.end()) {
      need(2);
      out_float();
      if (in(0).shape != s || in(1).shape != s)
        fail(i, "elementwise operands must have the result's shape");
      return binary_float(b->second, in(0), in(1), i);
    }
    if (op == "select") {
      need(3);
      out_float();
      return res(select_by_partition(i, in(0), tensor(in(1), i), tensor(in(2), i)));
    }
    if (op == "exponential-minus-one" || op == "log-plus-one") {
      need(1);
      out_float();
      std::string x = tensor(in(0), i);
      if (op == "exponential-minus-one")
        return res(emit("add_scalar", {emit("exp", {x}, {}, s)}, {{"value", -1.0}}, s));
      return res(emit("log", {emit("add_scalar", {x}, {{"value", 1.0}}, s)}, {}, s));
    }
    if (op == "power") {
      need(2);
      out_float();
      std::string e = tensor(in(1), i);
      auto c = const_of_.find(e);
      if (c == const_of_.end()) unsupported(i, "a power whose exponent is not a constant");
      return res(emit("pow", {tensor(in(0), i)}, {{"exponent", c->second}}, s));
    }
    if (op == "clamp") {
      need(3);
      out_float();
      std::string lo = tensor(in(0), i), x = tensor(in(1), i), hi = tensor(in(2), i);
      if (shapes_.at(lo) != s) lo = broadcast(lo, s, {});
      if (shapes_.at(hi) != s) hi = broadcast(hi, s, {});
      return res(emit("minimum", {emit("maximum", {x, lo}, {}, s), hi}, {}, s));
    }
    if (op == "convert") {
      need(1);
      const Val& x = in(0);
      if (x.k == Val::K::tensor && ir::is_float(x.dt) && !int_result) {
        ir::DType to = dtype(i, i.shape.elem);
        if (to == x.dt) return res(emit("identity", {x.name}, {}, s));
        return res(emit("cast", {x.name}, {{"dtype", std::string(ir::dtype_name(to))}}, s));
      }
      if (x.k == Val::K::tensor && ir::is_float(x.dt) && int_result && i.shape.elem != "pred")
        return tensor_val(emit("cast", {x.name}, {{"dtype", std::string("i64")}}, s), s,
                          ir::DType::i64);
      unsupported(i, "a conversion from " +
                         std::string(x.k == Val::K::tensor ? ir::dtype_name(x.dt) : "?") + " to " +
                         i.shape.elem);
    }
    if (op == "broadcast") {
      need(1);
      out_float();
      return res(broadcast(tensor(in(0), i), s, ints_attr(i, "dimensions")));
    }
    if (op == "reshape" || op == "bitcast") {
      need(1);
      out_float();
      std::string x = tensor(in(0), i);
      if (count(shapes_.at(x)) != count(s)) fail(i, "reshape changes the element count");
      if (shapes_.at(x) == s) return res(emit("identity", {x}, {}, s));
      return res(emit("reshape", {x}, {{"shape", dims_of(s)}}, s));
    }
    if (op == "transpose") {
      need(1);
      out_float();
      auto perm = ints_attr(i, "dimensions");
      std::string t = transpose(tensor(in(0), i), perm);
      return res(t == tensor(in(0), i) ? emit("identity", {t}, {}, s) : t);
    }
    if (op == "slice") {
      need(1);
      out_float();
      std::string x = tensor(in(0), i);
      auto st = slice_starts(i, shapes_.at(x));
      for (size_t d = 0; d < st.size(); ++d)
        if (st[d] != 0 || s[d] != shapes_.at(x)[d]) {
          Shape o = shapes_.at(x);
          o[d] = s[d];
          x = emit("slice", {x},
                   {{"dim", ir::DimExpr(static_cast<int64_t>(d))},
                    {"offset", ir::DimExpr(st[d])},
                    {"size", ir::DimExpr(s[d])}},
                   o);
        }
      return res(x);
    }
    if (op == "dynamic-slice") {
      out_float();
      std::string x = tensor(in(0), i);
      Shape xs = shapes_.at(x);
      if (i.operands.size() != xs.size() + 1)
        fail(i, "dynamic-slice needs one start index per dim");
      for (size_t d = 0; d < xs.size(); ++d) {
        if (s[d] == xs[d]) continue;
        Val st = in(d + 1);
        if (st.k != Val::K::ints) unsupported(i, "a start index computed from float data");
        for (auto& r : st.per_rank)
          r[0] = std::clamp<int64_t>(r[0], 0, xs[d] - s[d]);  // HLO clamps the start
        Shape o = shapes_.at(x);
        o[d] = s[d];
        x = emit("slice", {x},
                 {{"dim", ir::DimExpr(static_cast<int64_t>(d))},
                  {"offset", affine(st, i)},
                  {"size", ir::DimExpr(s[d])}},
                 o);
      }
      return res(x);
    }
    if (op == "dynamic-update-slice") {
      out_float();
      std::string x = tensor(in(0), i), u = tensor(in(1), i);
      Shape us = shapes_.at(u);
      if (i.operands.size() != s.size() + 2)
        fail(i, "dynamic-update-slice needs one start index per dim");
      int changed = -1;
      int64_t at = 0;
      for (size_t d = 0; d < s.size(); ++d) {
        if (us[d] == s[d]) continue;
        Val st = in(d + 2);
        if (st.k != Val::K::ints) unsupported(i, "a start index computed from float data");
        for (const auto& r : st.per_rank)
          if (r[0] != st.per_rank[0][0])
            unsupported(i, "an update at an offset that differs between partitions");
        if (changed >= 0) unsupported(i, "an update smaller than the operand in more than one dim");
        changed = static_cast<int>(d);
        at = std::clamp<int64_t>(st.per_rank[0][0], 0, s[d] - us[d]);
      }
      if (changed < 0) return res(emit("identity", {u}, {}, s));
      auto dim = static_cast<size_t>(changed);
      std::vector<std::string> parts;
      auto piece = [&](int64_t off, int64_t size) {
        Shape o = s;
        o[dim] = size;
        parts.push_back(emit("slice", {x},
                             {{"dim", ir::DimExpr(static_cast<int64_t>(dim))},
                              {"offset", ir::DimExpr(off)},
                              {"size", ir::DimExpr(size)}},
                             o));
      };
      if (at > 0) piece(0, at);
      parts.push_back(u);
      if (at + us[dim] < s[dim]) piece(at + us[dim], s[dim] - at - us[dim]);
      return res(emit("concat", parts, {{"dim", ir::DimExpr(static_cast<int64_t>(dim))}}, s));
    }
    if (op == "concatenate") {
      out_float();
      auto d = ints_attr(i, "dimensions");
      if (d.size() != 1) fail(i, "concatenate needs one dimension");
      std::vector<std::string> xs;
      for (size_t k = 0; k < i.operands.size(); ++k) xs.push_back(tensor(in(k), i));
      return res(emit("concat", xs, {{"dim", ir::DimExpr(d[0])}}, s));
    }
    if (op == "pad") {
      need(2);
      out_float();
      std::string x = tensor(in(0), i), v = tensor(in(1), i);
      auto c = const_of_.find(v);
      if (c == const_of_.end() || c->second != 0.0)
        unsupported(i, "padding with a value other than the constant 0");
      const std::string* cfg = i.attr("padding");
      if (!cfg) fail(i, "pad without padding=");
      auto dims = split_top(*cfg, 'x');
      if (dims.size() != s.size()) fail(i, "padding= has " + std::to_string(dims.size()) + " dims");
      for (size_t d = 0; d < dims.size(); ++d) {
        auto parts = split_top(dims[d], '_');
        if (parts.size() < 2 || parts.size() > 3) fail(i, "bad padding '" + dims[d] + "'");
        int64_t lo = parse_int(i, parts[0], "padding"), hi = parse_int(i, parts[1], "padding");
        if (parts.size() == 3 && parse_int(i, parts[2], "padding") != 0)
          unsupported(i, "interior padding");
        Shape o = shapes_.at(x);
        if (lo < 0 || hi < 0) {
          int64_t off = std::max<int64_t>(0, -lo), size = o[d] - off - std::max<int64_t>(0, -hi);
          o[d] = size;
          x = emit("slice", {x},
                   {{"dim", ir::DimExpr(static_cast<int64_t>(d))},
                    {"offset", ir::DimExpr(off)},
                    {"size", ir::DimExpr(size)}},
                   o);
          lo = std::max<int64_t>(lo, 0);
          hi = std::max<int64_t>(hi, 0);
        }
        if (lo || hi) {
          o[d] += lo + hi;
          x = emit("pad", {x},
                   {{"dim", ir::DimExpr(static_cast<int64_t>(d))},
                    {"before", ir::DimExpr(lo)},
                    {"after", ir::DimExpr(hi)}},
                   o);
        }
      }
      return res(x);
    }
    if (op == "reduce") {
      out_float();
      if (i.operands.size() != 2) unsupported(i, "a reduce of several arrays (variadic)");
      std::string x = tensor(in(0), i), init = tensor(in(1), i);
      auto dims = ints_attr(i, "dimensions");
      std::string r = reducer(i, "to_apply");
      auto c = const_of_.find(init);
      if (c == const_of_.end()) unsupported(i, "a reduce whose initial value is not a constant");
      std::string kind;
      bool neg = false;
      if (r == "add")
        kind = "reduce_sum";
      else if (r == "maximum")
        kind = "reduce_max";
      else if (r == "minimum")
        kind = "reduce_max", neg = true;
      else
        unsupported(i, "a reduce by '" + r + "'");
      double identity = r == "add" ? 0.0 : r == "maximum" ? -HUGE_VAL : HUGE_VAL;
      if (dims.empty()) return res(emit("identity", {x}, {}, s));
      if (neg) x = emit("neg", {x}, {}, shapes_.at(x));
      std::string y = emit(kind, {x}, {{"dims", ir::Dims(dims.begin(), dims.end())}}, s);
      if (neg) y = emit("neg", {y}, {}, s);
      if (c->second != identity) {
        if (r != "add")
          unsupported(i, "a max/min reduce with an initial value other than -inf/inf");
        y = emit("add_scalar", {y}, {{"value", c->second}}, s);
      }
      return res(y);
    }
    if (op == "dot") {
      need(2);
      out_float();
      return res(dot(i, tensor(in(0), i), tensor(in(1), i)));
    }
    if (op == "all-reduce" || op == "all-reduce-start" || op == "all-gather" ||
        op == "reduce-scatter" || op == "all-to-all" || op == "collective-permute")
      return collective(i, env);
    unsupported(i, "no parity model for this opcode");
  }

  // select(p, a, b) where p is known on every partition (the partitioner
  // masks padding by partition-id): a*m + b*(1-m), m the partition's row of a
  // table of 0s and 1s. Exact over the reals; a condition computed from
  // float data is not modeled.
  std::string select_by_partition(const Instr& i, const Val& p, const std::string& a,
                                  const std::string& b) {
    if (p.k != Val::K::ints) unsupported(i, "a select on a condition computed from float data");
    const Shape& s = i.shape.dims;
    const int64_t per = count(p.shape);
    if (ranks_ * per > kMaxConstElems)
      unsupported(i, "a select whose condition table has more than " +
                         std::to_string(kMaxConstElems) + " entries");
    std::vector<double> table;
    for (const auto& row : p.per_rank)
      for (auto x : row) table.push_back(x ? 1.0 : 0.0);
    Shape tshape{ranks_};
    tshape.insert(tshape.end(), p.shape.begin(), p.shape.end());
    Shape one{1};
    one.insert(one.end(), p.shape.begin(), p.shape.end());
    std::string t = constant(i, table, tshape);
    std::vector<int64_t> rank(static_cast<size_t>(ranks_));
    std::iota(rank.begin(), rank.end(), 0);
    auto at = fit_affine(rank, std::vector<bool>(rank.size(), true));
    if (!at)
      unsupported(i, "a select whose partition index is no expression of the mesh coordinates");
    std::string m =
        ranks_ == 1
            ? t
            : emit("slice", {t},
                   {{"dim", ir::DimExpr(0)}, {"offset", *at}, {"size", ir::DimExpr(1)}}, one);
    m = reshape(m, p.shape);
    if (p.shape != s) {
      if (!p.shape.empty())
        unsupported(i, "a select whose condition is neither a scalar nor of the result's shape");
      m = broadcast(m, s, {});
    }
    std::string keep = emit("mul", {a, m}, {}, s);
    std::string other =
        emit("mul", {b, emit("add_scalar", {emit("neg", {m}, {}, s)}, {{"value", 1.0}}, s)}, {}, s);
    return emit("add", {keep, other}, {}, s);
  }

  std::vector<int64_t> slice_starts(const Instr& i, const Shape& xs) {
    const std::string* sl = i.attr("slice");
    if (!sl) fail(i, "slice without slice=");
    std::string body = *sl;
    if (body.size() >= 2 && body.front() == '{') body = body.substr(1, body.size() - 2);
    auto dims = split_top(body);
    if (dims.size() != xs.size())
      fail(i, "slice= has " + std::to_string(dims.size()) + " dims, the operand " +
                  std::to_string(xs.size()));
    std::vector<int64_t> st;
    for (size_t d = 0; d < dims.size(); ++d) {
      std::string t;
      for (char c : dims[d])
        if (c != ' ' && c != '[' && c != ']') t += c;
      auto parts = split_top(t, ':');
      if (parts.size() < 2) fail(i, "bad slice '" + dims[d] + "'");
      int64_t a = parse_int(i, parts[0], "slice start"), b = parse_int(i, parts[1], "slice limit");
      if (parts.size() == 3 && parse_int(i, parts[2], "slice stride") != 1)
        unsupported(i, "a strided slice");
      if (a < 0 || b > xs[d] || a > b)
        fail(i, "slice " + dims[d] + " is out of the operand's bounds");
      st.push_back(a);
    }
    return st;
  }

  // dot_general as transposes, reshapes and one batched matmul.
  std::string dot(const Instr& i, const std::string& a, const std::string& b) {
    auto lb = ints_attr(i, "lhs_batch_dims", false), rb = ints_attr(i, "rhs_batch_dims", false);
    auto lc = ints_attr(i, "lhs_contracting_dims", false),
         rc = ints_attr(i, "rhs_contracting_dims", false);
    const Shape &as = shapes_.at(a), &bs = shapes_.at(b);
    if (lb.size() != rb.size() || lc.size() != rc.size())
      fail(i, "dot: batch or contracting dims do not pair up");
    auto free_dims = [](const Shape& s, const std::vector<int64_t>& x,
                        const std::vector<int64_t>& y) {
      std::vector<int64_t> f;
      for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
        if (std::find(x.begin(), x.end(), d) == x.end() &&
            std::find(y.begin(), y.end(), d) == y.end())
          f.push_back(d);
      return f;
    };
    auto lf = free_dims(as, lb, lc), rf = free_dims(bs, rb, rc);
    Shape batch;
    int64_t K = 1, M = 1, N = 1;
    for (size_t k = 0; k < lb.size(); ++k) {
      if (as.at(static_cast<size_t>(lb[k])) != bs.at(static_cast<size_t>(rb[k])))
        fail(i, "dot: batch dims differ");
      batch.push_back(as[static_cast<size_t>(lb[k])]);
    }
    for (size_t k = 0; k < lc.size(); ++k) {
      if (as.at(static_cast<size_t>(lc[k])) != bs.at(static_cast<size_t>(rc[k])))
        fail(i, "dot: contracting dims differ");
      K *= as[static_cast<size_t>(lc[k])];
    }
    for (auto d : lf) M *= as[static_cast<size_t>(d)];
    for (auto d : rf) N *= bs[static_cast<size_t>(d)];
    std::vector<int64_t> pa = lb, pb = rb;
    pa.insert(pa.end(), lf.begin(), lf.end());
    pa.insert(pa.end(), lc.begin(), lc.end());
    pb.insert(pb.end(), rc.begin(), rc.end());
    pb.insert(pb.end(), rf.begin(), rf.end());
    Shape a3 = batch, b3 = batch, o3 = batch;
    a3.insert(a3.end(), {M, K});
    b3.insert(b3.end(), {K, N});
    o3.insert(o3.end(), {M, N});
    std::string x = reshape(transpose(a, pa), a3), y = reshape(transpose(b, pb), b3);
    std::string z = emit("matmul", {x, y}, {}, o3);
    return reshape(z, i.shape.dims);
  }

  Val collective(const Instr& i, std::map<std::string, Val>& env) {
    const std::string& op = i.opcode;
    if (op == "all-reduce-start")
      unsupported(i, "an asynchronous collective (read the module before scheduling)");
    std::vector<Val> xs;
    for (size_t k = 0; k < i.operands.size(); ++k) xs.push_back(get(env, i, k));
    if (xs.empty()) fail(i, "a collective without operands");
    auto apply = [&](const Val& x, const Shape& s) -> Val {
      std::string t = tensor(x, i);
      ir::AttrMap a;
      if (op == "collective-permute") return permute(i, t, s);
      if (!group_attr(i, a)) return tensor_val(emit("identity", {t}, {}, s), s, x.dt);
      if (op == "all-reduce" || op == "reduce-scatter") {
        std::string r = reducer(i, "to_apply");
        if (r == "add")
          a["reduce"] = std::string("sum");
        else if (r == "maximum")
          a["reduce"] = std::string("max");
        else
          unsupported(i, "a reduction by '" + r + "'");
      }
      if (op == "all-reduce") return tensor_val(emit("allreduce", {t}, a, s), s, x.dt);
      auto d = ints_attr(i, "dimensions");
      if (d.size() != 1) unsupported(i, "a collective over several dimensions");
      if (op == "all-gather") {
        a["dim"] = ir::DimExpr(d[0]);
        return tensor_val(emit("allgather", {t}, a, s), s, x.dt);
      }
      if (op == "reduce-scatter") {
        a["dim"] = ir::DimExpr(d[0]);
        return tensor_val(emit("reduce_scatter", {t}, a, s), s, x.dt);
      }
      a["split_dim"] = ir::DimExpr(d[0]);
      a["concat_dim"] = ir::DimExpr(d[0]);
      return tensor_val(emit("all_to_all", {t}, a, s), s, x.dt);
    };
    if (xs.size() == 1) {
      if (i.shape.is_tuple) unsupported(i, "a tuple-shaped collective of one operand");
      return apply(xs[0], i.shape.dims);
    }
    if (!i.shape.is_tuple || i.shape.tuple.size() != xs.size())
      unsupported(i, "a collective of several operands");
    Val t;
    t.k = Val::K::tuple;
    for (size_t k = 0; k < xs.size(); ++k) t.elems.push_back(apply(xs[k], i.shape.tuple[k].dims));
    return t;
  }

  // Any other collective-permute: every partition gathers every value and
  // keeps its source's (zeros, appended, where it has none). Exact; the
  // source must be an affine function of the mesh coordinates.
  Val gather_pick(const Instr& i, const std::string& x, const Shape& s,
                  const std::map<int64_t, int64_t>& target) {
    std::vector<int64_t> source(static_cast<size_t>(ranks_), -1);  // -1: receives nothing
    for (const auto& [src, dst] : target) source[static_cast<size_t>(dst)] = src;
    // The axes values move along; each value is gathered along them only.
    ir::Strings axes;
    std::vector<size_t> moving;
    for (size_t a = 0; a < mesh_.axes.size(); ++a) {
      bool moves = false;
      for (const auto& [src, dst] : target)
        moves |= mesh_.coord_of(src)[a] != mesh_.coord_of(dst)[a];
      if (moves) {
        axes.push_back(mesh_.axes[a].name);
        moving.push_back(a);
      }
    }
    int64_t group = 1;
    for (auto a : moving) group *= mesh_.axes[a].size;
    // Each source's position in its receiver's group (the linear index over
    // the moving axes), on the ranks that receive.
    std::vector<int64_t> pos(static_cast<size_t>(ranks_), 0);
    std::vector<bool> present(static_cast<size_t>(ranks_), false);
    for (int64_t r = 0; r < ranks_; ++r) {
      const int64_t src = source[static_cast<size_t>(r)];
      if (src < 0) continue;
      ir::Coord a = mesh_.coord_of(src), b = mesh_.coord_of(r);
      int64_t li = 0;
      for (size_t k = 0; k < a.size(); ++k) {
        bool is_moving = std::find(moving.begin(), moving.end(), k) != moving.end();
        if (!is_moving && a[k] != b[k])
          unsupported(i, "a permute that moves values along axes it does not name");
        if (is_moving) li = li * mesh_.axes[k].size + a[k];
      }
      pos[static_cast<size_t>(r)] = li;
      present[static_cast<size_t>(r)] = true;
    }
    // A rank that receives nothing gets zeros: the formula must point it
    // outside the group, where zero blocks are appended on either side.
    auto outside = [&](const ir::DimExpr& e) {
      for (int64_t r = 0; r < ranks_; ++r) {
        if (present[static_cast<size_t>(r)]) continue;
        ir::Bindings b;
        for (size_t k = 0; k < mesh_.axes.size(); ++k)
          b["$" + mesh_.axes[k].name] = mesh_.coord_of(r)[k];
        int64_t at = 0;
        if (!e.try_eval(b, at) || (at >= 0 && at < group)) return false;
      }
      return true;
    };
    auto off = fit_affine(pos, present, outside);
    if (!off)
      unsupported(
          i,
          "a permute whose sources are no affine function of the mesh coordinates that points the "
          "partitions receiving nothing outside their group");
    int64_t below = 0, above = 0;
    for (int64_t r = 0; r < ranks_; ++r) {
      if (present[static_cast<size_t>(r)]) continue;
      ir::Bindings b;
      for (size_t k = 0; k < mesh_.axes.size(); ++k)
        b["$" + mesh_.axes[k].name] = mesh_.coord_of(r)[k];
      const int64_t at = off->eval(b);
      below = std::max(below, -at);
      above = std::max(above, at - group + 1);
    }
    Shape one{1}, all{group};
    one.insert(one.end(), s.begin(), s.end());
    all.insert(all.end(), s.begin(), s.end());
    std::string g =
        emit("allgather", {reshape(x, one)}, {{"axes", axes}, {"dim", ir::DimExpr(0)}}, all);
    if (below || above) {
      std::vector<std::string> parts;
      Shape zb = one, za = one;
      zb[0] = below;
      za[0] = above;
      if (below) parts.push_back(fill(0.0, zb));
      parts.push_back(g);
      if (above) parts.push_back(fill(0.0, za));
      Shape more = all;
      more[0] += below + above;
      g = emit("concat", parts, {{"dim", ir::DimExpr(0)}}, more);
    }
    ir::DimExpr at = below ? *off + ir::DimExpr(below) : *off;
    std::string picked = emit(
        "slice", {g}, {{"dim", ir::DimExpr(0)}, {"offset", at}, {"size", ir::DimExpr(1)}}, one);
    return tensor_val(reshape(picked, s), s);
  }

  // collective-permute as a send and a receive: a cyclic shift along one mesh
  // axis (every partition sends once and receives once), others kept.
  Val permute(const Instr& i, const std::string& x, const Shape& s) {
    const std::string* p = i.attr("source_target_pairs");
    if (!p) fail(i, "collective-permute without source_target_pairs");
    std::vector<std::vector<int64_t>> pairs;
    try {
      std::string body = *p;
      if (body.size() >= 2 && body.front() == '{') body = body.substr(1, body.size() - 2);
      for (const auto& g : split_top(body)) pairs.push_back(int_list(g));
    } catch (const std::exception&) {
      fail(i, "source_target_pairs is not a list of pairs: " + *p);
    }
    if (mode_ == Mode::spec) {
      for (const auto& pr : pairs)
        if (pr.size() != 2 || pr[0] != pr[1])
          unsupported(i, "a permute across devices in the single-device program");
      return tensor_val(emit("identity", {x}, {}, s), s);
    }
    std::map<int64_t, int64_t> target;
    std::set<int64_t> targets;
    for (const auto& pr : pairs) {
      if (pr.size() != 2 || pr[0] < 0 || pr[0] >= ranks_ || pr[1] < 0 || pr[1] >= ranks_)
        fail(i, "bad source/target pair");
      if (!target.emplace(pr[0], pr[1]).second || !targets.insert(pr[1]).second)
        fail(i, "a partition sends or receives twice");
    }
    std::optional<size_t> axis;
    int64_t shift = 0;
    bool cyclic = static_cast<int64_t>(target.size()) == ranks_;
    for (const auto& [src, dst] : target) {
      ir::Coord a = mesh_.coord_of(src), b = mesh_.coord_of(dst);
      for (size_t k = 0; k < a.size(); ++k) {
        if (a[k] == b[k]) continue;
        int64_t n = mesh_.axes[k].size, d = ((b[k] - a[k]) % n + n) % n;
        if ((axis && *axis != k) || (axis && shift != d)) cyclic = false;
        axis = k;
        shift = d;
      }
    }
    if (cyclic && axis)
      for (const auto& [src, dst] : target) {
        ir::Coord a = mesh_.coord_of(src), b = mesh_.coord_of(dst);
        a[*axis] = (a[*axis] + shift) % mesh_.axes[*axis].size;
        cyclic &= a == b;
      }
    if (!cyclic) return gather_pick(i, x, s, target);
    if (!axis) return tensor_val(emit("identity", {x}, {}, s), s);
    const std::string& ax = mesh_.axes[*axis].name;
    const int64_t n = mesh_.axes[*axis].size;
    const ir::DimExpr me = ir::DimExpr::sym("$" + ax);
    // The ring in terms of the axis size, so that the axis reduces: a step of
    // k forward or back, whichever is shorter.
    const ir::DimExpr size = ir::DimExpr::sym(ax);
    const bool back = 2 * shift > n;
    const int64_t k = back ? n - shift : shift;
    auto step = [&](bool forward) {
      return forward ? (me + ir::DimExpr(k)) % size : (me + size - ir::DimExpr(k)) % size;
    };
    int64_t tag = 0;
    if (const std::string* ch = i.attr("channel_id")) tag = parse_int(i, *ch, "channel id");
    ir::Op send;
    send.kind = "send";
    send.operands = {x};
    send.attrs = {{"peer", ir::Coords{{ax, step(!back)}}}, {"tag", ir::DimExpr(tag)}};
    send.line = i.line;
    send.col = i.col;
    send.origin = i.origin;
    g_.ops.push_back(send);
    return tensor_val(emit("recv", {},
                           {{"peer", ir::Coords{{ax, step(back)}}},
                            {"tag", ir::DimExpr(tag)},
                            {"shape", dims_of(s)}},
                           s),
                      s);
  }
};

}  // namespace

Imported import_entry(const Module& m, Mode mode, const ir::Mesh& mesh,
                      const std::vector<std::string>& names) {
  Importer im(m, mode, mesh);
  return im.run(names);
}

std::vector<std::string> param_names(const Module& m) {
  std::map<int64_t, std::string> by;
  std::set<std::string> seen;
  for (const auto& i : m.entry()->instrs) {
    if (i.opcode != "parameter") continue;
    int64_t k = 0;
    try {
      k = std::stoll(i.operand_text);
    } catch (const std::exception&) {
      continue;
    }
    std::string n;
    if (const std::string* md = i.attr("metadata")) {
      auto at = md->find("op_name=\"");
      if (at != std::string::npos) {
        auto end = md->find('"', at + 9);
        std::string raw =
            md->substr(at + 9, end == std::string::npos ? std::string::npos : end - at - 9);
        for (char c : raw) {
          if (std::isalnum(static_cast<unsigned char>(c)) || c == '_')
            n += c;
          else if (!n.empty() && n.back() != '_' && (c == '.' || c == '[' || c == '\'' || c == '/'))
            n += '_';
        }
        while (!n.empty() && n.back() == '_') n.pop_back();
      }
    }
    if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) n = "arg" + std::to_string(k);
    std::string u = n;
    for (int j = 1; seen.count(u); ++j) u = n + "_" + std::to_string(j);
    seen.insert(u);
    by[k] = u;
  }
  std::vector<std::string> out;
  for (auto& [k, n] : by) out.push_back(n);
  return out;
}

}  // namespace parity::frontend::hlo
