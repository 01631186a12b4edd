// arith/math elementwise ops (on tensors, and on scalars inside linalg
// bodies), constants, tosa and the tensor dialect's shape ops.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/Matchers.h>

#include "frontend/mlir/importer.h"

namespace parity::frontend::mlirio {

namespace {

std::string ns(mlir::Operation& op) { return op.getDialect() ? op.getDialect()->getNamespace().str() : ""; }

Shape broadcast_shape(Importer& im, mlir::Operation* op, const std::vector<std::string>& xs) {
  Shape out;
  for (const auto& x : xs) {
    const Shape& s = im.shape_of(x);
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[out.size() - s.size() + k];
      if (o == 1) o = s[k];
      else if (s[k] != 1 && s[k] != o) im.unsupported(op, "operand shapes do not broadcast");
    }
  }
  return out;
}

// A float constant: a splat fills, a small dense one is assembled element by element.
bool import_constant(Importer& im, mlir::Operation& op, mlir::Attribute a) {
  mlir::Value r = op.getResult(0);
  if (auto f = mlir::dyn_cast<mlir::FloatAttr>(a)) {
    im.set_tensor(r, im.fill(f.getValueAsDouble(), {}));
    return true;
  }
  auto d = mlir::dyn_cast<mlir::DenseElementsAttr>(a);
  if (!d || !mlir::isa<mlir::FloatType>(d.getElementType())) return false;
  Shape s = im.static_shape(r.getType(), &op);
  if (d.isSplat()) {
    im.set_tensor(r, im.fill(d.getSplatValue<llvm::APFloat>().convertToDouble(), s));
    return true;
  }
  if (d.getNumElements() > 1024) im.unsupported(&op, "dense constants of more than 1024 elements");
  std::vector<std::string> parts;
  for (const llvm::APFloat& v : d.getValues<llvm::APFloat>()) parts.push_back(im.fill(v.convertToDouble(), {1}));
  im.set_tensor(r, im.reshape(im.concat(parts, 0), s));
  return true;
}

std::string abs_of(Importer& im, const std::string& x) {
  const Shape& s = im.shape_of(x);
  return im.emit("maximum", {x, im.emit("neg", {x}, {}, s)}, {}, s);
}

}  // namespace

std::string elementwise_kind(mlir::Operation& op) {
  static const std::map<std::string, std::string> kinds{
      {"arith.addf", "add"},        {"arith.subf", "sub"},        {"arith.mulf", "mul"},
      {"arith.divf", "div"},        {"arith.maximumf", "maximum"}, {"arith.maxnumf", "maximum"},
      {"arith.minimumf", "minimum"}, {"arith.minnumf", "minimum"}, {"arith.negf", "neg"},
      {"math.exp", "exp"},          {"math.log", "log"},          {"math.sqrt", "sqrt"},
      {"math.rsqrt", "rsqrt"},      {"math.tanh", "tanh"},        {"arith.extf", "identity"},
      {"arith.truncf", "identity"}};
  auto it = kinds.find(op.getName().getStringRef().str());
  return it == kinds.end() ? "" : it->second;
}

bool import_elementwise(Importer& im, mlir::Operation& op) {
  std::string n = ns(op);
  if (n != "arith" && n != "math") return false;
  if (auto c = mlir::dyn_cast<mlir::arith::ConstantOp>(op)) {
    if (import_constant(im, op, c.getValue())) return true;
    im.unsupported(&op, "a non-float constant");
  }
  if (mlir::isa<mlir::math::AbsFOp>(op)) {
    im.set_tensor(op.getResult(0), abs_of(im, im.tensor(op.getOperand(0), &op)));
    return true;
  }
  std::string kind = elementwise_kind(op);
  if (kind.empty() || op.getNumResults() != 1) return false;
  std::vector<std::string> xs;
  for (mlir::Value v : op.getOperands()) xs.push_back(im.tensor(v, &op));
  Shape s = broadcast_shape(im, &op, xs);
  if (mlir::isa<mlir::RankedTensorType>(op.getResult(0).getType())) s = im.static_shape(op.getResult(0).getType(), &op);
  if (kind == "identity") {
    im.set_tensor(op.getResult(0), xs[0]);
    return true;
  }
  im.set_tensor(op.getResult(0), im.emit(kind, xs, {}, s));
  return true;
}

