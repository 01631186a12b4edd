// SARIF 2.1.0: one run, three rules (mismatch, unknown, invalid), one result per
// failing or undecided placement and per diagnostic, located at the op's line.
#include <fmt/format.h>

#include <cctype>

#include "tools/report.h"
#include "tools/report_formats.h"

namespace parity::cli {

namespace {
// Related locations listed on one finding at most (the rest are counted).
constexpr size_t kMaxRelated = 200;
}  // namespace

namespace {

using nlohmann::json;

constexpr const char* kRules[][4] = {
    // id, name, short description, level
    {"parity/mismatch", "PlanMismatch", "The plan does not compute the spec's training step",
     "error"},
    {"parity/unknown", "VerificationUnknown", "Some obligations could not be decided", "warning"},
    {"parity/invalid", "InvalidInput", "The spec or plan is malformed or cannot run", "error"},
};
constexpr const char* kRuleHelp[] = {
    "A placed plan value differs from the spec value it claims to hold for some input. The result "
    "names the placement, the op defining the value, and (for the first divergence) a concrete "
    "witness that was re-checked by evaluating both programs. Run "
    "`parity explain CASE -o report.html` to browse it.",
    "A solver timed out or gave up, the solvers disagreed, or a counter-model did not reproduce. "
    "Raise --timeout-ms or --expand-budget, or try --solver both.",
    "Validation found a problem (ops, shapes, placements, groups, point-to-point matching, "
    "deadlocks) "
    "or the file could not be read. `parity validate` lists every problem.",
};
enum Rule { kMismatchRule = 0, kUnknownRule = 1, kInvalidRule = 2 };

// A relative path stays relative (resolved against the checkout); an absolute one becomes file://.
std::string to_uri(const std::string& path) {
  std::string o;
  for (unsigned char ch : path) {
    if (std::isalnum(ch) || ch == '/' || ch == '-' || ch == '_' || ch == '.' || ch == '~')
      o += static_cast<char>(ch);
    else
      o += fmt::format("%{:02X}", ch);
  }
  return !path.empty() && path[0] == '/' ? "file://" + o : o;
}

// GitHub code scanning needs a line: line 1 stands for "somewhere in this file".
json location(const SourcePos& p) {
  json region = {{"startLine", p.line > 0 ? p.line : 1}};
  if (p.column > 0) region["startColumn"] = p.column;
  return {
      {"physicalLocation", {{"artifactLocation", {{"uri", to_uri(p.file)}}}, {"region", region}}}};
}

std::string cut(const std::string& s, size_t n) {
  return s.size() > n ? s.substr(0, n) + " ..." : s;
}

json result(Rule r, const std::string& text, const SourcePos& at) {
  return {{"ruleId", kRules[r][0]},
          {"ruleIndex", int(r)},
          {"level", kRules[r][3]},
          {"message", {{"text", text}}},
          {"locations", json::array({location(at)})}};
}

json cex_json(const verify::Counterexample& x) {
  json in = json::object();
  for (const auto& [n, val] : x.inputs) in[n] = val;
  return {{"program", x.program},       {"value", x.value},
          {"plan_index", x.plan_index}, {"spec_value", x.spec_value},
          {"spec_index", x.spec_index}, {"rank", x.given_rank >= 0 ? x.given_rank : x.rank_id}, {"coords", x.coords},
          {"rank_text", x.rank},
          {"iteration", x.iter},        {"op", x.op},
          {"spec_expr", x.spec_expr},   {"plan_expr", x.plan_expr},
          {"difference", x.difference}, {"spec_num", x.spec_num},
          {"plan_num", x.plan_num},     {"inputs", in},
          {"found_by", x.found_by},     {"culprit", culprit_json(x)}};
}

}  // namespace

json verdict_sarif(const verify::Verdict& v, const ReportInput& in) {
  using verify::VerdictKind;
  json rules = json::array();
  for (size_t r = 0; r < 3; ++r)
    rules.push_back({{"id", kRules[r][0]},
                     {"name", kRules[r][1]},
                     {"shortDescription", {{"text", kRules[r][2]}}},
                     {"fullDescription", {{"text", kRuleHelp[r]}}},
                     {"help", {{"text", kRuleHelp[r]}}},
                     {"defaultConfiguration", {{"level", kRules[r][3]}}}});
  json results = json::array();

  if (v.kind == VerdictKind::invalid) {
    for (const auto& d : v.diags) {
      json res = result(kInvalidRule, d.text(), diag_pos(d, in));
      if (!d.check.empty()) res["properties"]["check"] = d.check;
      json logical = json::array();
      if (!d.program.empty()) logical.push_back({{"name", d.program}, {"kind", "module"}});
      if (!d.op.empty()) logical.push_back({{"name", d.op}, {"kind", "function"}});
      if (!logical.empty()) res["locations"][0]["logicalLocations"] = logical;
      if (!d.rank.empty()) res["properties"]["rank"] = d.rank;
      results.push_back(std::move(res));
    }
    if (v.diags.empty())
      results.push_back(result(kInvalidRule, in.label + ": " + v.reason, diag_pos({}, in)));
  }

  std::string first = v.cex ? cex_placement(*v.cex) : "";
  // One finding per root cause: the placement of the first divergence carries
  // every other failing placement as a related location (most are its
  // consequences downstream; another cause shows once this one is fixed).
  bool grouped = false;
  for (const auto& p : v.placements) grouped |= p.failed && p.label == first;
  json consequences = json::array();
  size_t more = 0;
  for (const auto& p : v.placements) {
    if (!grouped || !p.failed || p.label == first) continue;
    if (consequences.size() == kMaxRelated) {
      ++more;
      continue;
    }
    auto dot = p.label.find('.'), arrow = p.label.find(" -> ");
    json rel = location(dot < arrow && arrow != std::string::npos
                            ? plan_value_pos(in, p.label.substr(0, dot), p.label.substr(dot + 1, arrow - dot - 1))
                            : plan_value_pos(in, "", ""));
    rel["id"] = static_cast<int>(consequences.size()) + 2;
    rel["message"] = {{"text", fmt::format("also differs: {}: {} of {} obligations fail", p.label, p.failed, p.obligations)}};
    consequences.push_back(std::move(rel));
  }
  bool shown = false;
  for (const auto& p : v.placements) {
    if (!p.failed && !p.unknown) continue;
    if (grouped && p.failed && p.label != first) continue;  // a related location of the first
    // Recover program, value and spec value from the label `program.value -> spec`.
    std::string program, value, spec;
    auto arrow = p.label.find(" -> ");
    auto dot = p.label.find('.');
    if (arrow != std::string::npos && dot < arrow) {
      program = p.label.substr(0, dot);
      value = p.label.substr(dot + 1, arrow - dot - 1);
      spec = p.label.substr(arrow + 4);
    }
    SourcePos at = plan_value_pos(in, program, value);
    std::string text;
    Rule rule = p.failed ? kMismatchRule : kUnknownRule;
    if (p.failed) {
      text = fmt::format("{}: {} of {} obligations fail", p.label, p.failed, p.obligations);
      if (p.unknown) text += fmt::format(", {} undecided", p.unknown);
    } else {
      text = fmt::format("{}: {} of {} obligations undecided", p.label, p.unknown, p.obligations);
      if (!v.reason.empty()) text += " (" + v.reason + ")";
    }
    json props = {{"placement", p.label},
                  {"obligations", p.obligations},
                  {"proved", p.proved},
                  {"failed", p.failed},
                  {"unknown", p.unknown}};
    if (p.failed && p.label == first && !shown) {
      const auto& x = *v.cex;
      shown = true;
      if (int line = label_line(x.op)) at.line = line;
      // The finding sits where the numbers part, when that was found.
      if (x.culprit && x.culprit->step < x.lineage.size()) {
        const verify::LineageStep& st = x.lineage[x.culprit->step];
        SourcePos cp = plan_value_pos(in, st.program, st.value);
        if (int line = label_line(x.culprit->op)) cp.line = line;
        if (cp.line) at = cp;
        text += ". Cause: `" + x.culprit->op + "` on rank " + st.rank_str + (st.iter.empty() ? "" : " (" + st.iter + ")") +
                ": " + x.culprit->why;
      }
      text += fmt::format(
          ". First divergence (in program order) at {}.{}{} on rank {}{}, defined by `{}`: spec "
          "{}{} = {:.9g}, plan "
          "= {:.9g} ({}). Difference: {}",
          x.program, x.value, index_str(x.plan_index), x.rank,
          x.iter.empty() ? "" : " (" + x.iter + ")", x.op, x.spec_value, index_str(x.spec_index),
          x.spec_num, x.plan_num, x.found_by, cut(x.difference, 400));
      props["counterexample"] = cex_json(x);
    } else if (p.failed && !first.empty()) {
      text += "; the first divergence is in " + first;
    }
    json res = result(rule, text, at);
    if (!program.empty()) {
      res["locations"][0]["logicalLocations"] = json::array(
          {{{"name", value}, {"fullyQualifiedName", program + "." + value}, {"kind", "variable"}}});
      SourcePos sp = spec_value_pos(in, spec);
      json rel = location(sp);
      rel["id"] = 1;
      rel["message"] = {{"text", "spec value " + spec}};
      res["relatedLocations"] = json::array({rel});
    }
    if (grouped && p.label == first && !consequences.empty()) {
      for (auto& c : consequences) res["relatedLocations"].push_back(c);
      res["message"]["text"] = res["message"]["text"].get<std::string>() +
                               fmt::format(" ({} other placed values also differ, listed as related locations{}; most "
                                           "follow from this one: fix it and verify again)",
                                           consequences.size() + more,
                                           more ? fmt::format(", the first {}", consequences.size()) : "");
      props["consequences"] = consequences.size() + more;
    }
    res["partialFingerprints"] = {{"parityPlacement/v1", p.label}};
    res["properties"] = props;
    results.push_back(std::move(res));
  }
  // The results must show the verdict even when no placement carries it.
  if (v.kind == VerdictKind::mismatch && !shown && v.cex) {
    json res = result(kMismatchRule, "the plan does not compute the spec: " + cex_text(*v.cex),
                      plan_value_pos(in, v.cex->program, v.cex->value));
    res["properties"] = {{"counterexample", cex_json(*v.cex)}};
    results.push_back(std::move(res));
  }
  if (v.kind == VerdictKind::unknown && results.empty())
    results.push_back(
        result(kUnknownRule, "verification undecided: " + v.reason, plan_value_pos(in, "", "")));

  json artifacts = json::array();
  for (const auto& f : in.files) artifacts.push_back({{"location", {{"uri", to_uri(f)}}}});
  json run = {{"tool",
               {{"driver",
                 {{"name", "parity"},
                  {"version", PARITY_VERSION},
                  {"semanticVersion", PARITY_VERSION},
                  {"rules", rules}}}}},
              {"invocations", json::array({{{"executionSuccessful", true},
                                            {"exitCode", verify::verdict_exit_code(v.kind)}}})},
              {"artifacts", artifacts},
              {"results", results},
              {"properties",
               {{"verdict", verify::verdict_name(v.kind)},
                {"input", in.label},
                {"seconds", v.seconds},
                {"solver", v.solver},
                {"reason", v.reason},
                {"obligations",
                 {{"total", v.obligations},
                  {"unique", v.unique},
                  {"by_canonical_form", v.by_hash},
                  {"by_expansion", v.by_expansion},
                  {"by_smt", v.by_smt},
                  {"failed", v.failed},
                  {"unknown", v.unknown}}}}}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({run})}};
}

}  // namespace parity::cli
