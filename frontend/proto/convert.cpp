#include "frontend/proto/convert.h"
#include "frontend/proto/factor.h"

#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "ir/error.h"
#include "ir/parallel.h"

namespace parity::frontend {
namespace {

namespace pb = google::protobuf;
using LocTree = pb::TextFormat::ParseInfoTree;

// Limits that keep fuzzed or hostile files from exhausting the stack or memory.
constexpr int kMaxRegionDepth = 16;
constexpr int64_t kMaxOps = 1'000'000;
constexpr int64_t kMaxAxisSize = int64_t{1} << 20;
constexpr int64_t kMaxRanks = int64_t{1} << 24;

// ---------------------------------------------------------------------------
// IR -> proto

void put_type(const ir::TensorType& t, proto::TensorType* m) {
  m->set_dtype(ir::dtype_name(t.dtype));
  for (const auto& d : t.shape) m->add_shape(d.str());
}

void put_attr(const std::string& name, const ir::Attr& a, proto::Attr* m) {
  m->set_name(name);
  std::visit(
      [m](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          m->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          m->set_s(v);
        } else if constexpr (std::is_same_v<T, ir::DimExpr>) {
          m->set_i(v.str());
        } else if constexpr (std::is_same_v<T, ir::Dims>) {
          auto* l = m->mutable_ints();
          for (const auto& d : v) l->add_v(d.str());
        } else if constexpr (std::is_same_v<T, ir::Strings>) {
          auto* l = m->mutable_strings();
          for (const auto& s : v) l->add_v(s);
        } else if constexpr (std::is_same_v<T, ir::Groups>) {
          auto* l = m->mutable_groups();
          for (const auto& g : v) {
            auto* pg = l->add_group();
            for (int64_t r : g) pg->add_ranks(r);
          }
        } else {
          static_assert(std::is_same_v<T, ir::Coords>);
          auto* l = m->mutable_coords();
          for (const auto& [axis, e] : v) {
            auto* pe = l->add_entry();
            pe->set_axis(axis);
            pe->set_expr(e.str());
          }
        }
      },
      a);
}

void put_bindings(const ir::Bindings& b, pb::RepeatedPtrField<proto::Binding>* m) {
  for (const auto& [name, value] : b) {
    auto* e = m->Add();
    e->set_name(name);
    e->set_value(value);
  }
}

void put_graph(const ir::Graph& g, proto::Graph* m) {
  for (const auto& name : g.inputs) {
    auto* v = m->add_inputs();
    v->set_name(name);
    auto it = g.types.find(name);
    if (it != g.types.end()) put_type(it->second, v->mutable_type());
  }
  for (const auto& o : g.outputs) m->add_outputs(o);
  for (const auto& op : g.ops) {
    auto* po = m->add_ops();
    po->set_kind(op.kind);
    for (const auto& s : op.operands) po->add_operands(s);
    for (const auto& s : op.results) po->add_results(s);
    for (const auto& [name, a] : op.attrs) put_attr(name, a, po->add_attrs());
    for (const auto& r : op.regions) put_graph(r, po->add_regions());
    // The format has no per-value declarations inside a graph, so result types
    // travel with the op; a partial set cannot be expressed and is left out.
    bool all_typed = !op.results.empty();
    for (const auto& r : op.results) all_typed = all_typed && g.types.count(r) > 0;
    if (all_typed)
      for (const auto& r : op.results) put_type(g.types.at(r), po->add_result_types());
  }
}

// ---------------------------------------------------------------------------
// proto -> IR

const pb::FieldDescriptor* field(const pb::Descriptor* d, int number) {
  return d->FindFieldByNumber(number);
}

// 1-based source line of element `index` of a field (-1: singular), 0 when unknown.
int line_of(const LocTree* t, const pb::FieldDescriptor* f, int index) {
  if (t == nullptr) return 0;
  int line = t->GetLocation(f, index).line;
  return line < 0 ? 0 : line + 1;
}
// Its 1-based column, 0 when unknown.
int col_of(const LocTree* t, const pb::FieldDescriptor* f, int index) {
  if (t == nullptr) return 0;
  const auto at = t->GetLocation(f, index);
  return at.line < 0 ? 0 : at.column + 1;
}

const LocTree* nested(const LocTree* t, const pb::FieldDescriptor* f, int index) {
  return t == nullptr ? nullptr : t->GetTreeForNested(f, index);
}

std::string at_line(int line) { return line > 0 ? " (line " + std::to_string(line) + ")" : ""; }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string op_label(const proto::Op& m) {
  std::string s = m.kind().empty() ? "(no kind)" : m.kind();
  for (int i = 0; i < m.results_size(); ++i) s += (i ? "," : " -> ") + m.results(i);
  return s;
}

const char* kDtypes = "f32, bf16, f64, i64, i1";
const char* kRoles =
    "param, data, label, mask, opt_state, loss, grad, updated_param, updated_state, other";

// Where an element sits, for messages: the program (or "(spec)") and the op
// path. The path is text only when a message needs it: building it for every
// op of a large plan cost more than reading the op.
struct Where {
  std::string program;
  const Where* parent = nullptr;   // the enclosing op (for a region) or region (for an op)
  const proto::Op* op = nullptr;   // this op; nullptr for a program or a region
  int index = 0, line = 0;         // the op's position and source line
  int region = -1;                 // for a region: its index in the parent op
  int col = 0;                     // the source column of what `line` points at

