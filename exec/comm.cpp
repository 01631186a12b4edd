#include "exec/comm.h"

#include <fmt/format.h>

#include "ir/interp.h"

namespace parity::exec {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::avg:
      return "avg";
    case ReduceOp::max:
      return "max";
  }
  return "?";
}

std::optional<ReduceOp> parse_reduce_op(const std::string& s) {
  if (s == "sum") return ReduceOp::sum;
  if (s == "avg") return ReduceOp::avg;
  if (s == "max") return ReduceOp::max;
  return std::nullopt;
}

const char* coll_kind_name(CollKind k) {
  switch (k) {
    case CollKind::allreduce:
      return "allreduce";
    case CollKind::allgather:
      return "allgather";
    case CollKind::reduce_scatter:
      return "reduce_scatter";
    case CollKind::all_to_all:
      return "all_to_all";
    case CollKind::broadcast:
      return "broadcast";
  }
  return "?";
}

std::string Collective::signature() const {
  switch (kind) {
    case CollKind::allreduce:
      return fmt::format("allreduce({})", reduce_op_name(op));
    case CollKind::allgather:
      return fmt::format("allgather(dim={})", dim);
    case CollKind::reduce_scatter:
      return fmt::format("reduce_scatter({}, dim={})", reduce_op_name(op), dim);
    case CollKind::all_to_all:
      return fmt::format("all_to_all(split={}, concat={})", split_dim, concat_dim);
    case CollKind::broadcast:
      return fmt::format("broadcast(root={})", root);
  }
  return "?";
}

std::string Communicator::rank_name(int64_t r) const {
  return namer_ ? namer_(r) : "rank " + std::to_string(r);
}

CommError Communicator::error(const std::string& msg) const {
  return CommError(rank_name(rank()) + ": " + msg);
}

CommTimeout Communicator::timeout_error(const std::string& label,
                                        const std::vector<int64_t>& waiting_for,
                                        const std::string& detail) const {
  std::string peers;
  for (size_t i = 0; i < waiting_for.size(); ++i)
    peers += (i ? ", " : "") + rank_name(waiting_for[i]);
  return CommTimeout(rank_name(rank()) + ": " +
                     fmt::format("timed out after {} s at '{}' waiting for {}{}", timeout_s_, label,
                                 peers.empty() ? "its peers" : peers,
                                 detail.empty() ? "" : " " + detail));
}

void Communicator::check(Collective& c, const std::vector<int64_t>& shape) const {
  auto pos = std::find(c.group.begin(), c.group.end(), rank());
  if (pos == c.group.end())
    throw error(fmt::format("is not a member of the group of '{}'", c.label));
  for (int64_t m : c.group)
    if (m < 0 || m >= size())
      throw error(
          fmt::format("group of '{}' names rank {} outside a world of {}", c.label, m, size()));
  int64_t rk = static_cast<int64_t>(shape.size()), n = static_cast<int64_t>(c.group.size());
  auto norm = [&](int64_t& d) {
    if (d < 0) d += rk;
    if (d < 0 || d >= rk)
      throw error(fmt::format("dim out of range for a rank-{} value at '{}'", rk, c.label));
  };
  auto divisible = [&](int64_t d) {
    if (shape[static_cast<size_t>(d)] % n != 0)
      throw error(fmt::format("dim {} of size {} is not divisible by the group size {} at '{}'", d,
                              shape[static_cast<size_t>(d)], n, c.label));
  };
  if (c.kind == CollKind::allgather) norm(c.dim);
  if (c.kind == CollKind::reduce_scatter) norm(c.dim), divisible(c.dim);
  if (c.kind == CollKind::all_to_all) norm(c.split_dim), norm(c.concat_dim), divisible(c.split_dim);
  if (c.kind == CollKind::broadcast && (c.root < 0 || c.root >= n))
    throw error(
        fmt::format("broadcast root {} outside the group of {} at '{}'", c.root, n, c.label));
}

void Communicator::check_peer(int64_t peer, const std::string& label) const {
  if (peer < 0 || peer >= size())
    throw error(fmt::format("peer {} outside a world of {} at '{}'", peer, size(), label));
}

std::vector<int64_t> chunk_shape(std::vector<int64_t> shape, int64_t dim, int64_t n) {
  shape[static_cast<size_t>(dim)] /= n;
  return shape;
}

template <class F>
std::vector<F> pack_chunks(const Tensor<F>& x, int64_t dim, int64_t n) {
  std::vector<F> out;
  out.reserve(x.data.size());
  for (int64_t i = 0; i < n; ++i) {
    Tensor<F> c = ir::detail::chunk(x, static_cast<size_t>(dim), n, i);
    out.insert(out.end(), c.data.begin(), c.data.end());
  }
  return out;
}

template <class F>
Tensor<F> concat_blocks(const std::vector<F>& flat, const std::vector<int64_t>& block_shape,
                        int64_t dim, int64_t n) {
  std::vector<Tensor<F>> parts(static_cast<size_t>(n));
  size_t len = static_cast<size_t>(ir::sem::num_el(block_shape));
  std::vector<const Tensor<F>*> ptrs;
  for (int64_t i = 0; i < n; ++i) {
    Tensor<F>& p = parts[static_cast<size_t>(i)];
    p.shape = block_shape;
    p.data.assign(flat.begin() + static_cast<std::ptrdiff_t>(i * len),
                  flat.begin() + static_cast<std::ptrdiff_t>((i + 1) * len));
    ptrs.push_back(&p);
  }
  return ir::detail::concat(ptrs, static_cast<size_t>(dim));
}

template std::vector<float> pack_chunks(const Tensor<float>&, int64_t, int64_t);
template std::vector<double> pack_chunks(const Tensor<double>&, int64_t, int64_t);
template Tensor<float> concat_blocks(const std::vector<float>&, const std::vector<int64_t>&,
                                     int64_t, int64_t);
template Tensor<double> concat_blocks(const std::vector<double>&, const std::vector<int64_t>&,
                                      int64_t, int64_t);

}  // namespace parity::exec
