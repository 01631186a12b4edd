#include "exec/wire.h"

#include <cstring>
#include <stdexcept>

namespace parity::exec {

namespace {
class Writer {
 public:
  void i64(int64_t v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    i64(static_cast<int64_t>(s.size()));
    raw(s.data(), s.size());
  }
  void raw(const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  int64_t i64() {
    int64_t v;
    raw(&v, sizeof v);
    return v;
  }
  size_t count() {
    int64_t n = i64();
    if (n < 0 || static_cast<size_t>(n) > s_.size())
      throw std::runtime_error("malformed rank outcome");
    return static_cast<size_t>(n);
  }
  std::string str() {
    std::string s(count(), '\0');
    raw(s.data(), s.size());
    return s;
  }
  void raw(void* p, size_t n) {
    if (pos_ + n > s_.size()) throw std::runtime_error("truncated rank outcome");
    std::memcpy(p, s_.data() + pos_, n);
    pos_ += n;
  }

 private:
  const std::string& s_;
  size_t pos_ = 0;
};
}  // namespace

std::string encode_outcome(const RankOutcome& o) {
  Writer w;
  w.i64(o.kind);
  w.str(o.error);
  w.i64(static_cast<int64_t>(o.values.size()));
  for (const auto& v : o.values) {
    w.i64(static_cast<int64_t>(v.placement));
    w.i64(v.rank);
    w.str(v.iter);
    w.i64(static_cast<int64_t>(v.b.size()));
    for (const auto& [k, x] : v.b) w.str(k), w.i64(x);
    w.str(v.op);
    w.i64(static_cast<int64_t>(v.seq));
    w.i64(static_cast<int64_t>(v.value.shape.size()));
    for (int64_t d : v.value.shape) w.i64(d);
    w.i64(v.value.size());
    w.raw(v.value.data.data(), v.value.data.size() * sizeof(double));
  }
  return w.out;
}

RankOutcome decode_outcome(const std::string& bytes) {
  Reader r(bytes);
  RankOutcome o;
  int64_t kind = r.i64();
  if (kind < RankOutcome::ok || kind > RankOutcome::peer_failed)
    throw std::runtime_error("malformed rank outcome");
  o.kind = static_cast<RankOutcome::Kind>(kind);
  o.error = r.str();
  for (size_t n = r.count(); n-- > 0;) {
    PlacedValue v;
    v.placement = static_cast<size_t>(r.i64());
    v.rank = r.i64();
    v.iter = r.str();
    for (size_t k = r.count(); k-- > 0;) {
      std::string key = r.str();
      v.b[key] = r.i64();
    }
    v.op = r.str();
    v.seq = static_cast<size_t>(r.i64());
    v.value.shape.resize(r.count());
    for (auto& d : v.value.shape) d = r.i64();
    v.value.data.resize(r.count());
    r.raw(v.value.data.data(), v.value.data.size() * sizeof(double));
    o.values.push_back(std::move(v));
  }
  return o;
}

}  // namespace parity::exec
