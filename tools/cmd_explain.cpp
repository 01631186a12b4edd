// `parity explain`: verifies a case and presents the verdict for people: a
// self-contained HTML page (-o), or a line-oriented prompt for remote terminals (--tui).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/print.h"
#include "ir/validate.h"
#include "tools/cli.h"
#include "tools/line_editor.h"
#include "tools/progress_line.h"
#include "tools/report.h"
#include "tools/report_formats.h"
#include "verify/check.h"

namespace parity::cli {

namespace {

constexpr const char* kHelp =
    "commands:\n"
    "  summary            the verdict line\n"
    "  cex                the first divergence: element, op, both expressions, difference, "
    "witness\n"
    "  lineage            what the diverging value is computed from, walked back across ranks\n"
    "                     and iterations to the placed values\n"
    "  stages [TEXT]      the distinct stages a verified plan was proved by, slowest first:\n"
    "                     spec value, key hash, instances, obligations, time; TEXT filters\n"
    "  placements [TEXT]  every placement with its obligation counts; `failing`: only failing or\n"
    "                     undecided ones; TEXT: only those whose label contains it\n"
    "  show VALUE         where VALUE is defined and placed: a plan value (`tp.o`, `o`) or a spec "
    "value\n"
    "  diags              validation diagnostics (INVALID input)\n"
    "  plan | spec        the readable listing\n"
    "  help               this list\n"
    "  quit               leave (end of input also leaves)\n";

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// True when a listing line defines `value` (`input %v`, `%v = ...`, `%a, %v = ...`).
bool defines(const std::string& line, const std::string& value) {
  std::string t = trim(line);
  if (t.rfind("input %" + value + " ", 0) == 0 || t == "input %" + value) return true;
  auto eq = t.find(" = ");
  if (t.empty() || t[0] != '%' || eq == std::string::npos) return false;
  std::string lhs = t.substr(0, eq) + ",";
  return lhs.rfind("%" + value + ",", 0) == 0 || lhs.find(" %" + value + ",") != std::string::npos;
}

class Repl {
 public:
  Repl(const verify::Verdict& v, const ReportInput& in) : v_(v), in_(in) {
    if (!in.c) return;
    ir::DiagList ignored;
    try {
      if (in.c->spec) ir::validate_spec(*in.c->spec, in.label, ignored, &spec_types_);
      if (!in.c->plan.programs.empty())
        ir::validate_plan(in.c->plan, in.c->spec ? &*in.c->spec : nullptr, in.label, ignored,
                          &plan_types_);
    } catch (const std::exception&) {
    }
    if (in.c->spec) spec_text_ = ir::print_spec(*in.c->spec, &spec_types_);
    if (!in.c->plan.programs.empty()) plan_text_ = ir::print_plan(in.c->plan, &plan_types_);
  }

  void run(std::istream& is, std::ostream& os) {
    bool tty = isatty(STDIN_FILENO);
    os << summary() << "type `help` for commands\n";
    LineEditor editor(tty, names());
    for (std::string line;;) {
      if (!editor.read(is, os, line)) break;
      std::istringstream words(line);
      std::string cmd, arg;
      words >> cmd;
      std::getline(words, arg);
      arg = trim(arg);
      if (cmd.empty()) continue;
      if (cmd == "quit" || cmd == "exit" || cmd == "q") break;
      editor.show(answer(cmd, arg), os);
    }
  }

