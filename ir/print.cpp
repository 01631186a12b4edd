#include "ir/print.h"

#include <fmt/format.h>

#include <map>

namespace parity::ir {

namespace {
std::string ty(const std::string& v, const TypeMap* types) {
  if (!types) return "";
  auto it = types->find(v);
  return it == types->end() ? "" : " : " + it->second.str();
}

void count_ops(const Graph& g, std::map<std::string, int>& n) {
  for (const auto& op : g.ops) {
    ++n[op.kind];
    for (const auto& r : op.regions) count_ops(r, n);
  }
}
}  // namespace

std::string print_graph(const Graph& g, const TypeMap* types, int indent) {
  std::string pad(indent, ' '), s;
  for (const auto& in : g.inputs) {
    auto it = g.types.find(in);
    s += pad + "input %" + in + (it != g.types.end() ? " : " + it->second.str() : "") + "\n";
  }
  for (const auto& op : g.ops) {
    s += pad;
    for (size_t k = 0; k < op.results.size(); ++k) s += (k ? ", %" : "%") + op.results[k];
    if (!op.results.empty()) s += " = ";
    s += op.kind + "(";
    for (size_t k = 0; k < op.operands.size(); ++k) s += (k ? ", %" : "%") + op.operands[k];
    s += ")";
    if (!op.attrs.empty()) {
      s += " {";
      bool first = true;
      for (const auto& [k, v] : op.attrs) {
        s += (first ? "" : ", ") + k + "=" + attr_str(v);
        first = false;
      }
      s += "}";
    }
    if (op.results.size() == 1) s += ty(op.results[0], types);
    s += "\n";
    for (const auto& r : op.regions) {
      s += pad + "  body(";
      for (size_t k = 0; k < r.inputs.size(); ++k) s += (k ? ", %" : "%") + r.inputs[k];
      s += ") {\n";
      Graph inner = r;
      inner.inputs.clear();
      s += print_graph(inner, types, indent + 4);
      s += pad + "  }\n";
    }
  }
  s += pad + "return";
  for (size_t k = 0; k < g.outputs.size(); ++k) s += (k ? ", %" : " %") + g.outputs[k];
  return s + "\n";
}

std::string print_spec(const Spec& sp, const TypeMap* types) {
  std::string s = "spec " + sp.name + " {\n  dims:";
  for (const auto& [k, v] : sp.dims) s += fmt::format(" {}={}", k, v);
  s += "\n";
  for (const auto& [v, r] : sp.roles) s += fmt::format("  role %{} : {}\n", v, role_name(r));
  return s + print_graph(sp.graph, types) + "}\n";
}

std::string print_plan(const Plan& p, const std::map<std::string, TypeMap>* types) {
  std::string s = "plan " + p.name + " {\n  mesh:";
  for (const auto& a : p.mesh.axes) s += fmt::format(" {}={}", a.name, a.size);
  s += fmt::format(" ({} ranks)\n  dims:", p.mesh.num_ranks());
  for (const auto& [k, v] : p.dims) s += fmt::format(" {}={}", k, v);
  s += "\n";
  for (const auto& prog : p.programs) {
    s += "  program " + prog.name + " on";
    if (prog.ranks.fixed.empty()) s += " all ranks";
    for (const auto& [a, vals] : prog.ranks.fixed) {
      s += " " + a + "=";
      for (size_t k = 0; k < vals.size(); ++k) s += (k ? "|" : "") + std::to_string(vals[k]);
    }
    s += " {\n";
    const TypeMap* t = nullptr;
    if (types)
      if (auto it = types->find(prog.name); it != types->end()) t = &it->second;
    s += print_graph(prog.graph, t, 4) + "  }\n";
  }
  for (const auto& pl : p.placements) {
    s += fmt::format("  place {}.%{} = {} of spec %{}", pl.program, pl.value, placement_kind_name(pl.kind), pl.spec_value);
    if (!pl.region.empty()) {
      s += " [";
      for (size_t k = 0; k < pl.region.size(); ++k)
        s += (k ? ", " : "") + pl.region[k].offset.str() + ":+" + pl.region[k].size.str();
      s += "]";
    }
    if (!pl.axes.empty()) {
      s += " summed over";
      for (const auto& a : pl.axes) s += " " + a;
    }
    s += "\n";
  }
  return s + "}\n";
}

std::string summarize_case(const Case& c) {
  std::string s;
  if (c.spec) {
    std::map<std::string, int> n;
    count_ops(c.spec->graph, n);
    int total = 0;
    for (const auto& [k, v] : n) total += v;
    s += fmt::format("spec {}: {} inputs, {} outputs, {} ops ({} kinds)\n", c.spec->name, c.spec->graph.inputs.size(),
                     c.spec->graph.outputs.size(), total, n.size());
  }
  if (!c.plan.programs.empty()) {
    std::map<std::string, int> n;
    for (const auto& p : c.plan.programs) count_ops(p.graph, n);
    int total = 0, comm = 0;
    for (const auto& [k, v] : n) {
      total += v;
      if (k == "allreduce" || k == "allgather" || k == "reduce_scatter" || k == "all_to_all" || k == "broadcast" ||
          k == "send" || k == "recv")
        comm += v;
    }
    std::string mesh;
    for (const auto& a : c.plan.mesh.axes) mesh += (mesh.empty() ? "" : " x ") + a.name + "=" + std::to_string(a.size);
    s += fmt::format("plan {}: mesh {} ({} ranks), {} programs, {} ops ({} communication), {} placements\n", c.plan.name,
                     mesh.empty() ? "single" : mesh, c.plan.mesh.num_ranks(), c.plan.programs.size(), total, comm,
                     c.plan.placements.size());
  }
  return s;
}

}  // namespace parity::ir
