// Where a corpus case is read from: a hand-written case in place, a manifest
// (NAME.gen) as expanded at build time into BUILD/corpus/cases/NAME.pbtxt.
#pragma once
#include <filesystem>
#include <string>

namespace parity::test_corpus {

// REL is relative to corpus/cases, e.g. "generated/llama3_cp2.pbtxt".
inline std::string case_path(const std::string& rel) {
  namespace fs = std::filesystem;
  std::string src = std::string(PARITY_SOURCE_DIR) + "/corpus/cases/" + rel;
  if (fs::exists(src)) return src;
  return std::string(PARITY_BINARY_DIR) + "/corpus/cases/" + rel;
}

// The file a source corpus entry (NAME.pbtxt or NAME.gen) is read from.
inline std::string readable(const std::filesystem::path& entry) {
  if (entry.extension() != ".gen") return entry.string();
  auto rel = std::filesystem::relative(entry, std::string(PARITY_SOURCE_DIR) + "/corpus/cases");
  return std::string(PARITY_BINARY_DIR) + "/corpus/cases/" + rel.replace_extension(".pbtxt").string();
}

}  // namespace parity::test_corpus
