// The `parity explain` page: one self-contained HTML file (inline CSS and JS, no
// network) with the verdict, the first divergence and its witness, the
// placements, and linked listings of the plan and the spec.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "ir/print.h"
#include "ir/validate.h"
#include "tools/report_formats.h"

namespace parity::cli {

namespace {

constexpr const char* kCss = R"(
:root{--bg:#fff;--fg:#1d2330;--mut:#5b6475;--line:#e3e6ec;--ok:#1a7f37;--bad:#c62828;--unk:#9a6700;
--badbg:#fdecea;--okbg:#e8f5ec;--unkbg:#fff4d6;--hi:#fff3a6;--link:#0b5cad}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{padding:16px 24px;border-bottom:1px solid var(--line);background:#f7f8fa}
header h1{margin:0 0 4px;font-size:18px}
.input{font-family:ui-monospace,Menlo,Consolas,monospace;color:var(--mut);word-break:break-all}
.verdict{display:inline-block;margin:8px 0 4px;padding:3px 12px;border-radius:4px;font-weight:700;letter-spacing:.04em}
.v-verified{background:var(--okbg);color:var(--ok)}.v-mismatch,.v-invalid{background:var(--badbg);color:var(--bad)}
.v-unknown{background:var(--unkbg);color:var(--unk)}
nav a{margin-right:14px}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
main{padding:8px 24px 48px;max-width:1400px}
section{margin-top:24px}h2{font-size:16px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:14px;margin:16px 0 6px}
table{border-collapse:collapse}th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
table.kv th{color:var(--mut);font-weight:500;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;font-family:ui-monospace,Menlo,Consolas,monospace}
code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
pre.expr{white-space:pre-wrap;word-break:break-all;background:#f7f8fa;border:1px solid var(--line);padding:8px;
max-height:16em;overflow:auto;margin:4px 0}
tr.fail td{background:var(--badbg)}tr.unknown td{background:var(--unkbg)}
.st-ok{color:var(--ok);font-weight:600}.st-fail{color:var(--bad);font-weight:600}.st-unk{color:var(--unk);font-weight:600}
.listing{border:1px solid var(--line);background:#fbfbfc;overflow-x:auto;padding:4px 0}
.line{white-space:pre;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;padding:0 8px;scroll-margin-top:80px}
.line .no{display:inline-block;width:3.5em;color:#9aa1ad;user-select:none}
.line .ann{color:var(--mut)}
.line.failed{background:var(--badbg)}
.line.diverge{background:#f9c9c4;outline:2px solid var(--bad)}
.line.diverge-spec{background:#d9ecff;outline:2px solid var(--link)}
.line:target,.line.current,.tensor:target,.tensor.current{background:var(--hi)}
.marker{color:var(--bad);font-weight:700}
.tensor{border:1px solid var(--line);border-radius:4px;padding:4px 12px;margin:8px 0;scroll-margin-top:80px}
.tensor ul{margin:4px 0;padding-left:20px}.ranks{color:var(--mut)}
#selected{position:sticky;top:0;background:#eef3fb;border-bottom:1px solid var(--line);padding:4px 24px;
font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;min-height:1.6em;z-index:1}
.filters{margin:6px 0}.filters input[type=search]{padding:3px 6px;width:20em}
.two{display:grid;grid-template-columns:1fr 1fr;gap:16px}@media(max-width:900px){.two{grid-template-columns:1fr}}
)";

constexpr const char* kJs = R"(
(function () {
  var filter = document.getElementById('filter');
  var only = document.getElementById('only-failing');
  function apply() {
    var q = filter ? filter.value.toLowerCase() : '';
    var rows = document.querySelectorAll('#placement-table tbody tr');
    for (var i = 0; i < rows.length; i++) {
      var tr = rows[i];
      var bad = tr.classList.contains('fail') || tr.classList.contains('unknown');
      tr.hidden = (q && tr.textContent.toLowerCase().indexOf(q) < 0) || (only && only.checked && !bad);
    }
  }
  if (filter) filter.addEventListener('input', apply);
  if (only) only.addEventListener('change', apply);
  function select() {
    var old = document.querySelectorAll('.current');
    for (var i = 0; i < old.length; i++) old[i].classList.remove('current');
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    var bar = document.getElementById('selected');
    if (!el) { if (bar) bar.textContent = 'click a value, a spec tensor or a plan shard'; return; }
    var box = el.closest('.line') || el.closest('.tensor') || el;
    box.classList.add('current');
    if (bar) bar.textContent = box.getAttribute('data-desc') || id;
  }
  window.addEventListener('hashchange', select);
  select();
})();
)";

std::string esc(std::string_view s) { return xml_escape(s); }

// An id made of [A-Za-z0-9_-] only, so it needs no escaping in a URL fragment.
std::string safe_id(const std::string& s) {
  std::string o;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-')
      o += static_cast<char>(ch);
    else
      o += fmt::format("_{:02x}", ch);
  }
  return o;
}
std::string plan_id(const std::string& program, const std::string& value) {
  return "v-" + safe_id(program) + "--" + safe_id(value);
}
std::string spec_id(const std::string& value) { return "s-" + safe_id(value); }
std::string tensor_id(const std::string& value) { return "t-" + safe_id(value); }

bool name_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.';
}

// Escapes one listing line, turning each `%name` into a link made by `href`.
template <class Href>
std::string link_values(const std::string& line, Href href) {
  std::string o;
  for (size_t k = 0; k < line.size();) {
    if (line[k] == '%' && k + 1 < line.size() && name_char(line[k + 1])) {
      size_t e = k + 1;
      while (e < line.size() && name_char(line[e])) ++e;
      while (e > k + 1 && line[e - 1] == '.') --e;
      std::string name = line.substr(k + 1, e - k - 1);
      std::string h = href(name);
      o += h.empty() ? esc("%" + name) : "<a href=\"#" + h + "\">" + esc("%" + name) + "</a>";
      k = e;
    } else {
      o += esc(std::string(1, line[k]));
      ++k;
    }
  }
  return o;
}

// The values a listing line defines: `input %x`, `%a, %b = op(...)`, `body(%i, %c) {`.
std::vector<std::string> defined_names(const std::string& line) {
  std::vector<std::string> out;
  size_t b = line.find_first_not_of(' ');
  if (b == std::string::npos) return out;
  std::string_view t(line.c_str() + b, line.size() - b);
  std::string_view names;
  if (t.substr(0, 7) == "input %") {
    names = t.substr(6);
    names = names.substr(0, names.find(" :"));
  } else if (t.substr(0, 1) == "%") {
    auto eq = t.find(" = ");
    if (eq == std::string_view::npos) return out;
    names = t.substr(0, eq);
  } else if (t.substr(0, 5) == "body(") {
    names = t.substr(5, t.find(')') == std::string_view::npos ? 0 : t.find(')') - 5);
  } else {
    return out;
  }
  size_t k = 0;
  while (k < names.size()) {
    auto p = names.find('%', k);
    if (p == std::string_view::npos) break;
    size_t e = p + 1;
    while (e < names.size() && name_char(names[e])) ++e;
    out.emplace_back(names.substr(p + 1, e - p - 1));
    k = e;
  }
  return out;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string fmt_num(double x) { return fmt::format("{:.9g}", x); }

struct Page {
  const verify::Verdict& v;
  const ReportInput& in;
  std::map<std::string, const verify::PlacementStats*> stats;       // by label
  std::map<std::string, std::vector<const ir::Placement*>> shards;  // spec value -> placements
  std::set<std::string> failed_values;  // program.value with failing obligations
  ir::TypeMap spec_types;
  std::map<std::string, ir::TypeMap> plan_types;
  mutable std::map<std::string, std::vector<int64_t>> ranks_by_program;
  std::string out;

  Page(const verify::Verdict& vv, const ReportInput& ii) : v(vv), in(ii) {
    for (const auto& p : v.placements) stats[p.label] = &p;
    if (!in.c) return;
    for (const auto& pl : in.c->plan.placements) {
      shards[pl.spec_value].push_back(&pl);
      auto it = stats.find(placement_label(pl));
      if (it != stats.end() && it->second->failed)
        failed_values.insert(pl.program + "." + pl.value);
    }
    ir::DiagList ignored;  // the verdict already carries the diagnostics
    try {
      if (in.c->spec) ir::validate_spec(*in.c->spec, in.label, ignored, &spec_types);
      if (!in.c->plan.programs.empty())
        ir::validate_plan(in.c->plan, in.c->spec ? &*in.c->spec : nullptr, in.label, ignored,
                          &plan_types);
    } catch (const std::exception&) {  // listings then go without types
    }
  }

  static const char* status_class(const verify::PlacementStats* s) {
    if (!s) return "";
    return s->failed ? "fail" : s->unknown ? "unknown" : "ok";
  }

  // The region text of a placement, symbolic, e.g. `[0:+H, $tp*F/tp:+F/tp]`.
  static std::string region_str(const ir::Placement& pl) {
    if (pl.region.empty()) return "whole tensor";
    std::string s = "[";
    for (size_t k = 0; k < pl.region.size(); ++k)
      s += (k ? ", " : "") + pl.region[k].offset.str() + ":+" + pl.region[k].size.str();
    return s + "]";
  }

  // Per-rank concrete regions, for the ranks that run the placement's program.
  std::string rank_regions(const ir::Placement& pl) const {
    const ir::Plan& plan = in.c->plan;
    std::string s;
    const std::vector<int64_t>& ranks = ranks_of(pl.program);
    int64_t shown = 0, more = ranks.size() > 8 ? static_cast<int64_t>(ranks.size()) - 8 : 0;
    for (int64_t r : ranks) {
      if (shown == 8) break;
      ir::Bindings b = plan.rank_bindings(r);
      if (in.c->spec)
        for (const auto& [k, x] : in.c->spec->dims) b.emplace(k, x);
      std::string reg;
      if (pl.region.empty()) {
        reg = "all";
      } else {
        reg = "[";
        for (size_t k = 0; k < pl.region.size(); ++k) {
          int64_t off, size;
          bool ok = pl.region[k].offset.try_eval(b, off) && pl.region[k].size.try_eval(b, size);
          // A region that depends on a loop index (`$mb`) stays symbolic.
          reg += (k ? "," : "") + (ok ? fmt::format("{}:{}", off, off + size)
                                      : pl.region[k].offset.str() + ":+" + pl.region[k].size.str());
        }
        reg += "]";
      }
      s += (shown ? "; " : "") + std::string("rank ") + plan.mesh.rank_str(r) + " " + reg;
      ++shown;
    }
    if (more) s += fmt::format("; and {} more ranks", more);
    return s;
  }

  // The ranks running each program, computed once (a plan may have thousands).
  const std::vector<int64_t>& ranks_of(const std::string& program) const {
    if (ranks_by_program.empty() && in.c)
      for (int64_t r = 0; r < in.c->plan.mesh.num_ranks(); ++r)
        if (const ir::Program* prog = in.c->plan.program_of(r)) ranks_by_program[prog->name].push_back(r);
    static const std::vector<int64_t> none;
    auto it = ranks_by_program.find(program);
    return it == ranks_by_program.end() ? none : it->second;
  }

  std::string shard_desc(const ir::Placement& pl) const {
    std::string d =
        fmt::format("plan value {}.%{} (program {}): {} of spec %{}", pl.program, pl.value,
                    pl.program, ir::placement_kind_name(pl.kind), pl.spec_value);
    if (pl.kind == ir::PlacementKind::partial) {
      d += " summed over";
      for (const auto& a : pl.axes) d += " " + a;
    }
    return pl.region.empty() ? d : d + " " + region_str(pl);
  }

  void header() {
    const char* name = verify::verdict_name(v.kind);
    std::string cls = name;
    for (char& ch : cls) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out +=
        fmt::format("<title>parity explain: {} ({})</title>\n<style>{}</style>\n</head>\n<body>\n",
                    esc(in.label), name, kCss);
    out += "<header>\n<h1>parity explain</h1>\n";
    out += fmt::format("<div class=\"input\" id=\"input\">{}</div>\n", esc(in.label));
    out += fmt::format("<div id=\"verdict\" class=\"verdict v-{}\">{}</div>\n", cls, name);
    if (v.kind != verify::VerdictKind::invalid) {
      int64_t ranks = in.c ? in.c->plan.mesh.num_ranks() : 0;
      std::string sum =
          v.stages ? fmt::format(
                         "{} ranks, {} stages ({} distinct), {} obligations in distinct stages: {} "
                         "by canonical form, {} by expansion",
                         ranks, v.stages, v.unique_stages, v.obligations, v.by_hash, v.by_expansion)
                   : fmt::format(
                         "{} ranks, {} obligations ({} unique): {} by canonical form, {} by "
                         "expansion, {} by {}",
                         ranks, v.obligations, v.unique, v.by_hash, v.by_expansion, v.by_smt,
                         v.solver.empty() ? "smt" : v.solver);
      if (v.cached_stages)
        sum += fmt::format(", {} distinct stages from the cache", v.cached_stages);
      if (v.failed) sum += fmt::format(", {} failed", v.failed);
      if (v.unknown) sum += fmt::format(", {} unknown", v.unknown);
      out += fmt::format("<p id=\"summary\">{}; checked in {:.3f} s</p>\n", esc(sum), v.seconds);
    }
    if (!v.reductions.empty())
      out += fmt::format("<p id=\"reduction\">reduced to {} ranks: {}</p>\n", v.verified_ranks,
                         esc(fmt::format("{}", fmt::join(v.reductions, ", "))));
    for (const auto& k : v.kept)
      out += fmt::format("<p class=\"kept\">not reduced: {}</p>\n", esc(k));
    if (!v.stage_note.empty())
      out += fmt::format("<p id=\"stage-note\">stages: {}; checked as a whole</p>\n",
                         esc(v.stage_note));
    if (!v.reason.empty()) out += fmt::format("<p id=\"reason\">reason: {}</p>\n", esc(v.reason));
    out += "<nav>";
    if (v.kind == verify::VerdictKind::invalid) out += "<a href=\"#diagnostics\">Diagnostics</a>";
    if (v.cex) out += "<a href=\"#failing\">First divergence</a>";
    if (in.c) {
      if (!v.stage_list.empty()) out += "<a href=\"#stages\">Stages</a>";
      out += "<a href=\"#placements\">Placements</a><a href=\"#tensors\">Spec tensors</a>";
      out += "<a href=\"#plan\">Plan</a><a href=\"#spec\">Spec</a>";
    }
    out += "</nav>\n</header>\n<div id=\"selected\"></div>\n<main>\n";
  }

  void diagnostics() {
    if (v.kind != verify::VerdictKind::invalid) return;
    out += "<section id=\"diagnostics\">\n<h2>Diagnostics</h2>\n<ul>\n";
    for (const auto& d : v.diags) out += "<li class=\"mono\">" + esc(d.str()) + "</li>\n";
    if (v.diags.empty()) out += "<li class=\"mono\">INVALID: " + esc(v.reason) + "</li>\n";
    out += "</ul>\n</section>\n";
  }

  void failing() {
    if (!v.cex) return;
    const auto& x = *v.cex;
    std::string pid = plan_id(x.program, x.value);
    out += "<section id=\"failing\">\n<h2>First divergence</h2>\n<table class=\"kv\">\n";
    out += fmt::format(
        "<tr><th>plan element</th><td id=\"failing-element\" class=\"mono\"><a "
        "href=\"#{}\">{}.{}</a>{}</td></tr>\n",
        pid, esc(x.program), esc(x.value), index_str(x.plan_index));
    out += fmt::format("<tr><th>rank</th><td id=\"failing-rank\">{}</td></tr>\n", esc(x.rank));
    out += fmt::format("<tr><th>iteration</th><td id=\"failing-iteration\">{}</td></tr>\n",
                       x.iter.empty() ? "not in a loop" : esc(x.iter));
    out += fmt::format(
        "<tr><th>defined by</th><td id=\"diverging-op\" class=\"mono\"><a "
        "href=\"#{}\">{}</a></td></tr>\n",
        pid, esc(x.op));
    if (x.culprit && x.culprit->step < x.lineage.size()) {
      const verify::LineageStep& st = x.lineage[x.culprit->step];
      out += fmt::format(
          "<tr><th>cause</th><td id=\"culprit\"><span class=\"mono\"><a href=\"#{}\">{}</a></span> on rank {}{}: "
          "{}{}</td></tr>\n",
          plan_id(st.program, st.value), esc(x.culprit->op), esc(st.rank_str),
          st.iter.empty() ? "" : " (" + esc(st.iter) + ")", esc(x.culprit->why),
          x.culprit->place.empty() ? "" : esc("; to tell it from the operations before it, place " +
                                              fmt::format("{}", fmt::join(x.culprit->place, ", "))));
    }
    out += fmt::format(
        "<tr><th>spec element</th><td id=\"spec-element\" class=\"mono\"><a "
        "href=\"#{}\">{}</a>{}</td></tr>\n",
        spec_id(x.spec_value), esc(x.spec_value), index_str(x.spec_index));
    out +=
        fmt::format("<tr><th>placement</th><td class=\"mono\"><a href=\"#{}\">{}</a></td></tr>\n",
                    tensor_id(x.spec_value), esc(cex_placement(x)));
    out += "</table>\n<h3>Witness</h3>\n";
    out +=
        fmt::format("<p>found by {}; re-checked by evaluating both programs at this point.</p>\n",
                    esc(x.found_by));
    out += "<table id=\"witness\" class=\"kv\">\n";
    out += fmt::format("<tr><th>spec {}{}</th><td class=\"num\" id=\"witness-spec\">{}</td></tr>\n",
                       esc(x.spec_value), index_str(x.spec_index), fmt_num(x.spec_num));
    out +=
        fmt::format("<tr><th>plan {}.{}{}</th><td class=\"num\" id=\"witness-plan\">{}</td></tr>\n",
                    esc(x.program), esc(x.value), index_str(x.plan_index), fmt_num(x.plan_num));
    out += fmt::format("<tr><th>plan &minus; spec</th><td class=\"num\">{}</td></tr>\n</table>\n",
                       fmt_num(x.plan_num - x.spec_num));
    if (!x.inputs.empty()) {
      out +=
          "<table id=\"witness-inputs\">\n<thead><tr><th>input "
          "element</th><th>value</th></tr></thead>\n<tbody>\n";
      for (const auto& [n, val] : x.inputs)
        out += fmt::format("<tr><td class=\"mono\">{}</td><td class=\"num\">{:.9g}</td></tr>\n",
                           esc(n), val);
      out += "</tbody>\n</table>\n";
    }
    auto cut = [](const std::string& e) {
      return e.size() > 50000
                 ? e.substr(0, 50000) + fmt::format(" ... ({} characters in all)", e.size())
                 : e;
    };
    out += "<h3>Expressions</h3>\n<div class=\"two\">\n";
    out += fmt::format("<div><b>spec</b><pre class=\"expr\" id=\"spec-expr\">{}</pre></div>\n",
                       esc(cut(x.spec_expr)));
    out +=
        fmt::format("<div><b>plan</b><pre class=\"expr\" id=\"plan-expr\">{}</pre></div>\n</div>\n",
                    esc(cut(x.plan_expr)));
    out += fmt::format(
        "<b>difference</b> (the smallest differing subterms)<pre class=\"expr\" "
        "id=\"difference\">{}</pre>\n",
        esc(cut(x.difference)));
    lineage(x);
    out += "</section>\n";
  }

  // What the diverging value is computed from, back to placed values, with
  // links into the plan listing.
  void lineage(const verify::Counterexample& x) {
    if (x.lineage.empty()) return;
    out +=
        "<h3>Lineage</h3>\n<p>The values the diverging one is computed from, across ranks and "
        "iterations, walked back to placed values (which are proved on their own).</p>\n"
        "<table id=\"lineage\">\n<thead><tr><th>#</th><th>plan value</th><th>rank</th><th>iteration</th>"
        "<th>op</th><th>placed on</th><th>reads</th></tr></thead>\n<tbody>\n";
    for (size_t i = 0; i < x.lineage.size(); ++i) {
      const verify::LineageStep& st = x.lineage[i];
      std::string reads;
      for (size_t f : st.from) reads += fmt::format("<a href=\"#lin-{}\">#{}</a> ", f, f);
      out += fmt::format(
          "<tr id=\"lin-{}\"{}><td class=\"num\">{}</td><td class=\"mono\"><a href=\"#{}\">{}.%{}</a></td>"
          "<td>{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td>{}</td></tr>\n",
          i, i == 0 ? " class=\"fail\"" : "", i, plan_id(st.program, st.value), esc(st.program),
          esc(st.value), esc(st.rank_str), esc(st.iter), esc(st.op), esc(st.placed), reads);
    }
    out += "</tbody>\n</table>\n";
  }

  // The distinct stages a verified plan was proved by, slowest first.
  void stages() {
    if (v.stage_list.empty()) return;
    std::vector<const verify::StageInfo*> rows;
    for (const auto& s : v.stage_list) rows.push_back(&s);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto* a, const auto* b) { return a->seconds > b->seconds; });
    out += "<section id=\"stages\">\n<h2>Stages</h2>\n";
    out += fmt::format(
        "<p>The {} stages of the plan (each the plan cut at the placements of one spec value, on "
        "one rank and iteration) have {} distinct canonical keys; each distinct stage was proved "
        "once{}. Slowest first; the key hash names its file in a <code>--cache</code> "
        "directory.</p>\n",
        v.stages, v.unique_stages,
        v.cached_stages ? fmt::format(" or found proved in the cache ({})", v.cached_stages) : "");
    out +=
        "<table id=\"stage-table\">\n<thead><tr><th>spec value</th><th>key "
        "hash</th><th>instances</th>"
        "<th>obligations</th><th>time (ms)</th><th>status</th></tr></thead>\n<tbody>\n";
    for (const auto* s : rows)
      out += fmt::format(
          "<tr class=\"ok\"><td class=\"mono\"><a href=\"#{}\">%{}</a></td><td "
          "class=\"mono\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td>{}</td></tr>\n",
          tensor_id(s->spec_value), esc(s->spec_value), s->hash, s->instances,
          s->cached ? std::string("-") : std::to_string(s->obligations),
          s->cached ? std::string("-") : fmt::format("{:.1f}", s->seconds * 1e3),
          s->cached ? "<span class=\"st-ok\">cached</span>"
                    : "<span class=\"st-ok\">proved</span>");
    out += "</tbody>\n</table>\n</section>\n";
  }

