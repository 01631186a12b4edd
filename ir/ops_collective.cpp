// Collectives and point-to-point ops, with NCCL's semantics. A group is given
// by mesh `axes` (the ranks that differ only on those axes, ordered by their
// coordinates there) or by explicit rank `groups`.
#include "ir/op_registry.h"

namespace parity::ir {

namespace {
const std::vector<AttrSpec> kGroupAttrs = {{"axes", AttrKind::Strings, false}, {"groups", AttrKind::Groups, false}};

std::vector<AttrSpec> with_group(std::vector<AttrSpec> extra) {
  extra.insert(extra.end(), kGroupAttrs.begin(), kGroupAttrs.end());
  return extra;
}

void check_reduce(const ShapeCtx& c) {
  std::string red = c.s("reduce", "sum");
  if (red != "sum" && red != "max" && red != "avg") c.fail("reduce must be sum, max or avg, got '" + red + "'");
}

// The group size as a shape factor: the product of the axis sizes by name
// when the group is given by axes (so a smaller mesh keeps the shapes
// consistent, and no literal stands for an axis size), else the number.
DimExpr group_factor(const ShapeCtx& c, int64_t n) {
  const Attr* axes = c.op.attr("axes");
  if (!axes || !std::holds_alternative<Strings>(*axes)) return DimExpr(n);
  DimExpr f;
  bool first = true;
  for (const auto& a : std::get<Strings>(*axes)) {
    f = first ? DimExpr::sym(a) : f * DimExpr::sym(a);
    first = false;
  }
  return f;
}

std::vector<TensorType> allreduce_rule(const ShapeCtx& c) {
  c.group_size();
  check_reduce(c);
  return {c.in[0]};
}

std::vector<TensorType> allgather_rule(const ShapeCtx& c) {
  int64_t n = c.group_size();
  size_t d = c.axis(c.eval(c.i("dim")), 0);
  auto out = c.in[0];
  out.shape[d] = out.shape[d] * group_factor(c, n);
  return {out};
}

std::vector<TensorType> reduce_scatter_rule(const ShapeCtx& c) {
  int64_t n = c.group_size();
  check_reduce(c);
  size_t d = c.axis(c.eval(c.i("dim")), 0);
  if (c.eval(c.in[0].shape[d]) % n)
    c.fail("reduce_scatter: dim " + c.in[0].shape[d].str() + " is not divisible by the group size " + std::to_string(n));
  auto out = c.in[0];
  out.shape[d] = out.shape[d] / group_factor(c, n);
  return {out};
}

std::vector<TensorType> all_to_all_rule(const ShapeCtx& c) {
  int64_t n = c.group_size();
  size_t s = c.axis(c.eval(c.i("split_dim")), 0), k = c.axis(c.eval(c.i("concat_dim")), 0);
  if (c.eval(c.in[0].shape[s]) % n)
    c.fail("all_to_all: split dim " + c.in[0].shape[s].str() + " is not divisible by the group size " + std::to_string(n));
  auto out = c.in[0];
  out.shape[s] = out.shape[s] / group_factor(c, n);
  out.shape[k] = out.shape[k] * group_factor(c, n);
  return {out};
}

std::vector<TensorType> broadcast_rule(const ShapeCtx& c) {
  int64_t n = c.group_size();
  int64_t root = c.ival("root", 0);
  if (root < 0 || root >= n) c.fail("broadcast: root " + std::to_string(root) + " outside the group of " + std::to_string(n));
  return {c.in[0]};
}

void check_peer(const ShapeCtx& c) {
  if (!c.mesh()) c.fail("point-to-point op outside a plan program");
  const Attr* p = c.op.attr("peer");
  if (!p || !std::holds_alternative<Coords>(*p)) c.fail("missing attribute 'peer' (coords, e.g. pp=$pp+1)");
  for (const auto& [axis, e] : std::get<Coords>(*p))
    if (!c.mesh()->axis_index(axis)) c.fail("peer names unknown mesh axis '" + axis + "'");
  c.i("tag");
}

std::vector<TensorType> send_rule(const ShapeCtx& c) {
  check_peer(c);
  return {};
}

std::vector<TensorType> recv_rule(const ShapeCtx& c) {
  check_peer(c);
  auto t = parse_dtype(c.s("dtype", "f32"));
  if (!t) c.fail("unknown dtype '" + c.s("dtype") + "'");
  return {TensorType{*t, c.ints("shape")}};
}
}  // namespace

void register_collective_ops(OpRegistry& r) {
  auto coll = [&](OpDef d) {
    d.collective = true;
    r.add(std::move(d));
  };
  coll(OpDef{"allreduce", 1, 1, with_group({{"reduce", AttrKind::String, false}}), allreduce_rule,
             "every rank of the group gets the reduction (sum, max, avg) of the group's values"});
  coll(OpDef{"allgather", 1, 1, with_group({{"dim", AttrKind::Int, true}}), allgather_rule,
             "concatenation of the group's values along dim, in group order"});
  coll(OpDef{"reduce_scatter", 1, 1, with_group({{"dim", AttrKind::Int, true}, {"reduce", AttrKind::String, false}}),
             reduce_scatter_rule, "group member i gets chunk i (along dim) of the reduction"});
  coll(OpDef{"all_to_all", 1, 1, with_group({{"split_dim", AttrKind::Int, true}, {"concat_dim", AttrKind::Int, true}}),
             all_to_all_rule, "member i sends chunk j of split_dim to member j; received chunks concatenate along concat_dim"});
  coll(OpDef{"broadcast", 1, 1, with_group({{"root", AttrKind::Int, false}}), broadcast_rule,
             "every member gets the value of group member `root`"});
  // Megatron's "f": identity in the forward, an allreduce of the gradient in the
  // backward (the adjoint of a collective-free copy into a tensor-parallel region).
  r.add(OpDef{"grad_allreduce", 1, 1, {{"grad_axes", AttrKind::Strings, true}},
              [](const ShapeCtx& c) {
                if (!c.mesh()) c.fail("grad_allreduce outside a plan program");
                const auto axes = c.strs("grad_axes");
                for (size_t k = 0; k < axes.size(); ++k) {
                  if (!c.mesh()->axis_index(axes[k])) c.fail("unknown mesh axis '" + axes[k] + "'");
                  for (size_t j = 0; j < k; ++j)
                    if (axes[j] == axes[k]) c.fail("mesh axis '" + axes[k] + "' is listed twice in 'grad_axes'");
                }
                return std::vector<TensorType>{c.in[0]};
              },
              "identity; its adjoint allreduces the gradient over grad_axes"});
  OpDef send{"send", 1, 1, {{"peer", AttrKind::Coords, true}, {"tag", AttrKind::Int, true}}, send_rule,
             "sends to the rank at `peer` coordinates (axes not named keep this rank's coordinate); buffered"};
  send.p2p = true;
  r.add(send);
  OpDef recv{"recv", 0, 0,
             {{"peer", AttrKind::Coords, true}, {"tag", AttrKind::Int, true}, {.name = "shape", .kind = AttrKind::Ints, .required = true, .extent = true},
              {"dtype", AttrKind::String, false}},
             recv_rule, "receives the value the `peer` rank sent with this tag; blocks until it arrives"};
  recv.p2p = true;
  r.add(recv);
}

}  // namespace parity::ir
