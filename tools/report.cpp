#include "tools/report.h"

#include "tools/cli.h"
#include "tools/report_formats.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace parity::cli {

namespace {
std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  for (size_t b = 0, e; b < s.size(); b = e + 1) {
    e = s.find('\n', b);
    if (e == std::string::npos) e = s.size();
    out.push_back(s.substr(b, e - b));
  }
  return out;
}

std::string idx(const std::vector<int64_t>& i) {
  std::string s = "[";
  for (size_t k = 0; k < i.size(); ++k) s += (k ? "," : "") + std::to_string(i[k]);
  return s + "]";
}
}  // namespace

std::string verdict_text(const verify::Verdict& v, const std::string& label, const ir::Case& c) {
  std::string s;
  const char* name = verify::verdict_name(v.kind);
  if (v.kind == verify::VerdictKind::invalid) {
    if (v.diags.empty()) return fmt::format("INVALID: {}: {}\n", label, v.reason);
    return invalid_text(v.diags, label);
  }
  if (c.plan.programs.empty() && !v.obligations && !v.stages)  // ended before the case was read or checked
    s += fmt::format("{}  {}: no obligation was checked", name, label);
  else if (!v.obligations && !v.stages && v.cex)  // refuted by running the plan, before obligations were built
    s += fmt::format("{}  {}: {} ranks, refuted by evaluating the plan numerically (no obligation was built)", name,
                     label, c.plan.mesh.num_ranks());
  else if (v.stages)
    s += fmt::format("{}  {}: {} ranks, {} stages ({} distinct), {} obligations in distinct stages: {} by canonical form, "
                     "{} by expansion",
                     name, label, c.plan.mesh.num_ranks(), v.stages, v.unique_stages, v.obligations, v.by_hash,
                     v.by_expansion);
  else
    s += fmt::format("{}  {}: {} ranks, {} obligations ({} unique): {} by canonical form, {} by expansion, {} by {}",
                     name, label, c.plan.mesh.num_ranks(), v.obligations, v.unique, v.by_hash, v.by_expansion,
                     v.by_smt, v.solver);
  if (v.failed && (v.obligations || v.stages))
    s += fmt::format(", {} failed{}", v.failed, v.kind == verify::VerdictKind::unknown ? " (see the reason)" : "");
  if (v.unknown) s += fmt::format(", {} unknown", v.unknown);
  if (v.unchecked) s += fmt::format(", {} left unchecked after the first mismatch", v.unchecked);
  if (v.cached_stages) s += fmt::format(", {} distinct stages from the cache", v.cached_stages);
  s += fmt::format("; {:.2f} s\n", v.seconds);
  if (!v.reductions.empty())
    s += fmt::format("  reduced to {} ranks: {}\n", v.verified_ranks, fmt::join(v.reductions, ", "));
  for (const auto& k : v.kept) s += fmt::format("  not reduced: {}\n", k);
  if (!v.second_look.empty()) s += fmt::format("  second look: {}\n", v.second_look);
  for (const auto& n : v.notes) s += fmt::format("  note: {}\n", n);
  // On a VERIFIED the note is why stages did not settle it, not a fault.
  if (!v.stage_note.empty() && v.kind == verify::VerdictKind::verified)
    s += fmt::format("  stages: not settled stage by stage ({}); the plan as a whole verified\n", v.stage_note);
  else if (!v.stage_note.empty())
    s += fmt::format("  stages: {}; checked as a whole\n", v.stage_note);
  if (v.kind == verify::VerdictKind::unknown) s += fmt::format("  reason: {}\n", v.reason);
  // Where the stage that was not proved differs: what a new canonical form
  // or proof step would have to equate (a counterexample shows a MISMATCH).
  if (v.kind == verify::VerdictKind::unknown && !v.stage_difference.empty())
    s += fmt::format("  stage difference (terms over the stage's inputs): {}\n", v.stage_difference);
  if (v.cex) {
    const auto& x = *v.cex;
    s += fmt::format("  first divergence (in program order) at {}.{}{} on rank {}{}, defined by `{}`\n", x.program, x.value, idx(x.plan_index),
                     x.rank, x.iter.empty() ? "" : " (" + x.iter + ")", x.op);
    for (const auto& l : split_lines(culprit_text(x)))
      if (!l.empty()) s += "  " + l + "\n";
    s += fmt::format("  spec element {}{}\n", x.spec_value, idx(x.spec_index));
    auto cut = [](const std::string& e) { return e.size() > 160 ? e.substr(0, 160) + " ..." : e; };
    s += fmt::format("  spec = {}\n  plan = {}\n", cut(x.spec_expr), cut(x.plan_expr));
    if (!x.difference.empty()) s += fmt::format("  difference: {}\n", x.difference);
    s += fmt::format("  witness ({}): spec {:.9g}, plan {:.9g}\n", x.found_by, x.spec_num, x.plan_num);
    for (const auto& [n, val] : x.inputs) s += fmt::format("    {} = {:.6g}\n", n, val);
    // The first steps only: the whole walk is in --json and `parity explain`.
    for (const auto& l : split_lines(lineage_text(x, 6))) s += "  " + l + "\n";
  }
  if (v.failed || v.unknown) {
    for (const auto& p : v.placements)
      if (p.failed || p.unknown)
        s += fmt::format("  {}: {} of {} fail, {} unknown\n", p.label, p.failed, p.obligations, p.unknown);
  }
  return s;
}

