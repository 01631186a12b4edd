// DimExpr: binding some symbols ahead of evaluation (stage keys bind the dims
// once, then look up only coordinates) must never change a value or a failure.
#include "ir/dim_expr.h"

#include <gtest/gtest.h>

namespace parity::ir {
namespace {

// Every expression, at every coordinate, evaluates (or fails) the same bound or not.
TEST(DimExprBind, EvaluatesAsTheExpressionItself) {
  const Bindings dims{{"H", 12}, {"tp", 4}, {"V", 10}, {"S", 7}};
  for (const char* text : {"$tp*(H/tp)", "$tp*(V/tp)", "H/$tp", "($mb+1)*S-H%$tp", "-$tp*(H/tp)+H",
                           "S%tp", "(H-$dp*3)%5", "V/3+$tp", "H*$tp/(tp+$dp)", "$tp*(S/tp)"}) {
    DimExpr e = DimExpr::parse(text);
    DimExpr b = e.bind(dims);
    for (int64_t tp = 0; tp < 5; ++tp) {
      for (int64_t dp = 0; dp < 3; ++dp) {
        for (int64_t mb = 0; mb < 2; ++mb) {
          Bindings full = dims;
          full["$tp"] = tp, full["$dp"] = dp, full["$mb"] = mb;
          const Bindings coords{{"$tp", tp}, {"$dp", dp}, {"$mb", mb}};
          int64_t x = 0, y = 0;
          bool ok = e.try_eval(full, x);
          ASSERT_EQ(ok, b.try_eval(coords, y)) << text << " at tp=" << tp << " dp=" << dp;
          if (ok) {
            EXPECT_EQ(x, y) << text;
          }
        }
      }
    }
  }
}

// Only what the bindings name is replaced; what is constant afterwards is folded.
TEST(DimExprBind, FoldsWhatBecomesConstant) {
  const Bindings dims{{"H", 12}, {"tp", 4}};
  EXPECT_EQ(DimExpr::parse("$tp*(H/tp)").bind(dims).str(), "$tp*3");
  EXPECT_TRUE(DimExpr::parse("H/tp+1").bind(dims).is_const());
  EXPECT_EQ(DimExpr::parse("H/tp+1").bind(dims).const_value(), 4);
  // An inexact division stays an expression, and still fails.
  DimExpr odd = DimExpr::parse("H/5").bind(dims);
  EXPECT_FALSE(odd.is_const());
  int64_t v;
  EXPECT_FALSE(odd.try_eval({}, v));
  // Unbound symbols stay.
  EXPECT_EQ(DimExpr::parse("B*H").bind(dims).str(), DimExpr::parse("B*12").str());
}

// Folding constants while building must agree with evaluation: `%` never negative.
TEST(DimExprFold, ModuloAgreesWithEvaluation) {
  DimExpr folded = DimExpr(-3) % DimExpr(4);
  ASSERT_TRUE(folded.is_const());
  int64_t v;
  ASSERT_TRUE((DimExpr::sym("x") % DimExpr(4)).try_eval({{"x", -3}}, v));
  EXPECT_EQ(folded.const_value(), v);
  EXPECT_EQ(v, 1);
}

}  // namespace
}  // namespace parity::ir
