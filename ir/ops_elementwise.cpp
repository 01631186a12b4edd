// Elementwise ops. Binary ops broadcast numpy-style; the result dtype is the
// first operand's.
#include "ir/op_registry.h"

namespace parity::ir {

namespace {
std::vector<TensorType> same_as_first(const ShapeCtx& c) { return {c.in[0]}; }

std::vector<TensorType> binary_rule(const ShapeCtx& c) {
  return {TensorType{c.in[0].dtype, broadcast_shapes(c, c.in[0].shape, c.in[1].shape)}};
}
}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  auto add = [&r](OpDef d) {
    d.elementwise = true;
    d.moves = d.name == "identity" || d.name == "cast";
    d.linear = d.name == "identity" || d.name == "add" || d.name == "sub" || d.name == "neg" || d.name == "scale";
    r.add(std::move(d));
  };
  struct B { const char* name; const char* doc; };
  for (B b : {B{"add", "a + b"}, B{"sub", "a - b"}, B{"mul", "a * b"}, B{"div", "a / b (b nonzero)"},
              B{"maximum", "max(a, b)"}, B{"minimum", "min(a, b)"}})
    add(OpDef{b.name, 2, 2, {}, binary_rule, b.doc});

  for (B u : {B{"neg", "-x"}, B{"exp", "e^x"}, B{"log", "ln x"}, B{"sqrt", "sqrt x"}, B{"rsqrt", "1/sqrt x"},
              B{"tanh", "tanh x"}, B{"sigmoid", "1/(1+e^-x)"}, B{"silu", "x*sigmoid(x)"},
              B{"gelu", "x*Phi(x) (tanh approximation)"}, B{"relu", "max(x, 0)"}, B{"reciprocal", "1/x"},
              B{"square", "x*x"}, B{"identity", "x"}})
    add(OpDef{u.name, 1, 1, {}, same_as_first, u.doc});

  add(OpDef{"scale", 1, 1, {{"factor", AttrKind::Float, true, true}}, same_as_first, "factor * x (a literal constant)"});
  add(OpDef{"add_scalar", 1, 1, {{"value", AttrKind::Float, true, true}}, same_as_first, "x + value"});
  add(OpDef{"pow", 1, 1, {{"exponent", AttrKind::Float, true}}, same_as_first, "x^exponent"});
  add(OpDef{"silu_grad", 2, 2, {}, binary_rule, "dy * d/dx silu(x), operands (x, dy)"});
  add(OpDef{"gelu_grad", 2, 2, {}, binary_rule, "dy * d/dx gelu(x), operands (x, dy)"});
  add(OpDef{"where", 3, 3, {},
              [](const ShapeCtx& c) {
                auto s = broadcast_shapes(c, c.in[0].shape, c.in[1].shape);
                return std::vector<TensorType>{TensorType{c.in[1].dtype, broadcast_shapes(c, s, c.in[2].shape)}};
              },
              "cond ? a : b"});
  add(OpDef{"cast", 1, 1, {{"dtype", AttrKind::String, true}},
              [](const ShapeCtx& c) {
                auto t = parse_dtype(c.s("dtype"));
                if (!t) c.fail("unknown dtype '" + c.s("dtype") + "' (f32, bf16, f64, i64, i1)");
                // x != 0 is not an op of the semantics: a float becomes a mask by a comparison.
                const bool from_float = c.in[0].dtype != DType::i64 && c.in[0].dtype != DType::i1;
                if (*t == DType::i1 && from_float)
                  c.fail("a cast from " + std::string(dtype_name(c.in[0].dtype)) +
                         " to i1 is not modeled (x != 0); compare the values instead");
                return std::vector<TensorType>{TensorType{*t, c.in[0].shape}};
              },
              "x converted to dtype (to i64: truncated toward zero)"});
  r.add(OpDef{"fill", 0, 0,
              {{"value", AttrKind::Float, true, true},
               {.name = "shape", .kind = AttrKind::Ints, .required = true, .extent = true},
               {"dtype", AttrKind::String, false}},
              [](const ShapeCtx& c) {
                auto t = parse_dtype(c.s("dtype", "f32"));
                if (!t) c.fail("unknown dtype '" + c.s("dtype") + "'");
                Dims shape = c.ints("shape");
                for (const auto& d : shape)
                  if (c.eval(d) < 1) c.fail("fill: dim " + d.str() + " must be positive");
                return std::vector<TensorType>{TensorType{*t, shape}};
              },
              "a tensor with every element = value"});
}

}  // namespace parity::ir