  void placements() {
    if (!in.c) return;
    out += "<section id=\"placements\">\n<h2>Placements</h2>\n";
    out += fmt::format(
        "<p>{} placements; obligations per placement (every placed element on every rank and loop "
        "iteration{}); {:.3f} s in all.</p>\n",
        in.c->plan.placements.size(),
        v.stage_list.empty() ? "" : ", proved through the distinct stages", v.seconds);
    out +=
        "<div class=\"filters\"><input id=\"filter\" type=\"search\" placeholder=\"filter "
        "placements\"> ";
    out +=
        "<label><input type=\"checkbox\" id=\"only-failing\"> only failing or "
        "undecided</label></div>\n";
    out +=
        "<table id=\"placement-table\">\n<thead><tr><th>plan value</th><th>kind</th><th>spec "
        "tensor</th>"
        "<th>region</th><th>obligations</th><th>proved</th><th>failed</th><th>unknown</"
        "th><th>status</th></tr>"
        "</thead>\n<tbody>\n";
    for (const auto& pl : in.c->plan.placements) {
      auto it = stats.find(placement_label(pl));
      const verify::PlacementStats* s = it == stats.end() ? nullptr : it->second;
      std::string kind = ir::placement_kind_name(pl.kind);
      if (pl.kind == ir::PlacementKind::partial) {
        kind += " over";
        for (const auto& a : pl.axes) kind += " " + a;
      }
      std::string st = !s           ? "<span>-</span>"
                       : s->failed  ? "<span class=\"st-fail\">fail</span>"
                       : s->unknown ? "<span class=\"st-unk\">unknown</span>"
                                    : "<span class=\"st-ok\">proved</span>";
      auto num = [&](size_t n) { return s ? std::to_string(n) : std::string("-"); };
      out += fmt::format(
          "<tr class=\"{}\"><td class=\"mono\"><a href=\"#{}\">{}.%{}</a></td><td>{}</td><td "
          "class=\"mono\"><a "
          "href=\"#{}\">%{}</a></td><td class=\"mono\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
          status_class(s), plan_id(pl.program, pl.value), esc(pl.program), esc(pl.value), esc(kind),
          tensor_id(pl.spec_value), esc(pl.spec_value), esc(region_str(pl)),
          num(s ? s->obligations : 0), num(s ? s->proved : 0), num(s ? s->failed : 0),
          num(s ? s->unknown : 0), st);
    }
    out += "</tbody>\n</table>\n</section>\n";
  }

