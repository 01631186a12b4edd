// A saved `verify --json` result read back into a verdict, so `explain --from`
// presents it without proving the plan again.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "tools/report.h"

namespace parity::cli {

namespace {

using nlohmann::json;

// Line and column (from 1) of byte `pos` of `text`.
std::pair<int, int> position(const std::string& text, size_t pos) {
  int line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n')
      ++line, col = 1;
    else
      ++col;
  }
  return {line, col};
}

ir::InvalidInput error_at(const std::string& file, int line, int col, const std::string& msg) {
  ir::Diag d;
  d.file = file;
  d.line = line;
  d.col = col;
  d.message = msg;
  d.check = "saved-result";
  return ir::InvalidInput(d);
}

template <class T>
T get(const json& j, const char* key, T dflt) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  return it->get<T>();
}

// The member `key` of `j`, or an empty JSON value (null: iterates as empty).
const json& member(const json& j, const char* key) {
  static const json none;
  auto it = j.find(key);
  return it == j.end() ? none : *it;
}

verify::LineageStep step_of(const json& s) {
  verify::LineageStep st;
  st.depth = get<int>(s, "depth", 0);
  st.given_rank = get<int64_t>(s, "rank", -1);
  st.rank = st.given_rank;
  st.rank_str = get<std::string>(s, "rank_text", "");
  st.coords = get<std::map<std::string, int64_t>>(s, "coords", {});
  st.program = get<std::string>(s, "program", "");
  st.value = get<std::string>(s, "value", "");
  st.iter = get<std::string>(s, "iteration", "");
  st.op = get<std::string>(s, "op", "");
  st.placed = get<std::string>(s, "placed_on", "");
  st.from = get<std::vector<size_t>>(s, "reads", {});
  return st;
}

verify::Counterexample cex_of(const json& j) {
  verify::Counterexample x;
  x.program = get<std::string>(j, "program", "");
  x.value = get<std::string>(j, "value", "");
  x.plan_index = get<std::vector<int64_t>>(j, "plan_index", {});
  x.spec_value = get<std::string>(j, "spec_value", "");
  x.spec_index = get<std::vector<int64_t>>(j, "spec_index", {});
  x.given_rank = get<int64_t>(j, "rank", -1);
  x.rank_id = x.given_rank;
  x.coords = get<std::map<std::string, int64_t>>(j, "coords", {});
  x.rank = get<std::string>(j, "rank_text", "");
  x.iter = get<std::string>(j, "iteration", "");
  x.op = get<std::string>(j, "op", "");
  x.spec_expr = get<std::string>(j, "spec_expr", "");
  x.plan_expr = get<std::string>(j, "plan_expr", "");
  x.difference = get<std::string>(j, "difference", "");
  x.spec_num = get<double>(j, "spec_num", 0);
  x.plan_num = get<double>(j, "plan_num", 0);
  // Inputs in the order the verdict listed them (JSON objects keep no order:
  // nlohmann's sorts them by name, which is how they were written too).
  for (const auto& [n, v] : member(j, "inputs").items()) x.inputs.emplace_back(n, v.get<double>());
  x.found_by = get<std::string>(j, "found_by", "");
  for (const auto& s : member(j, "lineage")) x.lineage.push_back(step_of(s));
  if (auto c = j.find("culprit"); c != j.end() && c->is_object()) {
    verify::Culprit cu;
    cu.step = get<size_t>(*c, "lineage_step", 0);
    cu.op = get<std::string>(*c, "op", "");
    cu.why = get<std::string>(*c, "why", "");
    cu.place = get<std::vector<std::string>>(*c, "place", {});
    if (cu.step < x.lineage.size()) x.culprit = cu;
  }
  return x;
}

}  // namespace

std::string inputs_digest(const std::vector<std::string>& files) {
  // FNV-1a over each file's bytes and name: enough to tell that a saved
  // result was made from other contents (not a cryptographic claim).
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 1099511628211ULL;
  };
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in || f == "-") return "";
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return "";
    for (unsigned char c : ss.str()) mix(c);
    mix(0);
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