  std::string op_path() const {
    if (op == nullptr) return parent ? parent->op_path() + ", region " + std::to_string(region) : "";
    std::string self = "#" + std::to_string(index) + " " + op_label(*op) + at_line(line);
    std::string base = parent ? parent->op_path() : "";
    return base.empty() ? self : base + ", " + self;
  }
};

class Reader {
 public:
  Reader(const std::string& file, const LocTree* root) : file_(file), root_(root) {}

  ir::Case read(const proto::Case& m) {
    if (m.version() != kFormatVersion) {
      std::string msg = "unsupported format version " + std::to_string(m.version()) +
                        ", expected " + std::to_string(kFormatVersion);
      if (m.version() == 0) msg += " (is 'version: 1' missing?)";
      fail({}, msg);
    }
    if (!m.has_spec() && !m.has_plan()) fail({}, "the file has neither a spec nor a plan");
    const auto* d = proto::Case::descriptor();
    ir::Case c;
    const LocTree* sloc = nested(root_, field(d, proto::Case::kSpecFieldNumber), -1);
    spec_line_ = line_of(root_, field(d, proto::Case::kSpecFieldNumber), -1);
    spec_col_ = col_of(root_, field(d, proto::Case::kSpecFieldNumber), -1);
    const LocTree* ploc = nested(root_, field(d, proto::Case::kPlanFieldNumber), -1);
    if (!m.has_plan()) {
      c.spec = spec(m.spec(), sloc);
      return c;
    }
    // The spec and every program are converted as tasks on the hardware
    // threads, each with a reader of its own; errors come out in the order
    // of a sequential read: the spec's, the mesh's, then the programs'.
    const proto::Plan& pm = m.plan();
    std::exception_ptr head_error;
    try {
      c.plan = plan_head(pm);
    } catch (const ir::InvalidInput&) {
      head_error = std::current_exception();
    }
    c.plan.programs.resize(static_cast<size_t>(pm.programs_size()));
    const size_t first = m.has_spec() ? 1 : 0;
    std::optional<ir::Spec> s;
    std::exception_ptr spec_error, program_error;
    try {
      ir::parallel_for(first + c.plan.programs.size(), ir::hardware_threads(), [&](size_t t) {
        Reader r(file_, root_);
        r.spec_line_ = spec_line_, r.spec_col_ = spec_col_;
        if (t >= first) {
          c.plan.programs[t - first] = r.program(pm, static_cast<int>(t - first), ploc);
          return;
        }
        try {
          s = r.spec(m.spec(), sloc);
        } catch (const ir::InvalidInput&) {
          spec_error = std::current_exception();
        }
      });
    } catch (const ir::InvalidInput&) {  // the lowest program's
      program_error = std::current_exception();
    }
    for (const auto& e : {spec_error, head_error, program_error})
      if (e) std::rethrow_exception(e);
    c.spec = std::move(s);
    placements(pm, ploc, c.plan);
    return c;
  }

