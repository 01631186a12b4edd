#include "frontend/hlo/text.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ir/error.h"

namespace parity::frontend::hlo {

namespace {

[[noreturn]] void fail(const std::string& file, int line, int col, const std::string& msg) {
  ir::Diag d{file, "", "", "", msg};
  d.line = line;
  d.col = col;
  d.check = "syntax";
  throw ir::InvalidInput(d);
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// `/*index=5*/` inside operand lists and tuple shapes: blanked, so columns stay.
std::string blank_comments(std::string s) {
  for (size_t a = s.find("/*"); a != std::string::npos; a = s.find("/*", a)) {
    size_t b = s.find("*/", a + 2);
    if (b == std::string::npos) break;
    for (size_t i = a; i < b + 2; ++i) s[i] = ' ';
  }
  return s;
}

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// A cursor over one line, for messages at the column where reading failed.
struct Cur {
  const std::string& s;
  const std::string& file;
  int line;
  size_t i = 0;
  [[noreturn]] void err(const std::string& msg) const {
    fail(file, line, static_cast<int>(i) + 1, msg);
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  bool eat(const std::string& t) {
    ws();
    if (s.compare(i, t.size(), t) == 0) {
      i += t.size();
      return true;
    }
    return false;
  }
  void expect(const std::string& t) {
    if (!eat(t)) err("expected '" + t + "'");
  }
  std::string ident() {
    ws();
    size_t a = i;
    if (i < s.size() && s[i] == '%') ++i;
    size_t b = i;
    while (i < s.size() && ident_char(s[i])) ++i;
    if (i == b) err("expected a name");
    return s.substr(a, i - a);
  }
  // Text up to the bracket that closes the one at i (which must be `open`).
  std::string balanced(char open, char close) {
    if (i >= s.size() || s[i] != open) err(std::string("expected '") + open + "'");
    int depth = 0;
    bool quoted = false;
    size_t a = i;
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (quoted) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          quoted = false;
        continue;
      }
      if (c == '"')
        quoted = true;
      else if (c == open)
        ++depth;
      else if (c == close && --depth == 0) {
        ++i;
        return s.substr(a + 1, i - a - 2);
      }
    }
    i = a;
    err(std::string("no matching '") + close + "'");
  }
  Shape shape() {
    ws();
    Shape sh;
    if (i < s.size() && s[i] == '(') {
      sh.is_tuple = true;
      ++i;
      ws();
      if (eat(")")) return sh;
      for (;;) {
        sh.tuple.push_back(shape());
        if (eat(")")) break;
        expect(",");
      }
      return sh;
    }
    size_t a = i;
    while (i < s.size() && std::isalnum(static_cast<unsigned char>(s[i]))) ++i;
    sh.elem = s.substr(a, i - a);
    if (sh.elem.empty()) err("expected a shape such as f32[4,16]");
    if (i >= s.size() || s[i] != '[') err("expected '[' after the element type '" + sh.elem + "'");
    std::string dims = balanced('[', ']');
    for (const auto& d : split_top(dims)) {
      std::string t = trim(d);
      if (t.empty()) continue;
      try {
        size_t used = 0;
        long long v = std::stoll(t, &used);
        if (used != t.size() || v < 0) throw std::invalid_argument(t);
        sh.dims.push_back(v);
      } catch (const std::exception&) {
        err("dim '" + t + "' is not a static size (dynamic shapes are not supported)");
      }
    }
    if (i < s.size() && s[i] == '{') balanced('{', '}');  // the layout: irrelevant to values
    return sh;
  }
};

// `{op_name="..." source_file="f.py" source_line=9 stack_frame_id=3}` -> key/value.
std::map<std::string, std::string> metadata_fields(const std::string& v) {
  std::map<std::string, std::string> out;
  std::string s = v;
  if (!s.empty() && s.front() == '{') s = s.substr(1, s.size() >= 2 ? s.size() - 2 : 0);
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t eq = s.find('=', i);
    if (eq == std::string::npos) break;
    std::string key = trim(s.substr(i, eq - i));
    i = eq + 1;
    std::string val;
    if (i < s.size() && s[i] == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        val += s[i];
      }
      ++i;
    } else {
      size_t e = s.find(' ', i);
      if (e == std::string::npos) e = s.size();
      val = s.substr(i, e - i);
      i = e;
    }
    out[key] = val;
  }
  return out;
}

std::string basename(const std::string& p) {
  auto k = p.find_last_of('/');
  return k == std::string::npos ? p : p.substr(k + 1);
}

