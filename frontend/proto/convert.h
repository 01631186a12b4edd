// Conversion between the IR and the protobuf messages of parity.proto.
#pragma once
#include <google/protobuf/text_format.h>

#include <string>

#include "frontend/proto/parity.pb.h"
#include "ir/plan.h"

namespace parity::frontend {

constexpr uint32_t kFormatVersion = 1;

proto::Case to_proto(const ir::Case& c);
// Checks every field it converts (dtype names, dim expressions, roles, kinds, the
// version); throws ir::InvalidInput naming `file` and the element.
ir::Case from_proto(const proto::Case& m, const std::string& file);
// Same, with the locations of a text parse of `m`: sets Op::line and names source
// lines in messages. `locations` may be null.
ir::Case from_proto(const proto::Case& m, const std::string& file,
                    const google::protobuf::TextFormat::ParseInfoTree* locations);

}  // namespace parity::frontend