verify::Verdict verdict_from_json(const std::string& file, std::vector<std::string>* files,
                                  std::string* digest) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw error_at(file, 0, 0, "cannot read the saved result");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    auto [line, col] = position(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string msg = e.what();
    if (auto p = msg.find("parse error"); p != std::string::npos) msg = msg.substr(p);
    throw error_at(file, line, col, "not a saved result: " + msg);
  }
  auto bad = [&](const std::string& why) {
    return error_at(file, 1, 1, "not a saved result of parity verify --json: " + why);
  };
  if (!j.is_object() || get<std::string>(j, "schema", "") != "parity-verdict")
    throw bad("no \"schema\": \"parity-verdict\"");
  const int version = get<int>(j, "version", 0);
  if (version != kReportSchemaVersion)
    throw bad(fmt::format("schema version {} (this parity reads version {}; verify again)", version,
                          kReportSchemaVersion));
  try {
    verify::Verdict v;
    const std::string name = get<std::string>(j, "verdict", "");
    bool known = false;
    for (auto k : {verify::VerdictKind::verified, verify::VerdictKind::mismatch,
                   verify::VerdictKind::unknown, verify::VerdictKind::invalid})
      if (name == verify::verdict_name(k)) v.kind = k, known = true;
    if (!known) throw bad("verdict '" + name + "'");
    v.seconds = get<double>(j, "seconds", 0);
    v.solver = get<std::string>(j, "solver", "");
    v.reason = get<std::string>(j, "reason", "");
    const json ob = member(j, "obligations");
    v.obligations = get<size_t>(ob, "total", 0);
    v.unique = get<size_t>(ob, "unique", 0);
    v.by_hash = get<size_t>(ob, "by_canonical_form", 0);
    v.by_expansion = get<size_t>(ob, "by_expansion", 0);
    v.by_smt = get<size_t>(ob, "by_smt", 0);
    v.failed = get<size_t>(ob, "failed", 0);
    v.unknown = get<size_t>(ob, "unknown", 0);
    v.unchecked = get<size_t>(ob, "unchecked", 0);
    for (const auto& d : member(j, "diagnostics")) {
      ir::Diag g;
      g.file = get<std::string>(d, "file", "");
      g.line = get<int>(d, "line", 0);
      g.col = get<int>(d, "column", 0);
      g.check = get<std::string>(d, "check", "");
      g.program = get<std::string>(d, "program", "");
      g.op = get<std::string>(d, "op", "");
      g.rank = get<std::string>(d, "rank", "");
      g.message = get<std::string>(d, "message", "");
      v.diags.push_back(g);
    }
    const json red = member(j, "reduction");
    v.reductions = get<std::vector<std::string>>(red, "applied", {});
    v.kept = get<std::vector<std::string>>(red, "kept", {});
    v.verified_ranks = get<int64_t>(red, "verified_ranks", 0);
    v.second_look = get<std::string>(red, "second_look", "");
    v.notes = get<std::vector<std::string>>(j, "notes", {});
    const json st = member(j, "stages");
    v.stages = get<size_t>(st, "total", 0);
    v.unique_stages = get<size_t>(st, "distinct", 0);
    v.cached_stages = get<size_t>(st, "cached", 0);
    v.stage_note = get<std::string>(st, "note", "");
    v.stage_difference = get<std::string>(st, "difference", "");
    const json t = member(j, "timings");
    v.read_seconds = get<double>(t, "read", 0);
    v.reduce_seconds = get<double>(t, "validate_and_reduce", 0);
    v.validate_seconds = get<double>(t, "validate", 0);
    v.fold_seconds = get<double>(t, "fold", 0);
    v.second_look_seconds = get<double>(t, "second_look", 0);
    v.stage_build_seconds = get<double>(t, "stage_build", 0);
    v.stage_prove_seconds = get<double>(t, "stage_prove", 0);
    v.whole_seconds = get<double>(t, "whole_check", 0);
    for (const auto& s : member(j, "stage_list")) {
      verify::StageInfo si;
      si.spec_value = get<std::string>(s, "spec_value", "");
      si.hash = get<std::string>(s, "hash", "");
      si.instances = get<size_t>(s, "instances", 0);
      si.obligations = get<size_t>(s, "obligations", 0);
      si.seconds = get<double>(s, "seconds", 0);
      si.cached = get<std::string>(s, "status", "") == "cached";
      si.shard = get<int>(s, "shard", 0);
      v.stage_list.push_back(si);
    }
    for (const auto& p : member(j, "placements"))
      v.placements.push_back({get<std::string>(p, "placement", ""),
                              get<size_t>(p, "obligations", 0), get<size_t>(p, "proved", 0),
                              get<size_t>(p, "failed", 0), get<size_t>(p, "unknown", 0)});
    if (auto c = j.find("counterexample"); c != j.end() && c->is_object()) v.cex = cex_of(*c);
    if (files) *files = get<std::vector<std::string>>(j, "files", {});
    if (digest) *digest = get<std::string>(j, "digest", "");
    return v;
  } catch (const json::exception& e) {
    throw bad(e.what());
  }
}

}  // namespace parity::cli