 private:
  int spec_line_ = 0, spec_col_ = 0;  // where the spec is written

  [[noreturn]] void fail(const Where& w, const std::string& msg) const {
    ir::Diag d{file_, w.program, w.op_path(), "", msg};
    // Problems of the file as a whole (its version, its mesh) are placed at its start.
    d.line = w.line > 0 ? w.line : 1, d.col = w.line > 0 ? w.col : 1, d.check = "case-format";
    throw ir::InvalidInput(d);
  }

  // Expressions are immutable and shared: a text seen before (a generated
  // 126-layer plan repeats a few hundred distinct ones over a million times)
  // is parsed once and its nodes shared.
  // `what()` names the element in a message; it is called only on failure.
  template <class What>
  ir::DimExpr dim(const std::string& text, const Where& w, const What& what) const {
    if (auto it = dims_.find(text); it != dims_.end()) return it->second;
    try {
      return dims_.emplace(text, ir::DimExpr::parse(text)).first->second;
    } catch (const ir::InvalidInput& e) {
      fail(w, what() + ": " + e.diag().message);
    }
  }

  template <class What>
  ir::TensorType type(const proto::TensorType& m, const Where& w, const What& what) const {
    ir::TensorType t;
    auto dt = ir::parse_dtype(m.dtype());
    if (!dt)
      fail(w, what() + ": unknown dtype " + quoted(m.dtype()) + " (expected one of " + kDtypes + ")");
    t.dtype = *dt;
    t.shape.reserve(static_cast<size_t>(m.shape_size()));
    for (int i = 0; i < m.shape_size(); ++i)
      t.shape.push_back(dim(m.shape(i), w, [&] { return what() + ": dim " + std::to_string(i); }));
    return t;
  }

  ir::Bindings bindings(const pb::RepeatedPtrField<proto::Binding>& m, const Where& w,
                        const std::string& what) const {
    ir::Bindings b;
    for (const auto& e : m) {
      if (e.name().empty()) fail(w, what + ": a dim has an empty name");
      if (!b.emplace(e.name(), e.value()).second)
        fail(w, what + ": duplicate dim " + quoted(e.name()));
    }
    return b;
  }

  ir::Graph graph(const proto::Graph& m, const LocTree* loc, const Where& w, int depth) {
    const auto* d = proto::Graph::descriptor();
    const auto* inputs_f = field(d, proto::Graph::kInputsFieldNumber);
    const auto* ops_f = field(d, proto::Graph::kOpsFieldNumber);
    ir::Graph g;
    for (int i = 0; i < m.inputs_size(); ++i) {
      const auto& v = m.inputs(i);
      auto what = [&] {
        return "input #" + std::to_string(i) + " " + quoted(v.name()) + at_line(line_of(loc, inputs_f, i));
      };
      Where wi = w;
      wi.line = line_of(loc, inputs_f, i), wi.col = col_of(loc, inputs_f, i);
      if (v.name().empty()) fail(wi, what() + ": empty name");
      if (!v.has_type()) fail(wi, what() + ": no type (every graph input needs a dtype and a shape)");
      if (!g.types.emplace(v.name(), type(v.type(), wi, what)).second)
        fail(wi, what() + ": duplicate input name");
      g.inputs.push_back(v.name());
    }
    g.outputs.assign(m.outputs().begin(), m.outputs().end());
    g.ops.reserve(m.ops_size());
    for (int i = 0; i < m.ops_size(); ++i)
      g.ops.push_back(
          op(m.ops(i), i, nested(loc, ops_f, i), line_of(loc, ops_f, i), col_of(loc, ops_f, i), w, depth, g));
    return g;
  }

