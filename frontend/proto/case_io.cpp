#include "frontend/proto/case_io.h"

#include <fcntl.h>
#include <google/protobuf/arena.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/wire_format_lite.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "frontend/proto/convert.h"
#include "ir/error.h"

namespace parity::frontend {
namespace {

namespace pb = google::protobuf;

constexpr size_t kMaxFileBytes = size_t{256} << 20;
// Graphs nest through op regions; the text parser recurses per message level and
// has no limit of its own, so bound it like the binary parser (which uses 100).
constexpr int kTextRecursionLimit = 100;

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// A problem of the file as a whole is placed at its start (1:1), where an
// editor opens it.
[[noreturn]] void fail(const std::string& file, const std::string& msg, int line = 1, int col = 1,
                       const char* check = "case-format") {
  ir::Diag d{file, "", "", "", msg};
  d.line = line, d.col = col, d.check = check;
  throw ir::InvalidInput(d);
}

// Keeps the first error only: later ones are usually consequences of it.
class FirstError : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (seen) return;
    seen = true;
    this->line = line;
    this->column = column;
    this->message = message;
  }

  bool seen = false;
  int line = 0;
  int column = 0;
  std::string message;
};

std::optional<Format> format_from_extension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return std::nullopt;
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == "pbtxt" || ext == "txtpb" || ext == "textproto" || ext == "txt") return Format::text;
  if (ext == "pb" || ext == "bin" || ext == "binpb") return Format::binary;
  return std::nullopt;
}

// Text cases never hold control bytes other than whitespace, while every binary
// case starts with a field tag below 0x20; a damaged binary file then gets the
// binary error rather than a confusing text syntax error.
bool looks_binary(const std::string& bytes) {
  for (unsigned char c : bytes) {
    bool space = c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if ((c < 0x20 && !space) || c == 0x7f) return true;
  }
  return false;
}

bool valid_utf8(const std::string& s) {
  size_t i = 0, n = s.size();
  auto cont = [&](size_t k) { return k < n && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80; };
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (len == 0) return false;
    for (size_t k = 1; k < len; ++k)
      if (!cont(i + k)) return false;
    unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
    // Overlong forms, UTF-16 surrogates and code points above U+10FFFF.
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
        (c == 0xF4 && c1 > 0x8F))
      return false;
    i += len;
  }
  return true;
}

// The binary parser rejects proto3 strings that are not UTF-8 but the text parser
// accepts them; checking text input keeps both formats reading the same cases
// (and every case that reads as text writes a binary that reads back).
const pb::FieldDescriptor* find_bad_utf8(const pb::Message& m) {
  const pb::Reflection* r = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  std::string scratch;
  for (const auto* f : fields) {
    if (f->type() == pb::FieldDescriptor::TYPE_STRING) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(m, f); ++i)
          if (!valid_utf8(r->GetRepeatedStringReference(m, f, i, &scratch))) return f;
      } else if (!valid_utf8(r->GetStringReference(m, f, &scratch))) {
        return f;
      }
    } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(m, f); ++i)
          if (const auto* bad = find_bad_utf8(r->GetRepeatedMessage(m, f, i))) return bad;
      } else if (const auto* bad = find_bad_utf8(r->GetMessage(m, f))) {
        return bad;
      }
    }
  }
  return nullptr;
}

ir::Case parse_text(const std::string& bytes, const std::string& name) {
  // On an arena, as the binary reader: a large plan is millions of small messages.
  pb::Arena arena;
  proto::Case& m = *pb::Arena::CreateMessage<proto::Case>(&arena);
  FirstError errors;
  pb::TextFormat::ParseInfoTree locations;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&locations);
  parser.SetRecursionLimit(kTextRecursionLimit);
  if (!parser.ParseFromString(bytes, &m)) {
    if (!errors.seen) fail(name, "not a valid text parity case");
    fail(name, errors.message, errors.line + 1, errors.column + 1, "syntax");
  }
  if (const auto* bad = find_bad_utf8(m))
    fail(name, "string field '" + bad->full_name() + "' is not valid UTF-8");
  return from_proto(m, name, &locations);
}

