#!/bin/bash
# `mpirun -np N parity verify`: the processes share the distinct stages; the
# verdict is printed once (by process 0) and every process exits with it.
#   a generated 4-layer plan is VERIFIED with stages proved by both processes
#   (the JSON's stage_list names each stage's process), and a bug is a MISMATCH.
# Usage: tests/mpi/verify_mpi.sh [PARITY]; exits 77 (skip) without mpirun.
set -u
parity=${1:-build/tools/parity}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
source tests/lib/expect.sh
mpi_setup
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$parity" gen llama3-8b --tp 2 --pp 2 --mb 2 --layers 4 -o "$tmp/ok.pb" > /dev/null || exit 1
"$parity" gen llama3-8b --tp 2 --pp 2 --mb 2 --layers 4 --bug missing-allreduce@layer=2 -o "$tmp/bug.pb" > /dev/null || exit 1

out=$(timeout 120 "${mpi[@]}" "$parity" verify "$tmp/ok.pb" --threads 1 --json "$tmp/ok.json" 2>&1)
rc=$?
n=$(grep -c '^VERIFIED' <<< "$out")
shards=$(python3 -c 'import json,sys; print(sorted({s["shard"] for s in json.load(open(sys.argv[1]))["stage_list"]}))' "$tmp/ok.json" 2>&1)
if [ "$rc" != 0 ] || [ "$n" != 1 ] || [ "$shards" != "[0, 1]" ]; then
  echo "FAIL correct plan: exit $rc, $n verdict lines, stage processes $shards"
  echo "$out" | sed 's/^/  /'
  fail=1
else
  echo "ok   correct plan VERIFIED once, stages proved by processes $shards"
fi

out=$(timeout 120 "${mpi[@]}" "$parity" verify "$tmp/bug.pb" --threads 1 2>&1)
rc=$?
if [ "$rc" != 1 ] || [ "$(grep -c '^MISMATCH' <<< "$out")" != 1 ]; then
  echo "FAIL bug: exit $rc (want 1, one MISMATCH line)"
  echo "$out" | sed 's/^/  /'
  fail=1
else
  echo "ok   bug MISMATCH (exit 1)"
fi
exit $fail