bool import_tosa(Importer& im, mlir::Operation& op) {
  if (ns(op) != "tosa") return false;
  std::string name = op.getName().getStringRef().str().substr(5);
  auto res = [&] { return im.static_shape(op.getResult(0).getType(), &op); };
  auto x = [&](unsigned k) { return im.tensor(op.getOperand(k), &op); };
  auto done = [&](const std::string& t) {
    im.set_tensor(op.getResult(0), t);
    return true;
  };
  if (name == "const_shape") return true;  // read by tosa.reshape through its result type
  if (name == "const") {
    auto a = op.getAttr("values");
    if (!a) a = op.getAttr("value");
    auto d = mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(a);
    // Integer constants are zero points and shifts, read by the ops below.
    if (d && !mlir::isa<mlir::FloatType>(d.getElementType())) return true;
    if (a && import_constant(im, op, a)) return true;
    im.unsupported(&op, "this constant");
  }
  static const std::map<std::string, std::string> binary{
      {"add", "add"}, {"sub", "sub"}, {"maximum", "maximum"}, {"minimum", "minimum"}, {"mul", "mul"}};
  static const std::map<std::string, std::string> unary{{"exp", "exp"},           {"log", "log"},
                                                        {"tanh", "tanh"},         {"sigmoid", "sigmoid"},
                                                        {"reciprocal", "reciprocal"}, {"rsqrt", "rsqrt"},
                                                        {"negate", "neg"}};
  if (auto it = binary.find(name); it != binary.end()) {
    if (name == "mul" && op.getNumOperands() == 3) {
      // The shift of a float multiply must be 0.
      mlir::DenseElementsAttr sh;
      if (!mlir::matchPattern(op.getOperand(2), mlir::m_Constant(&sh)) || !sh.isSplat() ||
          !sh.getSplatValue<llvm::APInt>().isZero())
        im.unsupported(&op, "a multiply with a non-zero shift");
    }
    return done(im.emit(it->second, {x(0), x(1)}, {}, res()));
  }
  if (auto it = unary.find(name); it != unary.end()) return done(im.emit(it->second, {x(0)}, {}, res()));
  if (name == "abs") return done(abs_of(im, x(0)));
  if (name == "cast") {
    // Float to float is the same real; to or from an integer type it rounds
    // or truncates, which is not modeled.
    auto elem = [](mlir::Type t) {
      auto st = mlir::dyn_cast<mlir::ShapedType>(t);
      return st ? st.getElementType() : t;
    };
    if (!mlir::isa<mlir::FloatType>(elem(op.getResult(0).getType())) ||
        !mlir::isa<mlir::FloatType>(elem(op.getOperand(0).getType())))
      im.unsupported(&op, "a cast to or from an integer type (rounding is not modeled)");
    return done(x(0));
  }
  if (name == "clamp") {
    auto lo = mlir::dyn_cast_or_null<mlir::FloatAttr>(op.getAttr("min_val"));
    auto hi = mlir::dyn_cast_or_null<mlir::FloatAttr>(op.getAttr("max_val"));
    if (!lo || !hi) im.unsupported(&op, "clamp bounds");
    Shape s = res();
    std::string t = x(0);
    double l = lo.getValueAsDouble(), h = hi.getValueAsDouble();
    // A bound at the element type's largest finite value (the usual "no
    // bound") clamps nothing the type can hold: dropped. One inside the range
    // (3.0e38 in f32) clamps values the type holds: kept.
    mlir::Type rt = op.getResult(0).getType();
    if (auto st = mlir::dyn_cast<mlir::ShapedType>(rt)) rt = st.getElementType();
    auto ft = mlir::dyn_cast<mlir::FloatType>(rt);
    if (!ft) im.unsupported(&op, "a clamp of integers");
    const double big = llvm::APFloat::getLargest(ft.getFloatSemantics()).convertToDouble();
    if (std::isfinite(l) && l > -big) t = im.emit("maximum", {t, im.fill(l, {})}, {}, s);
    if (std::isfinite(h) && h < big) t = im.emit("minimum", {t, im.fill(h, {})}, {}, s);
    return done(t);
  }
  if (name == "matmul") {
    for (unsigned k = 2; k < op.getNumOperands(); ++k) {
      mlir::DenseElementsAttr zp;
      if (!mlir::matchPattern(op.getOperand(k), mlir::m_Constant(&zp)) || !zp.isSplat() ||
          !(mlir::isa<mlir::FloatType>(zp.getElementType()) ? zp.getSplatValue<llvm::APFloat>().isZero()
                                                              : zp.getSplatValue<llvm::APInt>().isZero()))
        im.unsupported(&op, "a matmul with non-zero zero points");
    }
    return done(im.emit("matmul", {x(0), x(1)}, {}, res()));
  }
  if (name == "reduce_sum" || name == "reduce_max") {
    auto axis = mlir::dyn_cast_or_null<mlir::IntegerAttr>(op.getAttr("axis"));
    if (!axis) im.unsupported(&op, "reduction axis");
    return done(im.emit(name, {x(0)}, {{"dims", ir::Dims{ir::DimExpr(axis.getInt())}}, {"keepdim", ir::DimExpr(1)}},
                        res()));
  }
  if (name == "transpose") {
    auto perms = mlir::dyn_cast_or_null<mlir::DenseI32ArrayAttr>(op.getAttr("perms"));
    if (!perms) im.unsupported(&op, "transpose perms");
    return done(im.transpose(x(0), std::vector<int64_t>(perms.asArrayRef().begin(), perms.asArrayRef().end())));
  }
  if (name == "reshape") return done(im.reshape(x(0), res()));
  im.unsupported(&op, "this tosa op is not modeled");
}