// Parses the case's spec and plan on two threads: its top-level fields are
// split first, each submessage then parsed from its own bytes (merged in
// order when a field occurs twice, as the wire format says). False on any
// doubt; the caller then parses the bytes whole, which decides.
bool parse_split(const std::string& bytes, proto::Case& m) {
  using Parts = std::vector<std::pair<const uint8_t*, int>>;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  pb::io::CodedInputStream in(data, static_cast<int>(bytes.size()));
  Parts spec_parts, plan_parts;
  std::string rest;  // every other field (version, unknown ones), parsed as a Case
  for (;;) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const uint32_t field = tag >> 3;
    if ((field == proto::Case::kSpecFieldNumber || field == proto::Case::kPlanFieldNumber) &&
        pb::internal::WireFormatLite::GetTagWireType(tag) == pb::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t len;
      if (!in.ReadVarint32(&len) || len > static_cast<uint32_t>(std::numeric_limits<int>::max())) return false;
      const int at = in.CurrentPosition();
      if (!in.Skip(static_cast<int>(len))) return false;
      (field == proto::Case::kSpecFieldNumber ? spec_parts : plan_parts).emplace_back(data + at, static_cast<int>(len));
    } else {
      if (!pb::internal::WireFormatLite::SkipField(&in, tag)) return false;
      rest.append(bytes, static_cast<size_t>(start), static_cast<size_t>(in.CurrentPosition() - start));
    }
  }
  if (!in.ConsumedEntireMessage() || !m.ParseFromString(rest)) return false;
  auto merge = [](pb::Message* msg, const Parts& parts) {
    for (const auto& [at, len] : parts) {
      pb::io::CodedInputStream sub(at, len);
      // One level is taken by the case around it, as in a whole parse.
      sub.SetRecursionLimit(pb::io::CodedInputStream::GetDefaultRecursionLimit() - 1);
      if (!msg->MergeFromCodedStream(&sub) || !sub.ConsumedEntireMessage()) return false;
    }
    return true;
  };
  // Created here: the two threads then write only inside their own submessage.
  pb::Message* spec = spec_parts.empty() ? nullptr : m.mutable_spec();
  pb::Message* plan = plan_parts.empty() ? nullptr : m.mutable_plan();
  auto spec_ok = std::async(std::launch::async, [&] { return !spec || merge(spec, spec_parts); });
  const bool plan_ok = !plan || merge(plan, plan_parts);
  return spec_ok.get() && plan_ok;
}

ir::Case parse_binary(const std::string& bytes, const std::string& name, bool sniffed) {
  // On an arena: a large plan is millions of small messages, freed at once.
  pb::Arena arena;
  proto::Case& m = *pb::Arena::CreateMessage<proto::Case>(&arena);
  bool ok;
  {
    // The parser logs to stderr (e.g. on invalid UTF-8) before failing; the
    // exception below is the report.
    pb::LogSilencer quiet;
    ok = parse_split(bytes, m);
    if (!ok) {
      m.Clear();
      ok = m.ParseFromString(bytes);
    }
  }
  if (!ok) {
    std::string msg = "not a valid binary parity case (truncated or corrupt protobuf)";
    if (sniffed) msg += "; read as binary because it contains non-text bytes";
    fail(name, msg);
  }
  return from_proto(m, name);
}

// `-` is standard input, read to its end.
std::string read_bytes(const std::string& path) {
  const bool in = path == "-";
  int fd = in ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno), 0, 0, "io");
  struct Closer {
    int fd;
    ~Closer() {
      if (fd != STDIN_FILENO) ::close(fd);
    }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) fail(path, std::string("cannot open: ") + std::strerror(errno), 0, 0, "io");
  if (S_ISDIR(st.st_mode)) fail(path, std::string("cannot open: ") + std::strerror(EISDIR), 0, 0, "io");
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxFileBytes)
    fail(path, "file is larger than " + mib(kMaxFileBytes));
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, std::string("cannot read: ") + std::strerror(errno), 0, 0, "io");
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    // Pipes and devices have no size up front.
    if (out.size() > kMaxFileBytes) fail(path, "file is larger than " + mib(kMaxFileBytes));
  }
  return out;
}

}  // namespace

Format format_for_path(const std::string& path) {
  return format_from_extension(path).value_or(Format::text);
}

ir::Case read_case(const std::string& path) {
  std::string bytes = read_bytes(path);
  const std::string name = path == "-" ? "<stdin>" : path;
  if (auto f = format_from_extension(path)) return parse_case(bytes, name, *f);
  return parse_case(bytes, name);
}

namespace {
// Editors on some systems start a UTF-8 text file with a byte order mark.
bool has_bom(const std::string& bytes) { return bytes.rfind("\xEF\xBB\xBF", 0) == 0; }
}  // namespace

ir::Case parse_case(const std::string& bytes, const std::string& name) {
  if (bytes.size() > kMaxFileBytes) fail(name, "input is larger than " + mib(kMaxFileBytes));
  if (has_bom(bytes)) return parse_text(bytes.substr(3), name);
  if (looks_binary(bytes)) return parse_binary(bytes, name, /*sniffed=*/true);
  return parse_text(bytes, name);
}

ir::Case parse_case(const std::string& bytes, const std::string& name, Format f) {
  if (bytes.size() > kMaxFileBytes) fail(name, "input is larger than " + mib(kMaxFileBytes));
  if (f == Format::binary) return parse_binary(bytes, name, /*sniffed=*/false);
  return parse_text(has_bom(bytes) ? bytes.substr(3) : bytes, name);
}

std::string write_case_string(const ir::Case& c, Format f) {
  proto::Case m = to_proto(c);
  std::string out;
  if (f == Format::binary) {
    if (!m.SerializeToString(&out)) throw std::runtime_error("cannot serialize the case");
  } else {
    // Fields print in field-number order and the schema has no maps: deterministic.
    if (!pb::TextFormat::Printer().PrintToString(m, &out))
      throw std::runtime_error("cannot print the case as text");
  }
  return out;
}

void write_case(const ir::Case& c, const std::string& path) {
  std::string bytes = write_case_string(c, format_for_path(path));
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
  int write_errno = errno;
  if (n != bytes.size()) {
    std::fclose(f);
    throw std::runtime_error(path + ": cannot write: " + std::strerror(write_errno));
  }
  if (std::fclose(f) != 0)
    throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
}

}  // namespace parity::frontend
