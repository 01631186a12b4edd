#!/usr/bin/env bash
# Every command given a directory where a file belongs says so and exits 2
# (verify-mlir read it as an empty module: "no shard.grid", exit 3).
set -u
parity="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
for cmd in "validate" "verify" "run" "inspect" "verify-mlir"; do
  out=$("$parity" $cmd "$dir" 2>&1); rc=$?
  if [ "$rc" -ne 2 ] || ! grep -qi "directory" <<<"$out"; then
    echo "FAIL: parity $cmd DIR: exit $rc: $out"; fail=1
  fi
done
[ $fail -eq 0 ] && echo ok
exit $fail
