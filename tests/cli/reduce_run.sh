#!/bin/bash
# `parity reduce` then `parity run`: a plan of 64 ranks runs through its
# reduced instance; a bug on one rank keeps that rank and still differs.
# Usage: tests/cli/reduce_run.sh [PARITY]
set -u
parity=${1:-build/tools/parity}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/../lib/expect.sh"
"$parity" gen llama3-8b --dp 32 --tp 2 --layers 2 -o "$tmp/ok.pb" > /dev/null || exit 1
"$parity" gen llama3-8b --dp 32 --tp 2 --layers 2 --bug scale-one-rank@rank=37 -o "$tmp/bug.pb" > /dev/null || exit 1
expect "reduce a 64-rank plan" 0 "4 ranks (from 64)" "$parity" reduce "$tmp/ok.pb" -o "$tmp/ok.small.pb"
expect "the reduced plan matches its spec" 0 "MATCH" "$parity" run "$tmp/ok.small.pb" --compare
expect "a rank-specific bug keeps its rank" 0 "dp coordinates kept: 0, 1, 18, 19" \
  "$parity" reduce "$tmp/bug.pb" -o "$tmp/bug.small.pb"
expect "and still differs" 1 "DIFFERS" "$parity" run "$tmp/bug.small.pb" --compare
expect "invalid input" 2 "INVALID" "$parity" reduce tests/malformed/deadlock_pipeline.pbtxt -o "$tmp/x.pb"
exit $fail