  template <class What>
  ir::Attr attr(const proto::Attr& m, const Where& w, const What& what) const {
    switch (m.value_case()) {
      case proto::Attr::kF:
        // NaN payloads and signs do not survive the text format; keep one NaN.
        if (std::isnan(m.f())) return std::numeric_limits<double>::quiet_NaN();
        return m.f();
      case proto::Attr::kS:
        return ir::Attr(std::in_place_type<std::string>, m.s());
      case proto::Attr::kI:
        return dim(m.i(), w, what);
      case proto::Attr::kInts: {
        ir::Dims v;
        for (int k = 0; k < m.ints().v_size(); ++k)
          v.push_back(dim(m.ints().v(k), w, [&] { return what() + " [" + std::to_string(k) + "]"; }));
        return v;
      }
      case proto::Attr::kStrings:
        return ir::Strings(m.strings().v().begin(), m.strings().v().end());
      case proto::Attr::kGroups: {
        ir::Groups v;
        for (const auto& g : m.groups().group()) v.emplace_back(g.ranks().begin(), g.ranks().end());
        return v;
      }
      case proto::Attr::kCoords: {
        ir::Coords v;
        for (const auto& e : m.coords().entry()) {
          auto ewhat = [&] { return what() + " axis " + quoted(e.axis()); };
          if (e.axis().empty()) fail(w, what() + ": a coordinate has an empty axis name");
          if (v.count(e.axis())) fail(w, ewhat() + ": duplicate axis");
          v.emplace(e.axis(), dim(e.expr(), w, ewhat));
        }
        return v;
      }
      case proto::Attr::VALUE_NOT_SET:
        break;
    }
    fail(w, what() + ": no value (set one of f, s, i, ints, strings, groups, coords)");
  }

  ir::Op op(const proto::Op& m, int index, const LocTree* loc, int line, int col, const Where& parent,
            int depth, ir::Graph& g) {
    Where w{parent.program, &parent, &m, index, line, -1, col};
    if (++ops_ > kMaxOps) fail(w, "more than " + std::to_string(kMaxOps) + " ops in the file");
    if (m.kind().empty()) fail(w, "op has no kind");

    ir::Op o;
    o.kind = m.kind();
    o.operands.assign(m.operands().begin(), m.operands().end());
    o.results.assign(m.results().begin(), m.results().end());
    o.line = line;
    o.col = col;
    for (const auto& a : m.attrs()) {
      auto what = [&] { return "attribute " + quoted(a.name()); };
      if (a.name().empty()) fail(w, "an attribute has an empty name");
      if (o.attrs.count(a.name())) fail(w, what() + ": duplicate attribute");
      o.attrs.emplace(a.name(), attr(a, w, what));
    }
    if (m.result_types_size() > 0) {
      if (m.result_types_size() != m.results_size())
        fail(w, std::to_string(m.result_types_size()) + " result_types for " +
                    std::to_string(m.results_size()) + " results (give none or one per result)");
      for (int k = 0; k < m.result_types_size(); ++k) {
        ir::TensorType t = type(m.result_types(k), w, [&] { return "result type of " + quoted(m.results(k)); });
        // A second definition of a name is the validator's to report; keep the first.
        g.types.emplace(m.results(k), std::move(t));
      }
    }
    if (m.regions_size() > 0 && depth >= kMaxRegionDepth)
      fail(w, "regions nested deeper than " + std::to_string(kMaxRegionDepth) + " levels");
    const auto* regions_f = field(proto::Op::descriptor(), proto::Op::kRegionsFieldNumber);
    for (int r = 0; r < m.regions_size(); ++r) {
      Where rw{w.program, &w, nullptr, 0, w.line, r, w.col};
      o.regions.push_back(graph(m.regions(r), nested(loc, regions_f, r), rw, depth + 1));
    }
    return o;
  }

