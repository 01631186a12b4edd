#include "frontend/hlo/sharding.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "frontend/hlo/text.h"

namespace parity::frontend::hlo {

namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (auto x : v) {
    if (x < 1 || p > (int64_t{1} << 40) / x)
      throw std::invalid_argument("a device list past 2^40 entries");
    p *= x;
  }
  return p;
}

// iota(product(shape)) reshaped to `shape`, transposed by `perm` (out dim k =
// in dim perm[k]), flattened.
std::vector<int64_t> transposed_iota(const std::vector<int64_t>& shape,
                                     const std::vector<int64_t>& perm) {
  int64_t n = product(shape);
  if (n > (int64_t{1} << 24))
    throw std::invalid_argument("a device list of more than 2^24 devices");
  size_t r = shape.size();
  std::vector<int64_t> strides(r, 1);
  for (size_t k = r; k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  std::vector<int64_t> out_shape(r);
  for (size_t k = 0; k < r; ++k) out_shape[k] = shape[static_cast<size_t>(perm[k])];
  std::vector<int64_t> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(r, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t k = 0; k < r; ++k) src += idx[k] * strides[static_cast<size_t>(perm[k])];
    out[static_cast<size_t>(i)] = src;
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < out_shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

// Calls `visit` with every ordered selection of mesh axes (major first) whose
// sizes multiply to `count`, until it returns true.
bool for_each_axes_order(const ir::Mesh& mesh, int64_t count,
                         const std::function<bool(const std::vector<size_t>&)>& visit) {
  std::vector<size_t> pick;
  std::vector<bool> used(mesh.axes.size(), false);
  std::function<bool(int64_t)> go = [&](int64_t prod) {
    if (prod == count && !pick.empty()) return visit(pick);
    for (size_t k = 0; k < mesh.axes.size(); ++k)
      if (!used[k] && mesh.axes[k].size > 1 && count % (prod * mesh.axes[k].size) == 0) {
        used[k] = true;
        pick.push_back(k);
        bool done = go(prod * mesh.axes[k].size);
        pick.pop_back();
        used[k] = false;
        if (done) return true;
      }
    return false;
  };
  return go(1);
}

}  // namespace

std::optional<ir::DimExpr> tile_index(const ir::Mesh& mesh, const std::vector<int64_t>& tile,
                                      int64_t count) {
  std::optional<ir::DimExpr> found;
  for_each_axes_order(mesh, count, [&](const std::vector<size_t>& pick) {
    for (int64_t r = 0; r < mesh.num_ranks(); ++r) {
      ir::Coord c = mesh.coord_of(r);
      int64_t li = 0;
      for (auto k : pick) li = li * mesh.axes[k].size + c[k];
      if (li != tile[static_cast<size_t>(r)]) return false;
    }
    ir::DimExpr e = ir::DimExpr::sym("$" + mesh.axes[pick[0]].name);
    for (size_t j = 1; j < pick.size(); ++j)
      e = e * ir::DimExpr(mesh.axes[pick[j]].size) +
          ir::DimExpr::sym("$" + mesh.axes[pick[j]].name);
    found = e;
    return true;
  });
  if (found) return found;
  // A ring step: one axis's coordinate shifted by k, cyclically (a chunk
  // passed k steps around a ring of collective-permutes).
  for (size_t k = 0; k < mesh.axes.size(); ++k) {
    const int64_t n = mesh.axes[k].size;
    if (n != count) continue;
    for (int64_t shift = 1; shift < n; ++shift) {
      bool all = true;
      for (int64_t r = 0; r < mesh.num_ranks() && all; ++r)
        all = tile[static_cast<size_t>(r)] == (mesh.coord_of(r)[k] + shift) % n;
      if (all)
        return (ir::DimExpr::sym("$" + mesh.axes[k].name) + ir::DimExpr(shift)) %
               ir::DimExpr::sym(mesh.axes[k].name);
    }
  }
  return std::nullopt;
}

std::vector<int64_t> iota_devices(const std::string& text, std::vector<int64_t>* shape) {
  // `[2,4]<=[8]` or `[4,2]<=[2,4]T(1,0)`
  std::string s = trim(text);
  auto le = s.find("<=");
  if (s.empty() || s[0] != '[' || le == std::string::npos)
    throw std::invalid_argument("expected [DIMS]<=[DIMS]");
  auto close = s.find(']');
  *shape = int_list(s.substr(1, close - 1));
  std::string rest = s.substr(le + 2);
  auto rc = rest.find(']');
  if (rest.empty() || rest[0] != '[' || rc == std::string::npos)
    throw std::invalid_argument("expected <=[DIMS]");
  std::vector<int64_t> base = int_list(rest.substr(1, rc - 1));
  std::vector<int64_t> perm(base.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::string tail = trim(rest.substr(rc + 1));
  if (!tail.empty()) {
    if (tail.size() < 3 || tail[0] != 'T' || tail[1] != '(' || tail.back() != ')')
      throw std::invalid_argument("expected T(PERM) after the iota dims, got '" + tail + "'");
    perm = int_list(tail.substr(2, tail.size() - 3));
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t k = 0; k < sorted.size(); ++k)
      if (sorted[k] != static_cast<int64_t>(k) || perm.size() != base.size())
        throw std::invalid_argument("T(...) is not a permutation of the iota dims");
  }
  auto devs = transposed_iota(base, perm);
  if (product(*shape) != static_cast<int64_t>(devs.size()))
    throw std::invalid_argument("the tile dims hold " + std::to_string(product(*shape)) +
                                " devices, the iota " + std::to_string(devs.size()));
  return devs;
}

Sharding parse_sharding(const std::string& text) {
  std::string s = trim(text);
  if (s.size() < 2 || s.front() != '{' || s.back() != '}')
    throw std::invalid_argument("expected {...}");
  std::string body = trim(s.substr(1, s.size() - 2));
  Sharding sh;
  if (!body.empty() && body[0] == '{') {
    sh.kind = Sharding::Kind::tuple;
    for (const auto& p : split_top(body)) sh.tuple.push_back(parse_sharding(p));
    return sh;
  }
  if (body == "replicated" || body.empty()) return sh;
  if (body == "manual") {
    sh.kind = Sharding::Kind::manual;
    return sh;
  }
  if (body.compare(0, 7, "maximal") == 0) {
    sh.kind = Sharding::Kind::maximal;
    return sh;
  }
  if (body.compare(0, 8, "devices=") != 0)
    throw std::invalid_argument("unknown sharding '" + s + "'");
  sh.kind = Sharding::Kind::tiled;
  std::string rest = body.substr(8);
  // Flags after the device list, separated by spaces.
  std::vector<std::string> words;
  {
    std::string w;
    int depth = 0;
    for (char c : rest) {
      if (c == '[' || c == '(' || c == '{') ++depth;
      if (c == ']' || c == ')' || c == '}') --depth;
      if (c == ' ' && depth == 0) {
        if (!w.empty()) words.push_back(w);
        w.clear();
      } else {
        w += c;
      }
    }
    if (!w.empty()) words.push_back(w);
  }
  if (words.empty()) throw std::invalid_argument("devices= without a device list");
  std::string devs = words[0];
  if (devs.find("<=") != std::string::npos) {
    sh.devices = iota_devices(devs, &sh.tile_dims);
  } else {
    auto close = devs.find(']');
    if (devs[0] != '[' || close == std::string::npos)
      throw std::invalid_argument("expected devices=[DIMS]LIST");
    sh.tile_dims = int_list(devs.substr(1, close - 1));
    sh.devices = int_list(devs.substr(close + 1));
    if (static_cast<int64_t>(sh.devices.size()) != product(sh.tile_dims))
      throw std::invalid_argument("the device list has " + std::to_string(sh.devices.size()) +
                                  " entries, the tile dims " +
                                  std::to_string(product(sh.tile_dims)));
  }
  for (size_t k = 1; k < words.size(); ++k) {
    if (words[k] == "last_tile_dim_replicate")
      sh.last_tile_dim_replicate = true;
    else if (words[k] == "last_tile_dims={replicated}")
      sh.last_tile_dim_replicate = true;
    else if (words[k].compare(0, 9, "metadata=") == 0)
      continue;
    else
      throw std::invalid_argument("sharding flag '" + words[k] + "' is not modeled");
  }
  return sh;
}

std::vector<std::vector<int64_t>> parse_replica_groups(const std::string& text, int64_t partitions,
                                                       const std::string& device_ids) {
  std::string s = trim(text);
  // The device order of a mesh, and the axes after it.
  std::vector<int64_t> order;
  if (!device_ids.empty()) {
    std::string d = trim(device_ids);
    size_t end = std::string::npos;
    int depth = 0;
    for (size_t k = 0; k < d.size() && end == std::string::npos; ++k) {
      if (d[k] == '(') ++depth;
      if (d[k] == ')' && --depth == 0) end = k;
    }
    if (d.empty() || d[0] != '(' || end == std::string::npos)
      throw std::invalid_argument("expected device_ids=(IOTA) {AXES}");
    std::string list = d.substr(1, end - 1);
    std::string axes = trim(d.substr(end + 1));
    if (list.find("<=") == std::string::npos) {
      // `[2,2,2]T(0,2,1)`: iota over those dims, transposed.
      auto close = list.find(']');
      if (close == std::string::npos)
        throw std::invalid_argument("expected device_ids=([DIMS]T(PERM))");
      list = list.substr(0, close + 1) + "<=" + list;
    }
    std::vector<int64_t> shape;
    order = iota_devices(list, &shape);
    s += " " + axes;
  }
  std::vector<std::vector<int64_t>> out;
  if (s == "{}") {
    out.emplace_back(static_cast<size_t>(partitions));
    std::iota(out[0].begin(), out[0].end(), 0);
    return out;
  }
  if (!s.empty() && s[0] == '{') {
    for (const auto& g : split_top(s.substr(1, s.size() - 2))) out.push_back(int_list(g));
    return out;
  }
  if (!s.empty() && s[0] == '[') {
    std::vector<int64_t> shape;
    auto devs = iota_devices(s, &shape);
    if (shape.size() != 2) throw std::invalid_argument("iota replica groups need [GROUPS,SIZE]");
    for (int64_t g = 0; g < shape[0]; ++g)
      out.emplace_back(devs.begin() + g * shape[1], devs.begin() + (g + 1) * shape[1]);
    return out;
  }
  if (s.compare(0, 5, "mesh[") == 0) {
    // mesh['a'=2,'b'=4] {'a'}: devices row-major over the mesh; groups along the named axes.
    auto close = s.find(']');
    if (close == std::string::npos) throw std::invalid_argument("expected mesh[...]");
    std::vector<std::string> names;
    std::vector<int64_t> sizes;
    for (const auto& a : split_top(s.substr(5, close - 5))) {
      auto eq = a.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("expected 'AXIS'=SIZE in the mesh");
      std::string n = trim(a.substr(0, eq));
      if (n.size() >= 2 && n.front() == '\'') n = n.substr(1, n.size() - 2);
      names.push_back(n);
      sizes.push_back(std::stoll(trim(a.substr(eq + 1))));
    }
    std::string rest = trim(s.substr(close + 1));
    if (rest.size() < 2 || rest.front() != '{' || rest.back() != '}')
      throw std::invalid_argument("expected {AXES} after the mesh");
    std::vector<size_t> along;
    for (const auto& a : split_top(rest.substr(1, rest.size() - 2))) {
      std::string n = trim(a);
      if (n.size() >= 2 && n.front() == '\'') n = n.substr(1, n.size() - 2);
      auto it = std::find(names.begin(), names.end(), n);
      if (it == names.end())
        throw std::invalid_argument("axis '" + n + "' (a sub-axis?) is not in the mesh");
      along.push_back(static_cast<size_t>(it - names.begin()));
    }
    ir::Mesh m;
    for (size_t k = 0; k < names.size(); ++k) m.axes.push_back({names[k], sizes[k]});
    if (m.num_ranks() != partitions)
      throw std::invalid_argument("the mesh has " + std::to_string(m.num_ranks()) +
                                  " devices, the module " + std::to_string(partitions) +
                                  " partitions");
    std::vector<std::string> an;
    for (auto k : along) an.push_back(names[k]);
    std::set<ir::Coord> seen;
    if (!order.empty() && static_cast<int64_t>(order.size()) != partitions)
      throw std::invalid_argument("device_ids lists " + std::to_string(order.size()) + " devices");
    for (int64_t r = 0; r < partitions; ++r)
      if (seen.insert(m.off_axes(r, an)).second) {
        auto g = m.group_along(r, an);
        if (!order.empty())
          for (auto& x : g) x = order[static_cast<size_t>(x)];
        out.push_back(g);
      }
    return out;
  }
  throw std::invalid_argument("unknown replica_groups '" + s + "'");
}

std::optional<ir::Strings> axes_of_groups(const std::vector<std::vector<int64_t>>& groups,
                                          const ir::Mesh& mesh) {
  std::set<std::vector<int64_t>> want(groups.begin(), groups.end());
  const int64_t gsize = groups.empty() ? 0 : static_cast<int64_t>(groups[0].size());
  std::optional<ir::Strings> found;
  for_each_axes_order(mesh, gsize, [&](const std::vector<size_t>& pick) {
    ir::Strings names;
    for (auto k : pick) names.push_back(mesh.axes[k].name);
    std::set<std::vector<int64_t>> have;
    std::set<ir::Coord> seen;
    for (int64_t r = 0; r < mesh.num_ranks(); ++r)
      if (seen.insert(mesh.off_axes(r, names)).second) have.insert(mesh.group_along(r, names));
    if (have == want) found = names;
    return found.has_value();
  });
  return found;
}

std::vector<ir::Range> region_of(const Sharding& s, const std::vector<int64_t>& shape,
                                 const ir::Mesh& mesh) {
  if (s.kind == Sharding::Kind::replicated) return {};
  if (s.kind == Sharding::Kind::manual) throw std::invalid_argument("a manual sharding");
  if (s.kind == Sharding::Kind::maximal)
    throw std::invalid_argument("a sharding on one device (maximal)");
  if (s.kind == Sharding::Kind::tuple) throw std::invalid_argument("a tuple sharding on an array");
  size_t rank = shape.size();
  size_t tiled = s.tile_dims.size() - (s.last_tile_dim_replicate ? 1 : 0);
  if (tiled != rank)
    throw std::invalid_argument("a sharding of " + std::to_string(tiled) +
                                " tile dims on a tensor of rank " + std::to_string(rank));
  int64_t ranks = mesh.num_ranks();
  if (static_cast<int64_t>(s.devices.size()) != ranks)
    throw std::invalid_argument("a sharding over " + std::to_string(s.devices.size()) +
                                " devices on a mesh of " + std::to_string(ranks));
  // Tile index of every partition, per dim.
  std::vector<std::vector<int64_t>> tile(rank,
                                         std::vector<int64_t>(static_cast<size_t>(ranks), -1));
  for (size_t pos = 0; pos < s.devices.size(); ++pos) {
    int64_t dev = s.devices[pos];
    if (dev < 0 || dev >= ranks)
      throw std::invalid_argument("device " + std::to_string(dev) + " is not a partition");
    int64_t rem = static_cast<int64_t>(pos);
    std::vector<int64_t> idx(s.tile_dims.size());
    for (size_t k = s.tile_dims.size(); k-- > 0;) {
      idx[k] = rem % s.tile_dims[k];
      rem /= s.tile_dims[k];
    }
    for (size_t d = 0; d < rank; ++d) tile[d][static_cast<size_t>(dev)] = idx[d];
  }
  std::vector<ir::Range> r;
  bool split = false;
  for (size_t d = 0; d < rank; ++d) {
    int64_t t = s.tile_dims[d];
    if (shape[d] % t != 0)
      throw std::invalid_argument("dim " + std::to_string(d) + " of size " +
                                  std::to_string(shape[d]) + " split " + std::to_string(t) +
                                  " ways (XLA pads uneven tiles; not modeled)");
    int64_t size = shape[d] / t;
    if (t == 1) {
      r.push_back({ir::DimExpr(int64_t{0}), ir::DimExpr(size)});
      continue;
    }
    split = true;
    auto off = tile_index(mesh, tile[d], t);
    if (!off)
      throw std::invalid_argument("dim " + std::to_string(d) + " is split " + std::to_string(t) +
                                  " ways in an order that is no split along the mesh axes");
    *off = *off * ir::DimExpr(size);
    r.push_back({*off, ir::DimExpr(size)});
  }
  if (!split) r.clear();
  return r;
}

}  // namespace parity::frontend::hlo
