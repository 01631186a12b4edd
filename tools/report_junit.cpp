// JUnit XML: one testsuite per input, one testcase for validation and one per
// placement; and the helpers every report format shares.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <ctime>

#include "tools/report.h"
#include "tools/report_formats.h"

namespace parity::cli {

// --- shared helpers ---

int label_line(std::string_view s) {
  auto at = s.rfind("(line ");
  if (at == std::string_view::npos) return 0;
  int n = 0;
  for (size_t k = at + 6; k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])); ++k) {
    n = n * 10 + (s[k] - '0');
    if (n > 100000000) return 0;
  }
  return n;
}

const ir::Op* find_def(const ir::Graph& g, const std::string& value) {
  for (const auto& op : g.ops) {
    for (const auto& r : op.results)
      if (r == value) return &op;
    for (const auto& body : op.regions)
      if (const ir::Op* d = find_def(body, value)) return d;
  }
  return nullptr;
}

std::string placement_label(const ir::Placement& p) {
  return p.program + "." + p.value + " -> " + p.spec_value;
}

std::string cex_placement(const verify::Counterexample& x) {
  return x.program + "." + x.value + " -> " + x.spec_value;
}

namespace {
const std::string& spec_file(const ReportInput& in) {
  static const std::string none;
  return in.files.empty() ? none : in.files.front();
}
const std::string& plan_file(const ReportInput& in) {
  static const std::string none;
  return in.files.empty() ? none : in.files.back();
}
// Parses "N" or "N:M" after a file name; false if anything else follows.
bool parse_line_col(std::string_view s, int& line, int& col) {
  line = col = 0;
  int* cur = &line;
  if (s.empty()) return false;
  for (char ch : s) {
    if (ch == ':' && cur == &line && line > 0) {
      cur = &col;
    } else if (std::isdigit(static_cast<unsigned char>(ch)) && *cur < 100000000) {
      *cur = *cur * 10 + (ch - '0');
    } else {
      return false;
    }
  }
  return line > 0;
}
}  // namespace

SourcePos diag_pos(const ir::Diag& d, const ReportInput& in) {
  SourcePos p;
  p.file = d.file;
  if (d.line > 0) {
    p.line = d.line;
    p.column = d.col > 0 ? d.col : 1;
    return p;
  }
  // A parse error names `FILE:LINE:COL`.
  for (const auto& f : in.files) {
    if (d.file.size() > f.size() + 1 && d.file.compare(0, f.size(), f) == 0 &&
        d.file[f.size()] == ':') {
      int line, col;
      if (parse_line_col(std::string_view(d.file).substr(f.size() + 1), line, col)) {
        p.file = f;
        p.line = line;
        p.column = col;
        return p;
      }
    }
  }
  if ((d.file.empty() || d.file == in.label) && !in.files.empty())
    p.file = d.program == "spec" || d.program == "(spec)" ? spec_file(in) : plan_file(in);
  p.line = label_line(d.op);
  return p;
}

SourcePos plan_value_pos(const ReportInput& in, const std::string& program,
                         const std::string& value) {
  SourcePos p{plan_file(in), 0, 0};
  if (!in.c) return p;
  if (const ir::Program* prog = in.c->plan.program(program))
    if (const ir::Op* op = find_def(prog->graph, value)) p.line = op->line;
  return p;
}

SourcePos spec_value_pos(const ReportInput& in, const std::string& value) {
  SourcePos p{spec_file(in), 0, 0};
  if (in.c && in.c->spec)
    if (const ir::Op* op = find_def(in.c->spec->graph, value)) p.line = op->line;
  return p;
}

std::string index_str(const std::vector<int64_t>& i) {
  std::string s = "[";
  for (size_t k = 0; k < i.size(); ++k) s += (k ? "," : "") + std::to_string(i[k]);
  return s + "]";
}

