#!/bin/bash
# `parity run --backend cuda` on a GPU: cuBLAS matmuls and the bf16 rounding
# kernel against the spec run on the CPU, in f32, bf16 and f64, by threads and,
# under mpirun, through NCCL (one process and one GPU per rank). A plan with
# more ranks on the node than it has GPUs is UNSUPPORTED by name (NCCL would
# only say "invalid usage").
# Usage: tests/cuda/run_cuda.sh [PARITY]   (default build/tools/parity; run from
# the repository root). Exits 77 (skip) without a CUDA device or module.
set -u
parity=${1:-build/tools/parity}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
source tests/lib/expect.sh
EXPECT_TIMEOUT=120
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$parity" gen llama3-8b --layers 1 -o "$tmp/one.pb" > /dev/null || exit 1
"$parity" gen llama3-8b --tp 2 --layers 1 -o "$tmp/tp2.pb" > /dev/null || exit 1
"$parity" gen llama3-8b --tp 2 --pp 2 --dp 2 --mb 2 --layers 2 -o "$tmp/m8.pb" > /dev/null || exit 1
probe=$("$parity" run "$tmp/one.pb" --backend cuda 2>&1)
if [ $? = 3 ]; then
  echo "SKIP: $probe"
  exit 77
fi
ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')

for c in corpus/cases/examples/mlp_tp2.pbtxt "$tmp/tp2.pb" "$tmp/m8.pb"; do
  for d in f32 bf16 f64; do
    expect "$(basename "$c") on the GPU in $d matches" 0 "MATCH:" \
      "$parity" run "$c" --backend cuda --dtype "$d" --compare
  done
done
expect "the missing allreduce differs on the GPU" 1 "DIFFERS:" \
  "$parity" run corpus/cases/demo/mlp_tp2_missing_allreduce.pbtxt --backend cuda --compare

command -v mpirun > /dev/null || { echo "no mpirun: NCCL not checked"; exit $fail; }
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl_tcp_if_include=lo
run1=(mpirun --allow-run-as-root -np 1)
run2=(mpirun --oversubscribe --allow-run-as-root -np 2)
for d in f32 bf16; do
  expect "one rank through NCCL in $d matches" 0 "MATCH:" \
    "${run1[@]}" "$parity" run "$tmp/one.pb" --ranks mpi --backend cuda --dtype "$d" --compare
done
if [ "$ngpu" -ge 2 ]; then
  expect "TP2 through NCCL matches" 0 "MATCH:" \
    "${run2[@]}" "$parity" run "$tmp/tp2.pb" --ranks mpi --backend cuda --compare
  expect "the missing allreduce differs through NCCL" 1 "DIFFERS:" \
    "${run2[@]}" "$parity" run corpus/cases/demo/mlp_tp2_missing_allreduce.pbtxt --ranks mpi \
    --backend cuda --compare
else
  expect "two ranks on one GPU are UNSUPPORTED by name" 3 "needs one GPU per rank: 2 ranks" \
    "${run2[@]}" "$parity" run "$tmp/tp2.pb" --ranks mpi --backend cuda --compare
fi
exit $fail
