// The Spec: one training step on one device, the ground truth a plan must match.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace parity::ir {

enum class Role { param, data, label, mask, opt_state, loss, grad, updated_param, updated_state, other };
const char* role_name(Role r);
std::optional<Role> parse_role(const std::string& s);

struct Spec {
  std::string name;
  Bindings dims;  // default binding of every dim symbol
  Graph graph;
  std::map<std::string, Role> roles;  // for graph inputs and outputs
  int line = 0, col = 0;              // where it is written in a text file; 0 when unknown
};

bool operator==(const Spec& a, const Spec& b);

}  // namespace parity::ir
