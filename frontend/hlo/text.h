// XLA's HLO text (what `--xla_dump_to` writes and `HloModule::ToString`
// prints), read into plain structs: computations of instructions whose
// attributes are kept as text, for the importer to read by opcode. Malformed
// text is InvalidInput at FILE:LINE:COL.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace parity::frontend::hlo {

// `f32[4,16]{1,0}`, `pred[]`, or a tuple `(f32[], s32[2])`.
struct Shape {
  std::string elem;  // f32, bf16, s32, pred, ...; empty for a tuple
  std::vector<int64_t> dims;
  std::vector<Shape> tuple;
  bool is_tuple = false;
  std::string str() const;
};

struct Instr {
  std::string name;  // without the leading %
  Shape shape;
  std::string opcode;
  std::vector<std::string> operands;  // names, without %
  std::string operand_text;           // the text between the parentheses (a constant's literal)
  std::map<std::string, std::string> attrs;  // `key=value`, the value as written
  bool root = false;
  int line = 0, col = 0;
  std::string origin;  // `train.py:42` from the metadata, when it says
  const std::string* attr(const std::string& k) const;
};

struct Computation {
  std::string name;
  bool entry = false;
  std::vector<Instr> instrs;
  int line = 0;
  const Instr* root() const;
  const Instr* find(const std::string& name) const;
};

struct Module {
  std::string file;
  std::string name;
  std::map<std::string, std::string> attrs;  // of the HloModule line (num_partitions=8, ...)
  // `// parity-KEY: VALUE` lines parity_jax writes above the module.
  std::vector<std::pair<std::string, std::string>> notes;
  std::vector<int> note_lines;  // the line of each
  std::vector<Computation> comps;
  const Computation* entry() const;
  const Computation* find(const std::string& name) const;
  const std::string* note(const std::string& key) const;
};

Module parse_module(const std::string& text, const std::string& file);
Module read_module(const std::string& path);

// Splits `a, b={c, d}, e` at the commas outside brackets and quotes.
std::vector<std::string> split_top(const std::string& s, char sep = ',');
// `{1,0}` or `1,0` -> {1, 0}; throws std::invalid_argument when not integers.
std::vector<int64_t> int_list(const std::string& s);

}  // namespace parity::frontend::hlo
