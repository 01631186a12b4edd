// Layout ops, and `loop` (a folded microbatch or layer loop whose region is the body).
#include "ir/op_registry.h"

#include <algorithm>
#include <set>

namespace parity::ir {

namespace {
std::vector<TensorType> reshape_rule(const ShapeCtx& c) {
  Dims shape = c.ints("shape");
  int64_t n = 1, m = 1;
  for (const auto& d : c.in[0].shape) n *= c.eval(d);
  for (const auto& d : shape) {
    if (c.eval(d) < 1) c.fail("reshape: dim " + d.str() + " must be positive");
    m *= c.eval(d);
  }
  if (n != m) c.fail("reshape changes the element count: " + std::to_string(n) + " -> " + std::to_string(m));
  return {TensorType{c.in[0].dtype, shape}};
}

std::vector<TensorType> transpose_rule(const ShapeCtx& c) {
  Dims perm = c.ints("perm");
  if (perm.size() != c.in[0].rank()) c.fail("transpose: perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(c.in[0].rank()));
  std::vector<bool> seen(perm.size(), false);
  std::vector<DimExpr> out;
  for (const auto& p : perm) {
    size_t k = c.axis(c.eval(p), 0);
    if (seen[k]) c.fail("transpose: perm is not a permutation");
    seen[k] = true;
    out.push_back(c.in[0].shape[k]);
  }
  return {TensorType{c.in[0].dtype, out}};
}

std::vector<TensorType> slice_rule(const ShapeCtx& c) {
  size_t d = c.axis(c.eval(c.i("dim")), 0);
  DimExpr off = c.i("offset"), size = c.i("size");
  int64_t extent = c.eval(c.in[0].shape[d]), sz = c.eval(size);
  if (sz < 1) c.fail("slice: size " + size.str() + " must be positive");
  c.for_each_coord(off, [&](const Bindings& b) {
    int64_t o;
    if (!off.try_eval(b, o)) c.fail("slice: offset '" + off.str() + "' cannot be evaluated");
    if (o < 0 || o + sz > extent) {
      std::string where;
      for (const auto& [k, v] : b)
        if (!k.empty() && k[0] == '$') where += " " + k + "=" + std::to_string(v);
      c.fail("slice [" + std::to_string(o) + ", " + std::to_string(o + sz) + ") out of bounds of dim " +
             std::to_string(d) + " (size " + std::to_string(extent) + ")" + (where.empty() ? "" : " at" + where));
    }
  });
  auto out = c.in[0];
  out.shape[d] = size;
  return {out};
}

std::vector<TensorType> concat_rule(const ShapeCtx& c) {
  size_t d = c.axis(c.eval(c.i("dim")), 0);
  auto out = c.in[0];
  for (size_t k = 1; k < c.in.size(); ++k) {
    if (c.in[k].rank() != out.rank()) c.fail("concat: operand " + std::to_string(k) + " has a different rank");
    for (size_t j = 0; j < out.rank(); ++j)
      if (j != d) c.expect_same(out.shape[j], c.in[k].shape[j], "concat: operand " + std::to_string(k) + " dim " + std::to_string(j));
    out.shape[d] = out.shape[d] + c.in[k].shape[d];
  }
  return {out};
}

std::vector<TensorType> broadcast_rule(const ShapeCtx& c) {
  Dims shape = c.ints("shape");
  auto b = broadcast_shapes(c, c.in[0].shape, shape);
  if (b.size() != shape.size()) c.fail("broadcast_to: target has lower rank than the operand");
  for (size_t k = 0; k < b.size(); ++k) c.expect_same(b[k], shape[k], "broadcast_to: dim " + std::to_string(k));
  return {TensorType{c.in[0].dtype, shape}};
}

std::vector<TensorType> pad_rule(const ShapeCtx& c) {
  size_t d = c.axis(c.eval(c.i("dim")), 0);
  DimExpr before = c.i("before"), after = c.i("after");
  // Padding may depend on the rank (the adjoint of a rank-dependent slice), but
  // the total must not: every rank's result has one shape.
  int64_t total = -1;
  c.for_each_coord(before + after, [&](const Bindings& b) {
    int64_t x, y;
    if (!before.try_eval(b, x) || !after.try_eval(b, y)) c.fail("pad: cannot evaluate the padding");
    if (x < 0 || y < 0) c.fail("pad: negative padding (" + std::to_string(x) + ", " + std::to_string(y) + ")");
    if (total >= 0 && x + y != total) c.fail("pad: the total padding differs between ranks");
    total = x + y;
  });
  auto out = c.in[0];
  // Kept symbolic when no coordinate enters it: the type then holds at any
  // binding of the dims (the layer fold types its stubs from the plan as
  // given and the reduction shrinks them after; `KVL` evaluated to 4 there
  // would pin every size equal to 4).
  std::set<std::string> syms;
  (before + after).symbols(syms);
  const bool per_rank = std::any_of(syms.begin(), syms.end(), [](const std::string& s) { return !s.empty() && s[0] == '$'; });
  out.shape[d] = out.shape[d] + (per_rank ? DimExpr(total) : before + after);
  return {out};
}

std::vector<TensorType> loop_rule(const ShapeCtx& c) {
  if (c.eval(c.i("count")) < 1) c.fail("loop: count must be at least 1");
  std::string var = c.s("var");
  if (var.empty()) c.fail("loop: empty 'var'");
  return c.in;  // carried values keep their types; the body is checked by the validator
}
}  // namespace

void register_shape_ops(OpRegistry& r) {
  auto add = [&r](OpDef d) {
    d.moves = d.linear = true;  // every shape op copies elements (pad adds zeros)
    r.add(std::move(d));
  };
  add(OpDef{"reshape", 1, 1, {{.name = "shape", .kind = AttrKind::Ints, .required = true, .extent = true}}, reshape_rule, "row-major reshape"});
  add(OpDef{"transpose", 1, 1, {{"perm", AttrKind::Ints, true}}, transpose_rule, "out dim k = in dim perm[k]"});
  add(OpDef{"slice", 1, 1, {{"dim", AttrKind::Int, true}, {.name = "offset", .kind = AttrKind::Int, .required = true, .extent = true}, {.name = "size", .kind = AttrKind::Int, .required = true, .extent = true}},
              slice_rule, "elements [offset, offset+size) of dim; offset may use $axis"});
  add(OpDef{"concat", 1, -1, {{"dim", AttrKind::Int, true}}, concat_rule, "concatenation along dim"});
  add(OpDef{"broadcast_to", 1, 1, {{.name = "shape", .kind = AttrKind::Ints, .required = true, .extent = true}}, broadcast_rule, "numpy broadcast to shape"});
  add(OpDef{"pad", 1, 1, {{"dim", AttrKind::Int, true}, {.name = "before", .kind = AttrKind::Int, .required = true, .extent = true}, {.name = "after", .kind = AttrKind::Int, .required = true, .extent = true}},
              pad_rule, "zero padding along dim"});
  OpDef loop{"loop", 0, -1, {{"count", AttrKind::Int, true}, {"var", AttrKind::String, true}}, loop_rule,
             "runs its region `count` times with $var = 0..count-1; operands are the initial carried values, "
             "results the final ones"};
  loop.regions = 1;
  r.add(loop);
}

}  // namespace parity::ir