std::string cex_text(const verify::Counterexample& x) {
  std::string s = fmt::format(
      "first divergence (in program order) at {}.{}{} on rank {}{}, defined by `{}`\n", x.program,
      x.value, index_str(x.plan_index), x.rank, x.iter.empty() ? "" : " (" + x.iter + ")", x.op);
  s += culprit_text(x);
  s += fmt::format("spec element {}{}\n", x.spec_value, index_str(x.spec_index));
  s +=
      fmt::format("spec = {}\nplan = {}\ndifference: {}\n", x.spec_expr, x.plan_expr, x.difference);
  s += fmt::format("witness ({}): spec {:.9g}, plan {:.9g}\n", x.found_by, x.spec_num, x.plan_num);
  for (const auto& [n, val] : x.inputs) s += fmt::format("  {} = {:.6g}\n", n, val);
  return s;
}

std::string culprit_text(const verify::Counterexample& x) {
  if (!x.culprit || x.culprit->step >= x.lineage.size()) return "";
  const verify::Culprit& c = *x.culprit;
  const verify::LineageStep& st = x.lineage[c.step];
  std::string s = fmt::format("cause: `{}` on rank {}{}: {}\n", c.op, st.rank_str,
                              st.iter.empty() ? "" : " (" + st.iter + ")", c.why);
  if (!c.place.empty())
    s += fmt::format("to tell it from the operations before it, place {}\n", fmt::join(c.place, ", "));
  return s;
}

std::string lineage_text(const verify::Counterexample& x, size_t max_steps) {
  if (x.lineage.empty()) return "";
  std::string s = "lineage (the values it is computed from, across ranks and iterations; placed values end "
                  "the walk):\n";
  size_t n = std::min(max_steps, x.lineage.size());
  for (size_t i = 0; i < n; ++i) {
    const verify::LineageStep& st = x.lineage[i];
    std::string reads;
    for (size_t f : st.from) reads += fmt::format(" #{}", f);
    s += fmt::format("  #{:<3} {}.{} on rank {}{}: {}{}{}\n", i, st.program, st.value, st.rank_str,
                     st.iter.empty() ? "" : " (" + st.iter + ")", st.op,
                     st.placed.empty() ? "" : "; placed on " + st.placed,
                     reads.empty() ? "" : "; reads" + reads);
  }
  if (n < x.lineage.size()) s += fmt::format("  ... {} more\n", x.lineage.size() - n);
  return s;
}

std::string xml_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char ch : s) {
    auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        if (u >= 0x20 || ch == '\n' || ch == '\t' || ch == '\r')
          o += ch;  // other controls are not XML
    }
  }
  return o;
}

// --- JUnit ---

namespace {

struct TestCase {
  std::string name;
  std::string kind;  // "", "failure" or "error"
  std::string type, message, body;
};

std::string utc_timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// A name usable as a dotted JUnit class name: the file's stem, dots replaced.
std::string class_name(const ReportInput& in) {
  std::string f = in.files.empty() ? in.label : in.files.back();
  auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  auto dot = f.find_last_of('.');
  if (dot != std::string::npos && dot > 0) f = f.substr(0, dot);
  for (char& ch : f)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
  return "parity.verify." + (f.empty() ? std::string("input") : f);
}

}  // namespace