nlohmann::json culprit_json(const verify::Counterexample& x) {
  if (!x.culprit || x.culprit->step >= x.lineage.size()) return nullptr;
  const verify::Culprit& c = *x.culprit;
  const verify::LineageStep& st = x.lineage[c.step];
  return {{"op", c.op},
          {"program", st.program},
          {"value", st.value},
          {"rank", st.given_rank >= 0 ? st.given_rank : st.rank},
          {"coords", st.coords},
          {"rank_text", st.rank_str},
          {"iteration", st.iter},
          {"lineage_step", c.step},
          {"why", c.why},
          {"place", c.place}};
}

nlohmann::json verdict_json(const verify::Verdict& v, const std::string& label,
                            const std::vector<std::string>& files) {
  nlohmann::json j;
  j["schema"] = "parity-verdict";
  j["version"] = kReportSchemaVersion;
  j["input"] = label;
  if (!files.empty()) {
    j["files"] = files;
    if (std::string d = inputs_digest(files); !d.empty()) j["digest"] = d;
  }
  j["verdict"] = verify::verdict_name(v.kind);
  j["exit_code"] = verify::verdict_exit_code(v.kind);
  j["seconds"] = v.seconds;
  j["solver"] = v.solver;
  j["reason"] = v.reason;
  j["obligations"] = {{"total", v.obligations}, {"unique", v.unique}, {"by_canonical_form", v.by_hash},
                      {"by_expansion", v.by_expansion}, {"by_smt", v.by_smt}, {"failed", v.failed},
                      {"unknown", v.unknown}, {"unchecked", v.unchecked}};
  j["diagnostics"] = nlohmann::json::array();
  for (const auto& d : v.diags)
    j["diagnostics"].push_back({{"file", d.file},
                                {"line", d.line},
                                {"column", d.col},
                                {"check", d.check},
                                {"program", d.program},
                                {"op", d.op},
                                {"rank", d.rank},
                                {"message", d.message}});
  j["reduction"] = {{"applied", v.reductions}, {"kept", v.kept}, {"verified_ranks", v.verified_ranks},
                      {"second_look", v.second_look}};
  if (!v.notes.empty()) j["notes"] = v.notes;
  j["stages"] = {{"total", v.stages}, {"distinct", v.unique_stages}, {"cached", v.cached_stages}, {"note", v.stage_note}, {"difference", v.stage_difference}};
  j["timings"] = {{"read", v.read_seconds},
                  {"validate_and_reduce", v.reduce_seconds},
                  {"validate", v.validate_seconds},
                  {"fold", v.fold_seconds},
                  {"second_look", v.second_look_seconds},
                  {"stage_build", v.stage_build_seconds},
                  {"stage_prove", v.stage_prove_seconds}, {"whole_check", v.whole_seconds}};
  j["stage_list"] = nlohmann::json::array();
  for (const auto& st : v.stage_list)
    j["stage_list"].push_back({{"spec_value", st.spec_value},
                               {"hash", st.hash},
                               {"instances", st.instances},
                               {"obligations", st.obligations},
                               {"seconds", st.seconds},
                               {"status", st.cached ? "cached" : "proved"}, {"shard", st.shard}});
  j["placements"] = nlohmann::json::array();
  for (const auto& p : v.placements)
    j["placements"].push_back({{"placement", p.label}, {"obligations", p.obligations}, {"proved", p.proved},
                               {"failed", p.failed}, {"unknown", p.unknown}});
  if (v.cex) {
    const auto& x = *v.cex;
    nlohmann::json in = nlohmann::json::object();
    for (const auto& [n, val] : x.inputs) in[n] = val;
    j["counterexample"] = {{"program", x.program}, {"value", x.value}, {"plan_index", x.plan_index},
                           {"spec_value", x.spec_value}, {"spec_index", x.spec_index},
                           {"rank", x.given_rank >= 0 ? x.given_rank : x.rank_id}, {"coords", x.coords},
                           {"rank_text", x.rank},
                           {"iteration", x.iter}, {"op", x.op}, {"spec_expr", x.spec_expr}, {"plan_expr", x.plan_expr}, {"difference", x.difference},
                           {"spec_num", x.spec_num}, {"plan_num", x.plan_num}, {"inputs", in}, {"found_by", x.found_by}};
    nlohmann::json lin = nlohmann::json::array();
    for (const auto& st : x.lineage)
      lin.push_back({{"depth", st.depth}, {"program", st.program}, {"value", st.value},
                     {"rank", st.given_rank >= 0 ? st.given_rank : st.rank}, {"coords", st.coords},
                     {"rank_text", st.rank_str},
                     {"iteration", st.iter}, {"op", st.op}, {"placed_on", st.placed}, {"reads", st.from}});
    j["counterexample"]["lineage"] = lin;
    if (nlohmann::json cj = culprit_json(x); !cj.is_null()) j["counterexample"]["culprit"] = cj;
  }
  return j;
}

}  // namespace parity::cli