  // Spec values in listing order: inputs, then op results.
  std::vector<std::string> spec_order() const {
    std::vector<std::string> order;
    std::set<std::string> seen;
    auto add = [&](const std::string& n) {
      if (shards.count(n) && seen.insert(n).second) order.push_back(n);
    };
    if (in.c->spec) {
      for (const auto& i : in.c->spec->graph.inputs) add(i);
      for (const auto& l : split_lines(ir::print_spec(*in.c->spec, nullptr)))
        for (const auto& n : defined_names(l)) add(n);
    }
    for (const auto& [n, _] : shards) add(n);  // placed on names the spec lacks
    return order;
  }

  void tensors() {
    if (!in.c) return;
    out += "<section id=\"tensors\">\n<h2>Spec tensors and their plan shards</h2>\n";
    out +=
        "<p>Each spec tensor with the plan values placed on it; the ranks list the concrete region "
        "each holds.</p>\n";
    for (const auto& name : spec_order()) {
      const auto& list = shards.at(name);
      bool bad = false, unk = false;
      for (const auto* pl : list) {
        auto it = stats.find(placement_label(*pl));
        if (it != stats.end()) bad |= it->second->failed > 0, unk |= it->second->unknown > 0;
      }
      auto ty = spec_types.find(name);
      out += fmt::format(
          "<div class=\"tensor\" id=\"{}\" data-desc=\"spec tensor %{}: {} plan shard(s)\">\n",
          tensor_id(name), esc(name), list.size());
      out +=
          fmt::format("<h3><a href=\"#{}\">%{}</a> <span class=\"mono\">{}</span> {}</h3>\n<ul>\n",
                      spec_id(name), esc(name), ty == spec_types.end() ? "" : esc(ty->second.str()),
                      bad   ? "<span class=\"st-fail\">fails</span>"
                      : unk ? "<span class=\"st-unk\">undecided</span>"
                            : "");
      for (const auto* pl : list) {
        auto it = stats.find(placement_label(*pl));
        const verify::PlacementStats* s = it == stats.end() ? nullptr : it->second;
        std::string kind = ir::placement_kind_name(pl->kind);
        if (pl->kind == ir::PlacementKind::partial) {
          kind += ", summed over";
          for (const auto& a : pl->axes) kind += " " + a;
        }
        out += fmt::format("<li><a class=\"shard mono\" href=\"#{}\">{}.%{}</a> {} {}",
                           plan_id(pl->program, pl->value), esc(pl->program), esc(pl->value),
                           esc(kind), esc(region_str(*pl)));
        if (s)
          out += fmt::format(" &mdash; <span class=\"{}\">{} of {} obligations fail{}</span>",
                             s->failed    ? "st-fail"
                             : s->unknown ? "st-unk"
                                          : "st-ok",
                             s->failed, s->obligations,
                             s->unknown ? fmt::format(", {} undecided", s->unknown) : "");
        out += fmt::format("<br><span class=\"ranks\">{}</span></li>\n", esc(rank_regions(*pl)));
      }
      out += "</ul>\n</div>\n";
    }
    out += "</section>\n";
  }