 private:
  // What the prompt completes: the commands, then every value and program name.
  std::vector<std::string> names() const {
    std::vector<std::string> out{"summary", "cex",  "lineage", "stages", "placements", "show",
                                 "diags",   "plan", "spec",    "help",   "quit",       "failing"};
    if (!in_.c) return out;
    auto graph = [&](const ir::Graph& g, const std::string& prefix) {
      for (const auto& v : g.inputs) out.push_back(prefix + v);
      for (const auto& op : g.ops)
        for (const auto& r : op.results) out.push_back(prefix + r);
    };
    if (in_.c->spec) graph(in_.c->spec->graph, "");
    for (const auto& p : in_.c->plan.programs) {
      graph(p.graph, "");
      graph(p.graph, p.name + ".");
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  std::string summary() const {
    ir::Case empty;
    std::string t = verdict_text(v_, in_.label, in_.c ? *in_.c : empty);
    return t.substr(0, t.find('\n') + 1);
  }

  std::string answer(const std::string& cmd, const std::string& arg) const {
    if (cmd == "help" || cmd == "?") return kHelp;
    if (cmd == "summary") {
      ir::Case empty;
      std::string t = verdict_text(v_, in_.label, in_.c ? *in_.c : empty);
      return v_.kind == verify::VerdictKind::invalid ? t : summary();
    }
    if (cmd == "cex" || cmd == "witness") {
      if (!v_.cex)
        return fmt::format("no counterexample: the verdict is {}\n", verify::verdict_name(v_.kind));
      std::string s;
      for (const auto& l : split(cex_text(*v_.cex))) s += "  " + l + "\n";
      return s;
    }
    if (cmd == "lineage") {
      if (!v_.cex) return fmt::format("no counterexample: the verdict is {}\n", verify::verdict_name(v_.kind));
      std::string t = lineage_text(*v_.cex, v_.cex->lineage.size());
      return t.empty() ? "no lineage for this counterexample\n" : t;
    }
    if (cmd == "placements") return placements(arg);
    if (cmd == "stages") return stages(arg);
    if (cmd == "show") return arg.empty() ? "usage: show VALUE\n" : show(arg);
    if (cmd == "diags") {
      if (v_.diags.empty()) return "no diagnostics\n";
      return invalid_text(v_.diags);
    }
    if (cmd == "plan") return plan_text_.empty() ? "no plan\n" : plan_text_;
    if (cmd == "spec") return spec_text_.empty() ? "no spec\n" : spec_text_;
    return "unknown command '" + cmd + "'; type `help`\n";
  }

  static std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream is(s);
    for (std::string l; std::getline(is, l);) out.push_back(l);
    return out;
  }

  const verify::PlacementStats* stats_of(const ir::Placement& pl) const {
    for (const auto& p : v_.placements)
      if (p.label == placement_label(pl)) return &p;
    return nullptr;
  }

  static std::string region_str(const ir::Placement& pl) {
    std::string s = ir::placement_kind_name(pl.kind);
    if (pl.kind == ir::PlacementKind::partial) {
      s += " summed over";
      for (const auto& a : pl.axes) s += " " + a;
    }
    if (pl.region.empty()) return s;
    s += " [";
    for (size_t k = 0; k < pl.region.size(); ++k)
      s += (k ? ", " : "") + pl.region[k].offset.str() + ":+" + pl.region[k].size.str();
    return s + "]";
  }

  std::string counts(const ir::Placement& pl) const {
    const verify::PlacementStats* s = stats_of(pl);
    if (!s) return "not checked";
    return fmt::format("{} obligations: {} proved, {} failed, {} unknown", s->obligations,
                       s->proved, s->failed, s->unknown);
  }

  std::string stages(const std::string& filter) const {
    if (v_.stage_list.empty())
      return v_.stage_note.empty() ? "not proved by stages\n"
                                   : "not proved by stages: " + v_.stage_note + "\n";
    std::vector<const verify::StageInfo*> rows;
    for (const auto& st : v_.stage_list)
      if (st.spec_value.find(filter) != std::string::npos) rows.push_back(&st);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto* a, const auto* b) { return a->seconds > b->seconds; });
    std::string s =
        fmt::format("  {} stages, {} distinct{}\n", v_.stages, v_.unique_stages,
                    v_.cached_stages ? fmt::format(", {} from the cache", v_.cached_stages) : "");
    s += fmt::format("  {:<28} {:<16} {:>9} {:>11} {:>9}\n", "spec value", "key hash", "instances",
                     "obligations", "ms");
    for (const auto* st : rows)
      s += fmt::format(
          "  {:<28} {:<16} {:>9} {:>11} {:>9}\n", "%" + st->spec_value, st->hash, st->instances,
          st->cached ? std::string("-") : std::to_string(st->obligations),
          st->cached ? std::string("cached") : fmt::format("{:.1f}", st->seconds * 1e3));
    return s;
  }