std::string verdict_junit(const verify::Verdict& v, const ReportInput& in) {
  using verify::VerdictKind;
  std::vector<TestCase> cases;
  TestCase val{"validate", "", "", "", ""};
  if (v.kind == VerdictKind::invalid) {
    val.kind = "failure";
    val.type = "INVALID";
    val.message = v.diags.empty() ? v.reason : v.diags.front().str();
    for (const auto& d : v.diags) val.body += "INVALID: " + d.str() + "\n";
    if (v.diags.empty()) val.body = "INVALID: " + in.label + ": " + v.reason + "\n";
  }
  cases.push_back(val);

  bool any_failure = false, any_error = false;
  std::string first = v.cex ? cex_placement(*v.cex) : "";
  // One failure per root cause: the placement of the first divergence lists
  // the other failing placements (most are its consequences downstream).
  bool grouped = false;
  for (const auto& p : v.placements) grouped |= p.failed && p.label == first;
  std::string also;
  size_t others = 0;
  for (const auto& p : v.placements)
    if (grouped && p.failed && p.label != first)
      also += fmt::format("  {}: {} of {} obligations fail\n", p.label, p.failed, p.obligations), ++others;
  for (const auto& p : v.placements) {
    TestCase t{p.label, "", "", "", ""};
    if (grouped && p.failed && p.label != first) continue;  // listed in the first's failure
    if (p.failed) {
      t.kind = "failure";
      t.type = "MISMATCH";
      t.message = fmt::format("{} of {} obligations fail", p.failed, p.obligations);
      if (p.unknown) t.message += fmt::format(", {} unknown", p.unknown);
      t.body = p.label == first ? cex_text(*v.cex) : "the first divergence is in " + first + "\n";
      if (p.label == first && v.cex->culprit) t.message += "; cause: `" + v.cex->culprit->op + "`";
      if (grouped && others)
        t.body += fmt::format(
            "\n{} other placed values also differ; most follow from this one (fix it and verify again):\n{}", others,
            also);
      first =
          p.label == first ? "" : first;  // the full counterexample goes with its placement once
      any_failure = true;
    } else if (p.unknown) {
      t.kind = "error";
      t.type = "UNKNOWN";
      t.message = fmt::format("{} of {} obligations undecided", p.unknown, p.obligations);
      t.body = v.reason.empty() ? "" : "reason: " + v.reason + "\n";
      any_error = true;
    }
    cases.push_back(std::move(t));
  }
  // The suite's outcome must match the verdict even when no placement shows it.
  if (v.kind == VerdictKind::mismatch && !any_failure)
    cases.push_back({"verify", "failure", "MISMATCH", "the plan does not compute the spec",
                     v.cex ? cex_text(*v.cex) : v.reason});
  if (v.kind == VerdictKind::unknown && !any_error && !any_failure)
    cases.push_back(
        {"verify", "error", "UNKNOWN", v.reason.empty() ? "undecided" : v.reason, v.reason});

  size_t failures = 0, errors = 0;
  for (const auto& t : cases) failures += t.kind == "failure", errors += t.kind == "error";
  std::string cls = xml_escape(class_name(in));
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += fmt::format(
      "<testsuites name=\"parity verify\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
      "time=\"{:.3f}\">\n",
      cases.size(), failures, errors, v.seconds);
  s += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" "
      "time=\"{:.3f}\" "
      "timestamp=\"{}\">\n",
      xml_escape(in.label), cases.size(), failures, errors, v.seconds, utc_timestamp());
  s += "    <properties>\n";
  auto prop = [&](const std::string& k, const std::string& val) {
    s +=
        fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k), xml_escape(val));
  };
  prop("verdict", verify::verdict_name(v.kind));
  prop("exit_code", std::to_string(verify::verdict_exit_code(v.kind)));
  if (!v.solver.empty()) prop("solver", v.solver);
  prop("obligations", std::to_string(v.obligations));
  prop("unique", std::to_string(v.unique));
  prop("by_canonical_form", std::to_string(v.by_hash));
  prop("by_expansion", std::to_string(v.by_expansion));
  prop("by_smt", std::to_string(v.by_smt));
  if (!v.reason.empty()) prop("reason", v.reason);
  s += "    </properties>\n";
  for (const auto& t : cases) {
    s += fmt::format("    <testcase name=\"{}\" classname=\"{}\"", xml_escape(t.name), cls);
    if (t.kind.empty()) {
      s += "/>\n";
      continue;
    }
    s += fmt::format(">\n      <{} type=\"{}\" message=\"{}\">{}</{}>\n    </testcase>\n", t.kind,
                     t.type, xml_escape(t.message), xml_escape(t.body), t.kind);
  }
  ir::Case empty;
  s += "    <system-out>" + xml_escape(verdict_text(v, in.label, in.c ? *in.c : empty)) +
       "</system-out>\n";
  s += "  </testsuite>\n</testsuites>\n";
  return s;
}

}  // namespace parity::cli