  void plan_listing() {
    if (!in.c) return;
    out += "<section id=\"plan\">\n<h2>Plan</h2>\n<div class=\"listing\" id=\"plan-listing\">\n";
    std::string program;
    std::set<std::string> ids;
    int no = 0;
    std::map<std::pair<std::string, std::string>, std::vector<const ir::Placement*>> placed;
    for (const auto& pl : in.c->plan.placements) placed[{pl.program, pl.value}].push_back(&pl);
    for (const auto& line :
         split_lines(ir::print_plan(in.c->plan, plan_types.empty() ? nullptr : &plan_types))) {
      ++no;
      std::string cls = "line", id, desc, body, ann;
      if (line.rfind("  program ", 0) == 0) {
        program = line.substr(10, line.find(' ', 10) - 10);
        body = esc(line);
      } else if (line.rfind("  place ", 0) == 0) {
        // `  place P.%v = KIND of spec %s ...`: the plan side links to its definition, the spec
        // side to its shards.
        auto dot = line.find(".%", 8);
        auto spec = std::min(line.find(" spec %"), line.size());
        std::string prog = dot == std::string::npos ? "" : line.substr(8, dot - 8);
        body = link_values(line.substr(0, spec),
                           [&](const std::string& n) { return plan_id(prog, n); }) +
               link_values(line.substr(spec), [](const std::string& n) { return tensor_id(n); });
      } else {
        auto names = defined_names(line);
        const std::string& prog = program;
        body = link_values(
            line, [&](const std::string& n) { return program.empty() ? "" : plan_id(prog, n); });
        if (!program.empty() && !names.empty()) {
          for (const auto& n : names) {
            std::string nid = plan_id(program, n);
            if (!ids.insert(nid).second) continue;
            if (id.empty())
              id = nid;
            else
              body = "<span id=\"" + nid + "\"></span>" + body;
            if (failed_values.count(program + "." + n)) cls += " failed";
            auto pit = placed.find({program, n});
            if (pit != placed.end()) {
              for (const auto* pl : pit->second)
                ann += fmt::format(" <a href=\"#{}\">&rarr; spec %{}</a>",
                                   tensor_id(pl->spec_value), esc(pl->spec_value));
              desc = shard_desc(*pit->second.front());
            }
          }
          if (desc.empty())
            desc = fmt::format("plan value {}.%{} (program {})", program, names.front(), program);
          if (const ir::Program* p = in.c->plan.program(program))
            if (const ir::Op* op = find_def(p->graph, names.front()); op && op->line)
              ann = fmt::format(" line {}", op->line) + ann;
          if (v.cex && v.cex->program == program &&
              std::find(names.begin(), names.end(), v.cex->value) != names.end()) {
            cls += " diverge";
            ann += " <span class=\"marker\">&larr; first divergence</span>";
          }
        }
      }
      out += fmt::format("<div class=\"{}\"{}{}><span class=\"no\">{}</span>{}{}</div>\n", cls,
                         id.empty() ? "" : " id=\"" + id + "\"",
                         desc.empty() ? "" : " data-desc=\"" + esc(desc) + "\"", no, body,
                         ann.empty() ? "" : "<span class=\"ann\">  #" + ann + "</span>");
    }
    out += "</div>\n</section>\n";
  }

