// linalg: every structured op (named or generic) through its indexing maps and
// scalar body. Operands are brought to the iteration domain (transpose,
// reshape, broadcast), the body runs elementwise over the domain, and a
// reduction body `acc = combine(acc, f(...))` becomes f over the domain,
// reduced over the reduction loops, combined with the init operand.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/IR/AffineMap.h>

#include "frontend/mlir/importer.h"

namespace parity::frontend::mlirio {

namespace {

enum class Combine { none, sum, max, min };

Combine combine_of(mlir::Operation* op) {
  if (!op) return Combine::none;
  if (mlir::isa<mlir::arith::AddFOp, mlir::arith::AddIOp>(op)) return Combine::sum;
  if (mlir::isa<mlir::arith::MaximumFOp, mlir::arith::MaxNumFOp>(op)) return Combine::max;
  if (mlir::isa<mlir::arith::MinimumFOp, mlir::arith::MinNumFOp>(op)) return Combine::min;
  return Combine::none;
}

// The operand brought to the iteration domain: dims in domain order, then
// broadcast along the loops its map does not mention.
std::string to_domain(Importer& im, mlir::Operation* op, const std::string& x, mlir::AffineMap map,
                      const Shape& domain) {
  if (!map.isProjectedPermutation()) im.unsupported(op, "an indexing map that is not a projected permutation");
  std::vector<int64_t> pos;
  for (unsigned j = 0; j < map.getNumResults(); ++j) pos.push_back(map.getDimPosition(j));
  std::vector<int64_t> order(pos.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int64_t>(j);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return pos[static_cast<size_t>(a)] < pos[static_cast<size_t>(b)]; });
  std::string t = im.transpose(x, order);
  Shape keep(domain.size(), 1);
  for (auto p : pos) keep[static_cast<size_t>(p)] = domain[static_cast<size_t>(p)];
  t = im.reshape(t, keep);
  return im.broadcast(t, domain);
}

bool import_softmax(Importer& im, mlir::Operation& op) {
  auto s = mlir::dyn_cast<mlir::linalg::SoftmaxOp>(op);
  if (!s) return false;
  std::string x = im.tensor(s.getInput(), &op);
  im.set_tensor(s.getResult()[0], im.emit("softmax", {x}, {{"dim", ir::DimExpr(static_cast<int64_t>(s.getDimension()))}},
                                          im.shape_of(x)));
  return true;
}

}  // namespace

