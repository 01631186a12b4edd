// `parity reduce`: writes the reduced instance of a case (the smaller mesh,
// microbatch count and dims that `verify` checks), e.g. to run a plan of
// thousands of ranks with `parity run` on one machine.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend/proto/case_io.h"
#include "ir/validate.h"
#include "reduce/layer_fold.h"
#include "reduce/reduce.h"
#include "tools/cli.h"

namespace parity::cli {

void add_reduce(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand(
      "reduce", "write the reduced instance verify checks: fewer ranks, microbatches and smaller dims");
  static std::vector<std::string> files;
  static std::string out;
  static int64_t keep = 2;
  static bool no_shape = false;
  static int64_t least = 2;
  static bool second = false;
  static bool fold = false;
  static bool indeterminates = false;
  cmd->add_option("files", files, "CASE, or SPEC PLAN")->required();
  cmd->add_option("-o,--output", out, "the reduced case (.pb binary, otherwise text)")->required();
  cmd->add_option("--keep", keep, "coordinates kept of each run of interchangeable ones (at least 2)")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  cmd->add_flag("--no-shape", no_shape, "reduce the mesh only; keep dims and microbatch counts");
  cmd->add_option("--least", least, "the least value of a reduced dim or shard extent")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_flag("--second-look", second,
                "the instance verify's second look checks: --keep 3 --least 3, every index size kept apart from "
                "every size that differs from it as given");
  cmd->add_flag("--fold", fold,
                "fold repeated layers first, as verify does (the layers kept and the stubs standing in for the "
                "others: docs/soundness.md, \"Layer fold\")");
  cmd->add_flag("--literals-as-indeterminates", indeterminates,
                "reduce past literals of scale factors, addends and filled values that equal a size, as verify's "
                "first attempt does (it proves the instance with each such literal a variable: docs/soundness.md, "
                "\"Literals read as indeterminates\"); they are listed");
  cmd->callback([&run] {
    run = [] {
      std::string label = files_label(files);
      ir::Case c = load_case(files);
      // Reduction needs a valid case; the schedule of a huge mesh is simulated
      // on the reduced instance (as verify does).
      ir::TypeMap spec_types;
      std::map<std::string, ir::TypeMap> types;
      if (int rc = report_diags(ir::validate_case(c, label, 20'000, 0, fold ? &spec_types : nullptr,
                                                  fold ? &types : nullptr));
          rc != kOk)
        return rc;
      if (fold) {
        reduce::LayerFold f = reduce::fold_layers(c, spec_types, types);
        if (f.folded)
          fmt::print("  layer fold: {}\n", f.summary);
        else
          fmt::print("  layer fold: not folded ({})\n", f.summary.empty() ? "too few layers to fold" : f.summary);
        if (f.folded) c = std::move(f.kase);
      }
      reduce::Options o;
      o.keep = second ? std::max<int64_t>(keep, 3) : keep;
      o.least = second ? std::max<int64_t>(least, 3) : least;
      o.second_look = second;
      o.shape = !no_shape;
      o.generalize_literals = indeterminates;
      reduce::Result r = reduce::reduce_case(c, o);
      const ir::Case& target = r.changed ? r.reduced : c;
      if (!r.changed)
        if (int rc = report_diags(ir::validate_case(c, label)); rc != kOk) return rc;
      frontend::write_case(target, out);
      if (!r.invalid_at.empty()) fmt::print("  a reduced instance does not validate: {}\n", r.invalid_at);
      fmt::print("wrote {}: {} ranks (from {}){}\n", out, target.plan.mesh.num_ranks(), c.plan.mesh.num_ranks(),
                 r.changed ? "" : "; nothing could be reduced");
      if (!r.applied.empty()) fmt::print("  reduced: {}\n", fmt::join(r.applied, ", "));
      for (const auto& k : r.kept) fmt::print("  not reduced: {}\n", k);
      for (const auto& [x, why] : r.generalized) fmt::print("  literal read as an indeterminate: {}\n", why);
      for (const auto& a : r.axes)
        if (a.from != a.to) fmt::print("  {} coordinates kept: {}\n", a.axis, fmt::join(a.orig_of, ", "));
      return int{kOk};
    };
  });
}

}  // namespace parity::cli
