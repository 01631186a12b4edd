#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "frontend/hlo/api.h"
#include "frontend/proto/case_io.h"
#include "tools/cli.h"
#ifdef PARITY_HAVE_MLIR
#include "frontend/mlir/api.h"
#endif

namespace parity::cli {

namespace {
bool is_mlir(const std::string& f) { return f.size() >= 5 && f.compare(f.size() - 5, 5, ".mlir") == 0; }

// MLIR input: one annotated module (partitioned by MLIR itself), or an
// annotated spec module and a partitioned plan module.
ir::Case load_mlir(const std::vector<std::string>& files) {
  if (!is_mlir(files[0]) || !is_mlir(files.back()))
    throw ir::InvalidInput("cannot mix .mlir files with case files");
#ifdef PARITY_HAVE_MLIR
  namespace mi = frontend::mlirio;
  try {
    if (files.size() == 1) return mi::partition_and_import(files[0], {}).c;
    return mi::import_pair(files[0], files[1], {});
  } catch (const mi::MlirFailure& e) {
    throw UnknownInput(files_label(files) + ": MLIR failure: " + e.what());
  } catch (const mi::Unsupported& e) {
    throw UnknownInput(files_label(files) + ": " + e.what());
  }
#else
  throw ir::InvalidInput("this parity was built without MLIR: cannot read " + files_label(files));
#endif
}
}  // namespace

bool infer_hlo_placements = true;
std::set<std::string> inferred_hlo_values;
std::string hlo_culprit;

ir::Case load_case(const std::vector<std::string>& files) {
  inferred_hlo_values.clear();
  hlo_culprit.clear();
  if (files.empty() || files.size() > 2) throw ir::InvalidInput("expected CASE or SPEC PLAN");
  if (files.size() == 2 && files[0] == "-" && files[1] == "-")
    throw ir::InvalidInput("standard input ('-') can be read once: give the spec or the plan as a file");
  if (is_mlir(files[0]) || is_mlir(files.back())) return load_mlir(files);
  if (frontend::hlo::is_hlo_path(files[0]) || frontend::hlo::is_hlo_path(files.back())) {
    if (files.size() != 2 || !frontend::hlo::is_hlo_path(files[0]) || !frontend::hlo::is_hlo_path(files[1]))
      throw ir::InvalidInput("HLO input is two files: the single-device module (SPEC.hlo) and the partitioned one (PLAN.hlo)");
    try {
      frontend::hlo::ImportOptions o;
      o.infer_placements = infer_hlo_placements;
      frontend::hlo::Hints h;
      ir::Case c = frontend::hlo::import_pair(files[0], files[1], o, &h);
      inferred_hlo_values = std::move(h.placed);
      hlo_culprit = std::move(h.culprit);
      return c;
    } catch (const frontend::hlo::Unsupported& e) {
      throw UnknownInput(e.what());
    }
  }
  ir::Case c = frontend::read_case(files[0]);
  if (files.size() == 1) return c;
  ir::Case p = frontend::read_case(files[1]);
  if (!c.spec) throw ir::InvalidInput(ir::Diag{files[0], "", "", "", "holds no spec (expected SPEC PLAN)"});
  if (p.plan.programs.empty()) throw ir::InvalidInput(ir::Diag{files[1], "", "", "", "holds no plan (expected SPEC PLAN)"});
  c.plan = std::move(p.plan);
  return c;
}

std::string files_label(const std::vector<std::string>& files) {
  return files.size() == 2 ? files[0] + " + " + files[1] : files.empty() ? "" : files[0];
}

void require_writable_dir(const std::string& dir, const std::string& option) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string probe = (std::filesystem::path(dir) / (".parity-write-test." + std::to_string(::getpid()))).string();
  std::FILE* f = ec ? nullptr : std::fopen(probe.c_str(), "wb");
  if (!f) {
    const std::string why = ec ? ec.message() : std::strerror(errno);
    throw ir::InvalidInput(option + " " + dir + ": cannot write there (" + why + ")");
  }
  std::fclose(f);
  std::filesystem::remove(probe, ec);
}

std::string invalid_text(const std::vector<ir::Diag>& d, const std::string& label) {
  std::string s;
  for (const auto& x : d) s += x.str() + "\n";
  s += fmt::format("INVALID: {} problem{}{}\n", d.size(), d.size() == 1 ? "" : "s", label.empty() ? "" : " in " + label);
  return s;
}

int report_diags(const ir::DiagList& d) {
  if (d.empty()) return kOk;
  fmt::print(stderr, "{}", invalid_text(d.items));
  return kInvalid;
}

}  // namespace parity::cli