bool import_tensor(Importer& im, mlir::Operation& op) {
  namespace tn = mlir::tensor;
  if (ns(op) != "tensor") return false;
  if (auto e = mlir::dyn_cast<tn::EmptyOp>(op)) {
    im.set(e.getResult(), TensorVal{"", im.static_shape(e.getType(), &op), &op});
    return true;
  }
  if (auto c = mlir::dyn_cast<tn::CastOp>(op)) {
    std::string s = im.tensor(c.getSource(), &op);
    if (im.shape_of(s) != im.static_shape(c.getType(), &op)) im.unsupported(&op, "a cast that changes the shape");
    im.set_tensor(c.getResult(), s);
    return true;
  }
  if (mlir::isa<tn::CollapseShapeOp, tn::ExpandShapeOp, tn::ReshapeOp>(op)) {
    im.set_tensor(op.getResult(0), im.reshape(im.tensor(op.getOperand(0), &op), im.static_shape(op.getResult(0).getType(), &op)));
    return true;
  }
  if (auto c = mlir::dyn_cast<tn::ConcatOp>(op)) {
    std::vector<std::string> xs;
    for (mlir::Value v : c.getInputs()) xs.push_back(im.tensor(v, &op));
    im.set_tensor(c.getResult(), im.concat(xs, static_cast<int64_t>(c.getDim())));
    return true;
  }
  auto offset_of = [&](mlir::OpFoldResult f) -> ir::DimExpr {
    if (auto a = mlir::dyn_cast<mlir::Attribute>(f)) return ir::DimExpr(mlir::cast<mlir::IntegerAttr>(a).getInt());
    return im.index(mlir::cast<mlir::Value>(f), &op).e;
  };
  auto static_of = [&](mlir::OpFoldResult f, const char* what) -> int64_t {
    if (auto a = mlir::dyn_cast<mlir::Attribute>(f)) return mlir::cast<mlir::IntegerAttr>(a).getInt();
    ir::DimExpr e = im.index(mlir::cast<mlir::Value>(f), &op).e;
    if (!e.is_const()) im.unsupported(&op, std::string("a rank-dependent ") + what);
    return e.const_value();
  };
  if (auto s = mlir::dyn_cast<tn::ExtractSliceOp>(op)) {
    std::string t = im.tensor(s.getSource(), &op);
    auto offs = s.getMixedOffsets(), sizes = s.getMixedSizes(), strides = s.getMixedStrides();
    for (size_t d = 0; d < offs.size(); ++d) {
      if (static_of(strides[d], "stride") != 1) im.unsupported(&op, "strided slices");
      t = im.slice(t, static_cast<int64_t>(d), offset_of(offs[d]), static_of(sizes[d], "size"));
    }
    im.set_tensor(s.getResult(), im.reshape(t, im.static_shape(s.getType(), &op)));
    return true;
  }
  if (auto s = mlir::dyn_cast<tn::InsertSliceOp>(op)) {
    std::string dest = im.tensor(s.getDest(), &op);
    auto offs = s.getMixedOffsets(), sizes = s.getMixedSizes(), strides = s.getMixedStrides();
    Shape sz;
    std::vector<int64_t> off;
    for (size_t d = 0; d < offs.size(); ++d) {
      if (static_of(strides[d], "stride") != 1) im.unsupported(&op, "strided slices");
      sz.push_back(static_of(sizes[d], "size"));
      off.push_back(static_of(offs[d], "insert offset"));
    }
    std::string src = im.reshape(im.tensor(s.getSource(), &op), sz);
    // Rebuilt dim by dim: the part before, the (recursively) updated middle, the part after.
    std::function<std::string(const std::string&, size_t)> insert = [&](const std::string& d, size_t k) {
      if (k == sz.size()) return src;
      int64_t D = im.shape_of(d)[k], o = off[k], n = sz[k];
      std::vector<std::string> parts;
      if (o > 0) parts.push_back(im.slice(d, static_cast<int64_t>(k), 0, o));
      parts.push_back(insert(im.slice(d, static_cast<int64_t>(k), o, n), k + 1));
      if (o + n < D) parts.push_back(im.slice(d, static_cast<int64_t>(k), o + n, D - o - n));
      return im.concat(parts, static_cast<int64_t>(k));
    };
    im.set_tensor(s.getResult(), insert(dest, 0));
    return true;
  }
  im.unsupported(&op, "this tensor op is not modeled");
}

}  // namespace parity::frontend::mlirio