  ir::Spec spec(const proto::Spec& m, const LocTree* loc) {
    const auto* d = proto::Spec::descriptor();
    Where w{"(spec)"};
    w.line = spec_line_, w.col = spec_col_;
    ir::Spec s;
    s.line = w.line, s.col = w.col;
    s.name = m.name();
    s.dims = bindings(m.dims(), w, "spec dims");
    s.graph = graph(m.graph(), nested(loc, field(d, proto::Spec::kGraphFieldNumber), -1), w, 0);
    for (const auto& e : m.roles()) {
      auto what = [&] { return "role of " + quoted(e.value()); };
      if (e.value().empty()) fail(w, "a role entry has an empty value name");
      auto r = ir::parse_role(e.role());
      if (!r)
        fail(w, what() + ": unknown role " + quoted(e.role()) + " (expected one of " + kRoles + ")");
      if (!s.roles.emplace(e.value(), *r).second) fail(w, what() + ": given twice");
    }
    return s;
  }

  // The mesh and dims of a plan (its programs and placements are read apart).
  ir::Plan plan_head(const proto::Plan& m) {
    ir::Plan p;
    p.name = m.name();

    int64_t ranks = 1;
    for (const auto& a : m.mesh()) {
      std::string what = "mesh axis " + quoted(a.name());
      if (a.name().empty()) fail({}, "a mesh axis has an empty name");
      if (p.mesh.axis_index(a.name())) fail({}, what + ": duplicate axis");
      if (a.size() < 1 || a.size() > kMaxAxisSize)
        fail({}, what + ": size " + std::to_string(a.size()) + " is out of range (1 to " +
                     std::to_string(kMaxAxisSize) + ")");
      ranks *= a.size();  // cannot overflow: checked against kMaxRanks at every step
      if (ranks > kMaxRanks)
        fail({}, "the mesh has more than " + std::to_string(kMaxRanks) + " ranks");
      p.mesh.axes.push_back(ir::MeshAxis{a.name(), a.size()});
    }
    p.dims = bindings(m.dims(), {}, "plan dims");
    return p;
  }

  // Program `i` of a plan.
  ir::Program program(const proto::Plan& m, int i, const LocTree* loc) {
    const auto* d = proto::Plan::descriptor();
    const auto* programs_f = field(d, proto::Plan::kProgramsFieldNumber);
    const auto* graph_f = field(proto::Program::descriptor(), proto::Program::kGraphFieldNumber);
    const auto& pm = m.programs(i);
    Where w{pm.name().empty() ? "#" + std::to_string(i) : pm.name()};
    w.line = line_of(loc, programs_f, i), w.col = col_of(loc, programs_f, i);
    ir::Program prog;
    prog.name = pm.name();
    prog.line = w.line, prog.col = w.col;
    for (const auto& av : pm.ranks()) {
      std::string what = "ranks on axis " + quoted(av.axis());
      if (av.axis().empty()) fail(w, "a rank selector has an empty axis name");
      if (!prog.ranks.fixed
               .emplace(av.axis(), std::vector<int64_t>(av.values().begin(), av.values().end()))
               .second)
        fail(w, what + ": axis given twice");
    }
    const LocTree* ploc = nested(loc, programs_f, i);
    prog.graph = graph(pm.graph(), nested(ploc, graph_f, -1), w, 0);
    return prog;
  }