bool import_linalg(Importer& im, mlir::Operation& op) {
  if (!op.getDialect() || op.getDialect()->getNamespace() != "linalg") return false;
  if (import_softmax(im, op)) return true;
  auto lop = mlir::dyn_cast<mlir::linalg::LinalgOp>(op);
  if (!lop) im.unsupported(&op, "not a structured linalg op");
  if (!lop.hasPureTensorSemantics()) im.unsupported(&op, "linalg on buffers (memrefs)");
  if (lop.hasIndexSemantics()) im.unsupported(&op, "the body reads linalg.index");
  for (mlir::Value r : op.getResults()) im.static_shape(r.getType(), &op);
  Shape domain;
  for (int64_t d : lop.getStaticLoopRanges()) {
    if (mlir::ShapedType::isDynamic(d)) im.unsupported(&op, "dynamic loop ranges");
    domain.push_back(d);
  }
  auto iters = lop.getIteratorTypesArray();
  std::vector<int64_t> red, par;
  for (size_t k = 0; k < iters.size(); ++k)
    (iters[k] == mlir::utils::IteratorType::reduction ? red : par).push_back(static_cast<int64_t>(k));

  mlir::Block* body = lop.getBlock();
  auto* yield = body->getTerminator();
  auto inits = lop.getDpsInitsMutable();

  // Reductions: find `combine(acc, e)` for each result; the body runs without
  // those combine ops, and acc must not be read anywhere else.
  std::vector<Combine> comb(inits.size(), Combine::none);
  std::vector<mlir::Value> reduced(inits.size());
  llvm::SmallPtrSet<mlir::Operation*, 4> skip;
  if (!red.empty()) {
    for (size_t k = 0; k < inits.size(); ++k) {
      mlir::BlockArgument acc = lop.getMatchingBlockArgument(&inits[static_cast<unsigned>(k)]);
      mlir::Operation* c = yield->getOperand(static_cast<unsigned>(k)).getDefiningOp();
      comb[k] = combine_of(c);
      if (comb[k] == Combine::none || !acc.hasOneUse() || !c->hasOneUse())
        im.unsupported(&op, "a reduction body that is not `acc = add/max/min(acc, f(inputs))`");
      if (c->getOperand(0) == acc) reduced[k] = c->getOperand(1);
      else if (c->getOperand(1) == acc) reduced[k] = c->getOperand(0);
      else im.unsupported(&op, "a reduction body that is not `acc = add/max/min(acc, f(inputs))`");
      skip.insert(c);
    }
  }

  // Block arguments that the body reads, brought to the domain.
  for (mlir::OpOperand& o : op.getOpOperands()) {
    mlir::BlockArgument a = lop.getMatchingBlockArgument(&o);
    if (a.use_empty()) continue;
    if (!red.empty() && lop.isDpsInit(&o)) continue;  // the accumulator: combined below
    std::string x = im.tensor(o.get(), &op);
    im.set_tensor(a, to_domain(im, &op, x, lop.getMatchingIndexingMap(&o), domain));
  }
  for (mlir::Operation& b : *body) {
    if (&b == yield || skip.contains(&b)) continue;
    im.import_op(b);
  }

  for (size_t k = 0; k < inits.size(); ++k) {
    mlir::OpOperand& init = inits[static_cast<unsigned>(k)];
    mlir::AffineMap omap = lop.getMatchingIndexingMap(&init);
    if (!omap.isProjectedPermutation()) im.unsupported(&op, "an output map that is not a projected permutation");
    Shape out = im.static_shape(op.getResult(static_cast<unsigned>(k)).getType(), &op);
    if (red.empty()) {
      std::string y = im.broadcast(im.tensor(yield->getOperand(static_cast<unsigned>(k)), &op), domain);
      std::vector<int64_t> perm;
      for (unsigned j = 0; j < omap.getNumResults(); ++j) perm.push_back(omap.getDimPosition(j));
      if (perm.size() != domain.size()) im.unsupported(&op, "an output map that drops parallel loops");
      im.set_tensor(op.getResult(static_cast<unsigned>(k)), im.transpose(y, perm));
      continue;
    }
    std::string e = im.broadcast(im.tensor(reduced[k], &op), domain);
    Shape rshape;
    for (auto p : par) rshape.push_back(domain[static_cast<size_t>(p)]);
    ir::AttrMap attrs{{"dims", ir::Dims(red.begin(), red.end())}};
    std::string r;
    if (comb[k] == Combine::sum) r = im.emit("reduce_sum", {e}, attrs, rshape);
    if (comb[k] == Combine::max) r = im.emit("reduce_max", {e}, attrs, rshape);
    if (comb[k] == Combine::min)  // min x = -max(-x)
      r = im.emit("neg", {im.emit("reduce_max", {im.emit("neg", {e}, {}, domain)}, attrs, rshape)}, {}, rshape);
    // r has the parallel loops in domain order; the output map orders them.
    std::vector<int64_t> perm;
    for (unsigned j = 0; j < omap.getNumResults(); ++j) {
      int64_t p = omap.getDimPosition(j);
      auto it = std::find(par.begin(), par.end(), p);
      if (it == par.end()) im.unsupported(&op, "an output map that reads a reduction loop");
      perm.push_back(it - par.begin());
    }
    if (perm.size() != par.size()) im.unsupported(&op, "an output map that drops parallel loops");
    r = im.transpose(r, perm);
    std::string acc = im.tensor(init.get(), &op);
    const char* kind = comb[k] == Combine::sum ? "add" : comb[k] == Combine::max ? "maximum" : "minimum";
    im.set_tensor(op.getResult(static_cast<unsigned>(k)), im.emit(kind, {acc, r}, {}, out));
  }
  return true;
}

}  // namespace parity::frontend::mlirio
