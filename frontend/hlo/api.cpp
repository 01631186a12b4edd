#include "frontend/hlo/api.h"

#include <sstream>

#include "frontend/hlo/hints.h"
#include "frontend/hlo/sharding.h"
#include "frontend/shapes/size_symbols.h"
#include "ir/error.h"

namespace parity::frontend::hlo {

namespace {

bool ends_with(const std::string& s, const std::string& t) {
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

[[noreturn]] void invalid(const std::string& file, const std::string& msg, int line = 0) {
  ir::Diag d{file, "", "", "", msg};
  d.line = line;
  d.col = line ? 1 : 0;
  d.check = "hlo";
  throw ir::InvalidInput(d);
}

int note_line(const Module& m, const std::string& key) {
  for (size_t k = 0; k < m.notes.size(); ++k)
    if (m.notes[k].first == key) return m.note_lines[k];
  return 0;
}

// The sharding of parameter or result `k`: the `// parity-KIND k:` line, else
// the instruction's `sharding=`.
Sharding sharding_of(const Module& plan, const std::string& kind, size_t k, const Instr* ins) {
  std::string key = kind + " " + std::to_string(k);
  std::string text;
  if (const std::string* n = plan.note(key))
    text = *n;
  else if (ins && ins->attr("sharding"))
    text = *ins->attr("sharding");
  else
    return Sharding{};
  try {
    return parse_sharding(text);
  } catch (const std::exception& e) {
    throw Unsupported(plan.file + ": " + kind + " " + std::to_string(k) + ": sharding " + text +
                      ": " + e.what());
  }
}

}  // namespace

bool is_hlo_path(const std::string& p) { return ends_with(p, ".hlo") || ends_with(p, ".hlo.txt"); }

ir::Mesh mesh_of(const Module& plan) {
  ir::Mesh mesh;
  int64_t parts = 1;
  if (auto it = plan.attrs.find("num_partitions"); it != plan.attrs.end()) {
    try {
      parts = std::stoll(it->second);
    } catch (const std::exception&) {
      invalid(plan.file, "num_partitions=" + it->second + " is not a number", 1);
    }
  }
  if (const std::string* m = plan.note("mesh")) {
    std::istringstream in(*m);
    std::string w;
    while (in >> w) {
      auto eq = w.find('=');
      int64_t size = 0;
      try {
        if (eq == std::string::npos) throw std::invalid_argument(w);
        size = std::stoll(w.substr(eq + 1));
      } catch (const std::exception&) {
        invalid(plan.file, "parity-mesh: expected AXIS=SIZE, got '" + w + "'",
                note_line(plan, "mesh"));
      }
      if (size < 1 || size > (1 << 20))
        invalid(plan.file, "parity-mesh: axis size out of range", note_line(plan, "mesh"));
      mesh.axes.push_back({w.substr(0, eq), size});
    }
    if (mesh.axes.empty()) invalid(plan.file, "parity-mesh names no axis", note_line(plan, "mesh"));
    if (mesh.num_ranks() != parts)
      invalid(plan.file,
              "parity-mesh has " + std::to_string(mesh.num_ranks()) + " devices, the module " +
                  std::to_string(parts) + " partitions",
              note_line(plan, "mesh"));
    return mesh;
  }
  mesh.axes.push_back({"p", parts});
  return mesh;
}

ir::Case import_pair(const std::string& spec_path, const std::string& plan_path,
                     const ImportOptions& opt, Hints* hints) {
  Module sm = read_module(spec_path);
  Module pm = read_module(plan_path);
  ir::Mesh mesh = mesh_of(pm);
  auto names = param_names(sm);
  Imported si = import_entry(sm, Mode::spec, ir::Mesh{}, names);
  Imported pi = import_entry(pm, Mode::plan, mesh, names);
  if (si.params.size() != pi.params.size() || si.results.size() != pi.results.size())
    invalid(plan_path, "the plan has " + std::to_string(pi.params.size()) + " parameters and " +
                           std::to_string(pi.results.size()) + " results, the spec " +
                           std::to_string(si.params.size()) + " and " +
                           std::to_string(si.results.size()));
  ir::Case c;
  ir::Spec spec;
  spec.name = sm.name;
  spec.graph = std::move(si.graph);
  ir::Plan plan;
  plan.name = pm.name + " (SPMD)";
  plan.mesh = mesh;
  ir::Program prog;
  prog.name = "spmd";
  prog.graph = std::move(pi.graph);
  plan.programs.push_back(std::move(prog));
  auto place = [&](const std::string& value, const std::string& spec_value, const Sharding& s,
                   const std::vector<int64_t>& shape, const std::string& what) {
    ir::Placement p;
    p.program = "spmd";
    p.value = value;
    p.spec_value = spec_value;
    try {
      p.region = region_of(s, shape, mesh);
    } catch (const std::exception& e) {
      throw Unsupported(plan_path + ": " + what + ": " + e.what());
    }
    plan.placements.push_back(std::move(p));
  };
  for (size_t k = 0; k < si.params.size(); ++k)
    place(pi.params[k], si.params[k], sharding_of(pm, "arg", k, pi.param_instrs[k]),
          si.param_shapes[k], "parameter " + std::to_string(k) + " (" + si.params[k] + ")");
  for (size_t k = 0; k < si.results.size(); ++k) {
    Sharding s = sharding_of(pm, "result", k, nullptr);
    // Without a stated sharding, a result of the spec's shape is a replica.
    if (!pm.note("result " + std::to_string(k)) && pi.result_shapes[k] != si.result_shapes[k])
      throw Unsupported(plan_path + ": result " + std::to_string(k) +
                        " is a shard, but no '// parity-result " + std::to_string(k) +
                        ": SHARDING' line says which");
    place(pi.results[k], si.results[k], s, si.result_shapes[k], "result " + std::to_string(k));
  }
  c.spec = std::move(spec);
  c.plan = std::move(plan);
  if (opt.infer_placements) {
    Hints h = infer_placements(c, si.keys, pi.keys);
    if (hints) *hints = std::move(h);
  }
  // XLA's sizes are numbers: as symbols they reduce like a protobuf case's.
  give_size_symbols(c);
  return c;
}

}  // namespace parity::frontend::hlo