  // Every placement, or those failing or undecided (`failing`), or those whose label holds TEXT.
  std::string placements(const std::string& filter) const {
    if (!in_.c) return "no plan\n";
    std::string s;
    for (const auto& pl : in_.c->plan.placements) {
      const verify::PlacementStats* st = stats_of(pl);
      bool bad = st && (st->failed || st->unknown);
      std::string label = placement_label(pl);
      if (filter == "failing" ? !bad : label.find(filter) == std::string::npos) continue;
      const char* status = !st ? "-" : st->failed ? "FAIL" : st->unknown ? "UNKNOWN" : "ok";
      s += fmt::format("  {:<7} {:<28} {:<40} {}\n", status, label, region_str(pl), counts(pl));
    }
    return s.empty() ? "no placements\n" : s;
  }

  // The listing lines of `text` that define `value`, inside `program` when it is not empty.
  static std::vector<std::string> def_lines(const std::string& text, const std::string& value,
                                            const std::string& program, bool is_plan) {
    std::vector<std::string> out;
    std::string cur;
    for (const auto& l : split(text)) {
      if (is_plan && l.rfind("  program ", 0) == 0) cur = l.substr(10, l.find(' ', 10) - 10);
      if ((program.empty() || cur == program) && defines(l, value))
        out.push_back(is_plan ? cur + ": " + trim(l) : trim(l));
    }
    return out;
  }

  std::string show(std::string name) const {
    if (!in_.c) return "no case loaded\n";
    std::string program;
    // `PROGRAM.VALUE` only where the prefix names a program: value names are
    // dotted themselves (`l4.attn.res`).
    auto dot = name.find('.');
    if (dot != std::string::npos && in_.c->plan.program(name.substr(0, dot)))
      program = name.substr(0, dot), name = name.substr(dot + 1);
    if (!name.empty() && name[0] == '%') name = name.substr(1);
    std::string s;
    for (const auto& l : def_lines(plan_text_, name, program, true)) {
      s += "plan  " + l;
      std::string prog = l.substr(0, l.find(':'));
      if (const ir::Program* p = in_.c->plan.program(prog))
        if (const ir::Op* op = find_def(p->graph, name); op && op->line)
          s += fmt::format("    (line {})", op->line);
      s += "\n";
      for (const auto& pl : in_.c->plan.placements)
        if (pl.program == prog && pl.value == name)
          s += fmt::format("      placed: {} of spec %{}; {}\n", region_str(pl), pl.spec_value,
                           counts(pl));
      if (v_.cex && v_.cex->program == prog && v_.cex->value == name)
        s += fmt::format("      first divergence here: {}{} on rank {}\n", name,
                         index_str(v_.cex->plan_index), v_.cex->rank);
    }
    if (program.empty()) {
      for (const auto& l : def_lines(spec_text_, name, "", false)) {
        s += "spec  " + l;
        if (const ir::Op* op = find_def(in_.c->spec->graph, name); op && op->line)
          s += fmt::format("    (line {})", op->line);
        s += "\n";
      }
      bool any = false;
      for (const auto& pl : in_.c->plan.placements) {
        if (pl.spec_value != name) continue;
        if (!any) s += "      plan shards of spec %" + name + ":\n";
        any = true;
        s += fmt::format("        {}.%{}: {}; {}\n", pl.program, pl.value, region_str(pl),
                         counts(pl));
      }
    }
    return s.empty() ? "no value named '" + name + "'\n" : s;
  }

  const verify::Verdict& v_;
  const ReportInput& in_;
  ir::TypeMap spec_types_;
  std::map<std::string, ir::TypeMap> plan_types_;
  std::string spec_text_, plan_text_;
};

}  // namespace

