#!/bin/bash
# `parity run --ranks mpi` under mpirun, one process per rank:
#   mlp_tp2 matches its spec (exit 0), the missing-allreduce demo differs
#   (exit 1), and a deadlocking pipeline ends by timeout naming rank and op
#   (exit 2) instead of hanging.
# Usage: tests/mpi/run_mpi.sh [PARITY]   (default build/tools/parity; run from
# the repository root). Exits 77 (skip) when mpirun is not installed.
set -u
parity=${1:-build/tools/parity}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
source tests/lib/expect.sh
EXPECT_TIMEOUT=120
mpi_setup


expect "mlp_tp2 matches" 0 "MATCH:" \
  "${mpi[@]}" "$parity" run corpus/cases/examples/mlp_tp2.pbtxt --ranks mpi --compare
expect "missing allreduce differs" 1 "DIFFERS:" \
  "${mpi[@]}" "$parity" run corpus/cases/demo/mlp_tp2_missing_allreduce.pbtxt --ranks mpi --compare
expect "deadlock times out" 2 "timed out after 2 s at 'recv ->" \
  "${mpi[@]}" "$parity" run tests/malformed/deadlock_pipeline.pbtxt --ranks mpi --no-validate --timeout-s 2
expect "process count must equal mesh size" 2 "mpirun -np must equal the mesh size" \
  mpirun --oversubscribe --allow-run-as-root -np 3 "$parity" run corpus/cases/examples/dp2.pbtxt --ranks mpi
exit $fail
