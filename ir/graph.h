// A graph is a straight-line SSA program over named tensor values. Ops may carry
// regions (the body of a `loop`), which see the enclosing values by name.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/attr.h"
#include "ir/tensor_type.h"

namespace parity::ir {

struct Graph;

struct Op {
  std::string kind;
  std::vector<std::string> operands;
  std::vector<std::string> results;
  AttrMap attrs;
  std::vector<Graph> regions;
  int line = 0;  // source line in a text file, 0 when unknown
  int col = 0;   // and column
  // Where an importer's source says the op came from (`train.py:42`, from
  // XLA's metadata); empty when unknown. Shown beside the line in messages.
  std::string origin;

  const Attr* attr(const std::string& name) const;
  // Label used in messages: `matmul -> h1`.
  std::string label() const;
};

struct Graph {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, TensorType> types;  // declared types (inputs must be declared)
  std::vector<Op> ops;
};

bool operator==(const Op& a, const Op& b);
bool operator==(const Graph& a, const Graph& b);

}  // namespace parity::ir