  void placements(const proto::Plan& m, const LocTree* loc, ir::Plan& p) {
    const auto* d = proto::Plan::descriptor();
    const auto* placements_f = field(d, proto::Plan::kPlacementsFieldNumber);
    for (int i = 0; i < m.placements_size(); ++i) {
      const auto& pm = m.placements(i);
      Where w{pm.program()};
      w.line = line_of(loc, placements_f, i), w.col = col_of(loc, placements_f, i);
      auto what = [&] {
        return "placement #" + std::to_string(i) + " (" + quoted(pm.value()) + " -> " + quoted(pm.spec_value()) +
               ")" + at_line(line_of(loc, placements_f, i));
      };
      ir::Placement pl;
      pl.program = pm.program();
      pl.value = pm.value();
      pl.spec_value = pm.spec_value();
      pl.line = w.line, pl.col = w.col;
      // An omitted kind reads as `region`, the common case.
      if (pm.kind().empty() || pm.kind() == "region") {
        pl.kind = ir::PlacementKind::region;
      } else if (pm.kind() == "partial") {
        pl.kind = ir::PlacementKind::partial;
      } else {
        fail(w, what() + ": unknown kind " + quoted(pm.kind()) + " (expected region or partial)");
      }
      for (int k = 0; k < pm.region_size(); ++k) {
        auto rwhat = [&] { return what() + ": region dim " + std::to_string(k); };
        pl.region.push_back(ir::Range{dim(pm.region(k).offset(), w, [&] { return rwhat() + " offset"; }),
                                      dim(pm.region(k).size(), w, [&] { return rwhat() + " size"; })});
      }
      pl.axes.assign(pm.axes().begin(), pm.axes().end());
      p.placements.push_back(std::move(pl));
      if (pm.factor().empty()) continue;
      // `K` or `1/K`, K a dim expression.
      std::string text = pm.factor();
      text.erase(0, text.find_first_not_of(' '));
      const bool inverse = text.rfind("1/", 0) == 0;
      if (inverse) text = text.substr(2);
      const ir::DimExpr k = dim(text, w, [&] { return what() + ": factor"; });
      try {
        lower_factor(p, p.placements.size() - 1, k, inverse);
      } catch (const std::invalid_argument& e) {
        fail(w, what() + ": " + e.what());
      }
    }
  }

  const std::string& file_;
  const LocTree* root_;
  mutable std::unordered_map<std::string, ir::DimExpr> dims_;  // a memo of dim()
  int64_t ops_ = 0;
};

}  // namespace

proto::Case to_proto(const ir::Case& c) {
  proto::Case m;
  m.set_version(kFormatVersion);
  if (c.spec) {
    const ir::Spec& s = *c.spec;
    auto* ps = m.mutable_spec();
    ps->set_name(s.name);
    put_bindings(s.dims, ps->mutable_dims());
    put_graph(s.graph, ps->mutable_graph());
    for (const auto& [value, role] : s.roles) {
      auto* e = ps->add_roles();
      e->set_value(value);
      e->set_role(ir::role_name(role));
    }
  }
  const ir::Plan& p = c.plan;
  auto* pp = m.mutable_plan();
  pp->set_name(p.name);
  for (const auto& a : p.mesh.axes) {
    auto* pa = pp->add_mesh();
    pa->set_name(a.name);
    pa->set_size(a.size);
  }
  put_bindings(p.dims, pp->mutable_dims());
  for (const auto& prog : p.programs) {
    auto* pr = pp->add_programs();
    pr->set_name(prog.name);
    for (const auto& [axis, values] : prog.ranks.fixed) {
      auto* av = pr->add_ranks();
      av->set_axis(axis);
      for (int64_t v : values) av->add_values(v);
    }
    put_graph(prog.graph, pr->mutable_graph());
  }
  for (const auto& pl : p.placements) {
    auto* ppl = pp->add_placements();
    ppl->set_program(pl.program);
    ppl->set_value(pl.value);
    ppl->set_spec_value(pl.spec_value);
    ppl->set_kind(ir::placement_kind_name(pl.kind));
    for (const auto& r : pl.region) {
      auto* pr = ppl->add_region();
      pr->set_offset(r.offset.str());
      pr->set_size(r.size.str());
    }
    for (const auto& a : pl.axes) ppl->add_axes(a);
  }
  return m;
}

ir::Case from_proto(const proto::Case& m, const std::string& file) {
  return from_proto(m, file, nullptr);
}

ir::Case from_proto(const proto::Case& m, const std::string& file, const LocTree* locations) {
  return Reader(file, locations).read(m);
}

}  // namespace parity::frontend