void add_explain(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand(
      "explain", "verify a case and explain the verdict: an HTML report or an interactive prompt");
  static std::vector<std::string> files;
  static verify::VerifyOptions opt;
  static std::string html_out, from, json_out;
  static bool tui = false;
  cmd->add_option("files", files,
                  "CASE, or SPEC PLAN (with --from: the files the result was made from; by default those it names)");
  cmd->add_option("--from", from,
                  "present a result saved by `parity verify --json FILE` instead of verifying again (refused when "
                  "the files changed since)");
  cmd->add_option("--json", json_out, "write the verdict as JSON to this file (- for stdout), as verify does");
  cmd->add_option("--time-limit", opt.time_limit_s,
                  "seconds for deciding obligations, as for verify (past it the verdict is UNKNOWN)")
      ->check(kPositiveTime);
  cmd->add_option("--cache", opt.cache_dir, "directory of proved stages, as for verify");
  cmd->add_option("-o,--output", html_out, "write a self-contained HTML report to this file");
  cmd->add_flag("--tui", tui,
                "explore the verdict with commands read from stdin (summary, cex, placements, show "
                "VALUE, quit)");
  cmd->add_option("--solver", opt.solver, "z3, cvc5, or both (they must agree)")
      ->check(CLI::IsMember({"z3", "cvc5", "both"}));
  cmd->add_option("--timeout-ms", opt.timeout_ms, "per-obligation solver timeout")->check(kPositiveTime);
  cmd->add_option("--seed", opt.seed, "seed of the concrete screening points");
  cmd->add_option("--points", opt.random_points, "concrete screening points")->check(number_in(0, 1e6));
  cmd->add_option("--expand-budget", opt.expand_budget,
                  "monomials allowed when expanding products")
      ->check(kNonNegative);
  cmd->callback([&run] {
    run = [] {
      ir::Case c;
      verify::Verdict v;
      if (!from.empty()) {
        std::vector<std::string> saved;
        std::string digest;
        v = verdict_from_json(from, &saved, &digest);
        if (files.empty()) files = saved;
        if (files.empty())
          throw CLI::ValidationError("--from", from + " names no input files (a result of an older parity): give CASE");
        if (!digest.empty() && inputs_digest(files) != digest)
          throw std::runtime_error(files_label(files) + " changed since " + from +
                                   " was saved: verify again (or give the files it was made from)");
        c = load_case(files);  // for the listings; the verdict is the saved one
      } else {
        if (files.empty()) throw CLI::ValidationError("files", "CASE (or SPEC PLAN) is required without --from");
        limit_memory();
        if (!opt.cache_dir.empty()) require_writable_dir(opt.cache_dir, "--cache");
        v = load_and_verify(files, opt, c);
      }
      std::string label = files_label(files);
      ReportInput in{files, label, &c};
      if (!json_out.empty()) {
        const std::string text = verdict_json(v, label, files).dump(2) + "\n";
        if (json_out == "-") {
          fmt::print("{}", text);
        } else {
          std::ofstream f(json_out, std::ios::binary);
          if (!f || !(f << text) || !f.flush()) throw std::runtime_error("cannot write " + json_out);
        }
      }
      if (!html_out.empty()) {
        std::string html;
        {
          ProgressLine progress(label);  // verifying had its own; rendering a large plan takes a while too
          progress.phase("writing the HTML report");
          html = explain_html(v, in);
        }
        std::ofstream f(html_out, std::ios::binary);
        if (!f || !(f << html) || !f.flush()) throw std::runtime_error("cannot write " + html_out);
        fmt::print("{}: {}; report written to {}\n", verify::verdict_name(v.kind), label, html_out);
      }
      if (tui) {
        Repl(v, in).run(std::cin, std::cout);
      } else if (html_out.empty() && json_out != "-") {
        fmt::print(v.kind == verify::VerdictKind::invalid ? stderr : stdout, "{}",
                   verdict_text(v, label, c));
        fmt::print(stderr, "(write an HTML report with -o FILE, or explore with --tui)\n");
      }
      return verify::verdict_exit_code(v.kind);
    };
  });
}

}  // namespace parity::cli