  void spec_listing() {
    if (!in.c || !in.c->spec) return;
    out += "<section id=\"spec\">\n<h2>Spec</h2>\n<div class=\"listing\" id=\"spec-listing\">\n";
    std::set<std::string> ids;
    int no = 0;
    for (const auto& line :
         split_lines(ir::print_spec(*in.c->spec, spec_types.empty() ? nullptr : &spec_types))) {
      ++no;
      std::string cls = "line", id, desc, ann;
      std::string body = link_values(line, [](const std::string& n) { return spec_id(n); });
      auto names = defined_names(line);
      for (const auto& n : names) {
        std::string nid = spec_id(n);
        if (!ids.insert(nid).second) continue;
        if (id.empty())
          id = nid;
        else
          body = "<span id=\"" + nid + "\"></span>" + body;
        auto sh = shards.find(n);
        if (sh != shards.end())
          ann += fmt::format(" <a href=\"#{}\">&rarr; {} plan shard{}</a>", tensor_id(n),
                             sh->second.size(), sh->second.size() == 1 ? "" : "s");
      }
      if (!names.empty()) {
        desc = "spec value %" + names.front();
        if (const ir::Op* op = find_def(in.c->spec->graph, names.front()); op && op->line)
          ann = fmt::format(" line {}", op->line) + ann;
        if (v.cex && std::find(names.begin(), names.end(), v.cex->spec_value) != names.end()) {
          cls += " diverge-spec";
          ann += " <span class=\"marker\">&larr; spec side of the first divergence</span>";
        }
      }
      out += fmt::format("<div class=\"{}\"{}{}><span class=\"no\">{}</span>{}{}</div>\n", cls,
                         id.empty() ? "" : " id=\"" + id + "\"",
                         desc.empty() ? "" : " data-desc=\"" + esc(desc) + "\"", no, body,
                         ann.empty() ? "" : "<span class=\"ann\">  #" + ann + "</span>");
    }
    out += "</div>\n</section>\n";
  }
};

}  // namespace

std::string explain_html(const verify::Verdict& v, const ReportInput& in) {
  Page p(v, in);
  p.header();
  p.diagnostics();
  p.failing();
  p.stages();
  p.placements();
  p.tensors();
  p.plan_listing();
  p.spec_listing();
  p.out += fmt::format("</main>\n<script>{}</script>\n</body>\n</html>\n", kJs);
  return p.out;
}

}  // namespace parity::cli
