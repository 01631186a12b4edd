// A small fluent API to build specs and plans in C++ without spelling out every
// ir struct, e.g.
//
//   GraphBuilder g;
//   auto x = g.input("x", f32, {"B", "H"});
//   auto h = g.op("matmul", {x, w}, {{"transpose_b", 1}});
//   g.output(h);
//
// Values are names. Names must be unique per program, loop bodies included, so a
// body shares its enclosing builder's name set; a duplicate throws
// std::logic_error at build time instead of producing a malformed case.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/plan.h"

namespace parity::corpus {

inline constexpr ir::DType f32 = ir::DType::f32;
inline constexpr ir::DType bf16 = ir::DType::bf16;
inline constexpr ir::DType f64 = ir::DType::f64;
inline constexpr ir::DType i64 = ir::DType::i64;
inline constexpr ir::DType i1 = ir::DType::i1;

using Shape = std::vector<std::string>;  // one dim expression per dim

// An attribute value: an integer becomes an int (dim expression) attribute, a
// double a float, a string a string. Dim expressions, lists, coordinates and
// groups go through the helpers below.
struct AttrValue {
  ir::Attr value;
  AttrValue(int v) : value(ir::DimExpr(int64_t{v})) {}  // NOLINT: literals read naturally
  AttrValue(int64_t v) : value(ir::DimExpr(v)) {}       // NOLINT
  AttrValue(double v) : value(v) {}                     // NOLINT
  AttrValue(const char* v) : value(std::string(v)) {}   // NOLINT
  AttrValue(std::string v) : value(std::move(v)) {}     // NOLINT
  AttrValue(ir::Attr v) : value(std::move(v)) {}        // NOLINT
};
using Attrs = std::vector<std::pair<std::string, AttrValue>>;

// An int attribute from a dim expression: expr("$mb*(B/M)"). Throws on bad syntax.
ir::Attr expr(const std::string& e);
// An ints attribute: ints({"0", "1"}) or ints({"B/M", "F"}).
ir::Attr ints(const std::vector<std::string>& exprs);
ir::Attr strings(const std::vector<std::string>& v);
// A coords attribute: coords({{"pp", "$pp+1"}}).
ir::Attr coords(const std::vector<std::pair<std::string, std::string>>& entries);
ir::Attr groups(const ir::Groups& g);

ir::TensorType type(ir::DType dtype, const Shape& shape);

class GraphBuilder {
 public:
  GraphBuilder();

  // Declares a graph input (loop bodies: a carried value) and returns its name.
  std::string input(const std::string& name, ir::DType dtype, const Shape& shape);
  // One-result op; the result is `name`, or a fresh `<kind>_<n>` when empty.
  std::string op(const std::string& kind, const std::vector<std::string>& operands,
                 const Attrs& attrs = {}, const std::string& name = "");
  // Same with the result name first, which reads better in long programs.
  std::string let(const std::string& name, const std::string& kind,
                  const std::vector<std::string>& operands, const Attrs& attrs = {});
  // An op with any number of named results (none for `send`).
  std::vector<std::string> op_n(const std::string& kind, const std::vector<std::string>& operands,
                                const Attrs& attrs, const std::vector<std::string>& results);
  // A `loop` op: `body` declares the carried values as its inputs (in the order
  // of `init`) and outputs the next ones. Returns the final values, named
  // `results` or fresh names.
  std::vector<std::string> loop(const std::string& count, const std::string& var,
                                const std::vector<std::string>& init,
                                const std::function<void(GraphBuilder&)>& body,
                                const std::vector<std::string>& results = {});
  // Declares the type of an op result, written to files as `result_types` and
  // checked against the shape rule by the validator.
  void declare(const std::string& value, ir::DType dtype, const Shape& shape);
  void output(const std::string& value);

  const ir::Graph& graph() const { return g_; }
  ir::Graph build() const { return g_; }

 private:
  struct Names {
    std::set<std::string> used;
    std::map<std::string, int> next;
  };
  explicit GraphBuilder(std::shared_ptr<Names> names) : names_(std::move(names)) {}
  void claim(const std::string& name);
  std::string fresh(const std::string& kind);

  std::shared_ptr<Names> names_;
  ir::Graph g_;
};

class SpecBuilder {
 public:
  explicit SpecBuilder(std::string name);
  SpecBuilder& dim(const std::string& name, int64_t value);
  // A spec input with its role (param, data, ...).
  std::string input(const std::string& name, ir::DType dtype, const Shape& shape, ir::Role role);
  // A spec output with its role (loss, grad, updated_param, ...).
  void output(const std::string& value, ir::Role role);
  GraphBuilder& graph() { return g_; }
  ir::Spec build() const;

 private:
  ir::Spec s_;
  GraphBuilder g_;
};

// Region of a placement: one {offset, size} pair of dim expressions per dim.
using Region = std::vector<std::pair<std::string, std::string>>;
// Rank selector of a program: the fixed coordinates, e.g. {{"pp", {0}}}.
using RankFix = std::map<std::string, std::vector<int64_t>>;

class PlanBuilder {
 public:
  explicit PlanBuilder(std::string name);
  PlanBuilder& axis(const std::string& name, int64_t size);
  PlanBuilder& dim(const std::string& name, int64_t value);
  // A program and the builder of its graph (valid as long as this PlanBuilder).
  GraphBuilder& program(const std::string& name, const RankFix& ranks = {});

  // The plan value equals `region` of the spec value.
  PlanBuilder& region(const std::string& program, const std::string& value,
                      const std::string& spec_value, const Region& region);
  // The plan value equals the whole spec value.
  PlanBuilder& replica(const std::string& program, const std::string& value,
                       const std::string& spec_value);
  // The sum over `axes` of the plan value equals `region` (empty: whole) of the spec value.
  PlanBuilder& partial(const std::string& program, const std::string& value,
                       const std::string& spec_value, const std::vector<std::string>& axes,
                       const Region& region = {});

  ir::Plan build() const;

 private:
  struct Prog {
    std::string name;
    RankFix ranks;
    std::unique_ptr<GraphBuilder> graph;  // stable address for the returned reference
  };
  ir::Plan p_;
  std::vector<Prog> programs_;
};

}  // namespace parity::corpus