// The tables newer XLA prints after the module line: source files, lines and
// stack frames that the instructions' `stack_frame_id` points into.
struct Frames {
  std::map<int64_t, std::string> files;
  std::map<int64_t, std::pair<int64_t, int64_t>> locations;  // id -> (file id, line)
  std::map<int64_t, int64_t> frames;                         // id -> location id
  std::string origin(int64_t frame) const {
    auto f = frames.find(frame);
    if (f == frames.end()) return "";
    auto l = locations.find(f->second);
    if (l == locations.end()) return "";
    auto n = files.find(l->second.first);
    if (n == files.end()) return "";
    return basename(n->second) + ":" + std::to_string(l->second.second);
  }
};

}  // namespace

std::string Shape::str() const {
  if (is_tuple) {
    std::string s = "(";
    for (size_t k = 0; k < tuple.size(); ++k) s += (k ? ", " : "") + tuple[k].str();
    return s + ")";
  }
  std::string s = elem + "[";
  for (size_t k = 0; k < dims.size(); ++k) s += (k ? "," : "") + std::to_string(dims[k]);
  return s + "]";
}

const std::string* Instr::attr(const std::string& k) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? nullptr : &it->second;
}

const Instr* Computation::root() const {
  for (const auto& i : instrs)
    if (i.root) return &i;
  return instrs.empty() ? nullptr : &instrs.back();
}

const Instr* Computation::find(const std::string& n) const {
  for (const auto& i : instrs)
    if (i.name == n) return &i;
  return nullptr;
}

const Computation* Module::entry() const {
  for (const auto& c : comps)
    if (c.entry) return &c;
  return nullptr;
}

const Computation* Module::find(const std::string& n) const {
  for (const auto& c : comps)
    if (c.name == n) return &c;
  return nullptr;
}

const std::string* Module::note(const std::string& key) const {
  for (const auto& [k, v] : notes)
    if (k == key) return &v;
  return nullptr;
}

