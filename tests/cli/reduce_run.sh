#!/bin/bash
# `parity reduce` then `parity run`: a plan of 64 ranks runs through its
# reduced instance; a bug on one rank keeps that rank and still differs.
# Usage: tests/cli/reduce_run.sh [PARITY]
set -u
parity=${1:-build/tools/parity}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect NAME WANT_EXIT WANT_TEXT CMD...
  local name=$1 want=$2 text=$3
  shift 3
  out=$(timeout 300 "$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<< "$out"; then
    echo "FAIL $name: exit $rc (want $want, text '$text'), output:"
    echo "$out" | sed 's/^/  /'
    fail=1
  else
    echo "ok   $name"
  fi
}
"$parity" gen llama3-8b --dp 32 --tp 2 --layers 2 -o "$tmp/ok.pb" > /dev/null || exit 1
"$parity" gen llama3-8b --dp 32 --tp 2 --layers 2 --bug scale-one-rank@rank=37 -o "$tmp/bug.pb" > /dev/null || exit 1
expect "reduce a 64-rank plan" 0 "4 ranks (from 64)" "$parity" reduce "$tmp/ok.pb" -o "$tmp/ok.small.pb"
expect "the reduced plan matches its spec" 0 "MATCH" "$parity" run "$tmp/ok.small.pb" --compare
expect "a rank-specific bug keeps its rank" 0 "dp coordinates kept: 0, 1, 18, 19" \
  "$parity" reduce "$tmp/bug.pb" -o "$tmp/bug.small.pb"
expect "and still differs" 1 "DIFFERS" "$parity" run "$tmp/bug.small.pb" --compare
expect "invalid input" 2 "INVALID" "$parity" reduce tests/malformed/deadlock_pipeline.pbtxt -o "$tmp/x.pb"
exit $fail
