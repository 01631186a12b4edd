// Reading and writing case files: protobuf text format (`.pbtxt`, `.txtpb`) or
// binary (`.pb`, `.bin`). Round trips are exact: read(write(c)) == c.
#pragma once
#include <string>

#include "ir/plan.h"

namespace parity::frontend {

enum class Format { text, binary };

// Format from the file name; unknown extensions are read by content sniffing
// and written as text.
Format format_for_path(const std::string& path);

// Throws ir::InvalidInput naming the file, the line/column for text, and what was expected.
ir::Case read_case(const std::string& path);
// `name` is used in messages only.
ir::Case parse_case(const std::string& bytes, const std::string& name);
ir::Case parse_case(const std::string& bytes, const std::string& name, Format f);

std::string write_case_string(const ir::Case& c, Format f);
void write_case(const ir::Case& c, const std::string& path);  // throws on I/O errors

}  // namespace parity::frontend
