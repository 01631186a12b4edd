// libFuzzer target for the case-file readers. Malformed input must end in
// ir::InvalidInput; any other exception, a crash, or a case that does not
// survive a text round trip is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "frontend/proto/case_io.h"
#include "ir/error.h"

namespace {

using parity::frontend::Format;

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_proto: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void check(const std::string& bytes, Format f) {
  parity::ir::Case c;
  try {
    c = parity::frontend::parse_case(bytes, "fuzz", f);
  } catch (const parity::ir::InvalidInput&) {
    return;
  }
  std::string text = parity::frontend::write_case_string(c, Format::text);
  parity::ir::Case back;
  try {
    back = parity::frontend::parse_case(text, "fuzz-roundtrip", Format::text);
  } catch (const parity::ir::InvalidInput& e) {
    bug("a written case does not read back", std::string(e.what()) + "\n" + text);
  }
  if (!(back == c)) bug("text round trip changed the case", text);
  // Writing is deterministic and reaches a fixed point after one round.
  std::string again = parity::frontend::write_case_string(back, Format::text);
  if (again != text) bug("text output differs after a round trip", text + "\n----\n" + again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  check(bytes, Format::text);
  check(bytes, Format::binary);
  return 0;
}
