#include "ir/spec.h"

namespace parity::ir {

const char* role_name(Role r) {
  switch (r) {
    case Role::param: return "param";
    case Role::data: return "data";
    case Role::label: return "label";
    case Role::mask: return "mask";
    case Role::opt_state: return "opt_state";
    case Role::loss: return "loss";
    case Role::grad: return "grad";
    case Role::updated_param: return "updated_param";
    case Role::updated_state: return "updated_state";
    case Role::other: return "other";
  }
  return "?";
}

std::optional<Role> parse_role(const std::string& s) {
  for (Role r : {Role::param, Role::data, Role::label, Role::mask, Role::opt_state, Role::loss, Role::grad,
                 Role::updated_param, Role::updated_state, Role::other})
    if (s == role_name(r)) return r;
  return std::nullopt;
}

bool operator==(const Spec& a, const Spec& b) {
  return a.name == b.name && a.dims == b.dims && a.graph == b.graph && a.roles == b.roles;
}

}  // namespace parity::ir