std::vector<std::string> split_top(const std::string& s, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  bool quoted = false;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quoted) {
      cur += c;
      if (c == '\\' && i + 1 < s.size())
        cur += s[++i];
      else if (c == '"')
        quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    if (c == sep && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(cur);
  return out;
}

std::vector<int64_t> int_list(const std::string& text) {
  std::string s = trim(text);
  if (!s.empty() && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  std::vector<int64_t> out;
  for (const auto& p : split_top(s)) {
    std::string t = trim(p);
    if (t.empty()) continue;
    size_t used = 0;
    long long v = std::stoll(t, &used);
    if (used != t.size()) throw std::invalid_argument(t);
    out.push_back(v);
  }
  return out;
}

Module parse_module(const std::string& text, const std::string& file) {
  Module m;
  m.file = file;
  Frames fr;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  Computation* cur = nullptr;
  std::string section;
  while (std::getline(in, raw)) {
    ++line;
    if (line == 1 && raw.size() >= 3 && raw.compare(0, 3, "\xEF\xBB\xBF") == 0) raw = raw.substr(3);
    std::string s = blank_comments(raw);
    std::string t = trim(s);
    if (t.empty()) {
      section.clear();
      continue;
    }
    if (t.compare(0, 2, "//") == 0) {
      const std::string tag = "// parity-";
      if (t.compare(0, tag.size(), tag) == 0) {
        auto colon = t.find(':', tag.size());
        if (colon == std::string::npos) fail(file, line, 1, "expected '// parity-KEY: VALUE'");
        m.notes.push_back({t.substr(tag.size(), colon - tag.size()), trim(t.substr(colon + 1))});
        m.note_lines.push_back(line);
      }
      continue;
    }
    Cur c{s, file, line};
    if (cur == nullptr) {
      if (t.compare(0, 9, "HloModule") == 0) {
        if (!m.name.empty()) fail(file, line, 1, "a second HloModule line: one module per file");
        c.i = s.find("HloModule") + 9;
        m.name = c.ident();
        c.ws();
        if (c.eat(",")) {
          for (const auto& kv : split_top(s.substr(c.i))) {
            auto eq = kv.find('=');
            if (eq != std::string::npos) m.attrs[trim(kv.substr(0, eq))] = trim(kv.substr(eq + 1));
          }
        }
        continue;
      }
      if (t == "FileNames" || t == "FunctionNames" || t == "FileLocations" || t == "StackFrames") {
        section = t;
        continue;
      }
      if (!section.empty()) {
        size_t sp = t.find(' ');
        int64_t id = 0;
        try {
          id = std::stoll(t.substr(0, sp));
        } catch (const std::exception&) {
          fail(file, line, 1, "expected 'ID VALUE' in the " + section + " table");
        }
        std::string rest = sp == std::string::npos ? "" : trim(t.substr(sp + 1));
        if (section == "FileNames") {
          if (rest.size() >= 2 && rest.front() == '"') rest = rest.substr(1, rest.size() - 2);
          fr.files[id] = rest;
        } else if (section == "FileLocations") {
          auto f = metadata_fields(rest);
          try {
            fr.locations[id] = {std::stoll(f["file_name_id"]), std::stoll(f["line"])};
          } catch (const std::exception&) {
            fail(file, line, 1, "a file location without file_name_id and line");
          }
        } else if (section == "StackFrames") {
          auto f = metadata_fields(rest);
          try {
            fr.frames[id] = std::stoll(f["file_location_id"]);
          } catch (const std::exception&) {
            fail(file, line, 1, "a stack frame without file_location_id");
          }
        }
        continue;
      }
      // A computation: `[ENTRY ]%name (params) -> shape {`.
      if (t.back() != '{')
        fail(file, line, 1, "expected 'HloModule', a computation or an instruction");
      if (m.name.empty()) fail(file, line, 1, "expected the 'HloModule NAME' line first");
      Computation comp;
      comp.line = line;
      c.ws();
      if (c.eat("ENTRY ")) comp.entry = true;
      std::string n = c.ident();
      comp.name = n[0] == '%' ? n.substr(1) : n;
      if (m.find(comp.name))
        fail(file, line, static_cast<int>(c.i), "a second computation named '" + comp.name + "'");
      m.comps.push_back(std::move(comp));
      cur = &m.comps.back();
      continue;
    }
    if (t == "}") {
      if (cur->instrs.empty())
        fail(file, line, 1, "computation '" + cur->name + "' has no instructions");
      cur = nullptr;
      continue;
    }
    Instr ins;
    ins.line = line;
    c.ws();
    if (c.eat("ROOT ")) ins.root = true;
    c.ws();
    ins.col = static_cast<int>(c.i) + 1;
    std::string n = c.ident();
    ins.name = n[0] == '%' ? n.substr(1) : n;
    if (cur->find(ins.name))
      c.err("a second instruction named '" + ins.name + "' in '" + cur->name + "'");
    c.expect("=");
    ins.shape = c.shape();
    c.ws();
    size_t a = c.i;
    while (c.i < s.size() &&
           (std::isalnum(static_cast<unsigned char>(s[c.i])) || s[c.i] == '-' || s[c.i] == '_'))
      ++c.i;
    ins.opcode = s.substr(a, c.i - a);
    if (ins.opcode.empty()) c.err("expected an opcode");
    ins.operand_text = c.balanced('(', ')');
    if (ins.opcode != "constant" && ins.opcode != "parameter" && ins.opcode != "iota")
      for (const auto& p : split_top(ins.operand_text)) {
        std::string o = trim(p);
        auto sp = o.find_last_of(' ');
        if (sp != std::string::npos)
          o = o.substr(sp + 1);  // `f32[4]{0} %x`: the shape is a reminder
        if (!o.empty() && o[0] == '%') o = o.substr(1);
        if (o.empty()) c.err("an empty operand");
        ins.operands.push_back(o);
      }
    c.ws();
    if (c.i < s.size()) {
      if (s[c.i] != ',') c.err("expected ',' before the attributes");
      for (const auto& kv : split_top(s.substr(c.i + 1))) {
        auto eq = kv.find('=');
        if (eq == std::string::npos) {
          if (!trim(kv).empty()) c.err("expected KEY=VALUE, got '" + trim(kv) + "'");
          continue;
        }
        ins.attrs[trim(kv.substr(0, eq))] = trim(kv.substr(eq + 1));
      }
    }
    if (const std::string* md = ins.attr("metadata")) {
      auto f = metadata_fields(*md);
      if (f.count("source_file") && f.count("source_line"))
        ins.origin = basename(f["source_file"]) + ":" + f["source_line"];
    }
    cur->instrs.push_back(std::move(ins));
  }
  if (cur) fail(file, line, 1, "computation '" + cur->name + "' is not closed with '}'");
  if (m.name.empty()) fail(file, 1, 1, "no 'HloModule' line: not HLO text");
  if (!m.entry()) fail(file, 1, 1, "no ENTRY computation");
  // Stack frames: the tables come before the computations, so every id is known now.
  for (auto& comp : m.comps)
    for (auto& ins : comp.instrs)
      if (ins.origin.empty())
        if (const std::string* md = ins.attr("metadata")) {
          auto f = metadata_fields(*md);
          if (f.count("stack_frame_id")) try {
              ins.origin = fr.origin(std::stoll(f["stack_frame_id"]));
            } catch (const std::exception&) {
            }
        }
  return m;
}

Module read_module(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    ir::Diag d{path, "", "", "", "cannot read the file"};
    d.check = "io";
    throw ir::InvalidInput(d);
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_module(ss.str(), path);
}

}  // namespace parity::frontend::hlo
