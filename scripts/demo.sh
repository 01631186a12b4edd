#!/usr/bin/env bash
# `make demo`: verify a bundled plan, then show a bundled buggy plan rejected.
set -u
parity="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
good="$root/corpus/cases/examples/mlp_tp2.pbtxt"
bad="$root/corpus/cases/demo/mlp_tp2_missing_allreduce.pbtxt"
echo "== parity inspect --summary $(basename "$good")"
"$parity" inspect --summary "$good"
echo
echo "== parity verify $(basename "$good")   (a 2-layer MLP training step, tensor parallel over 2 ranks)"
"$parity" verify "$good"; rc_good=$?
echo "exit code $rc_good"
echo
echo "== parity verify $(basename "$bad")   (the same plan with the row-parallel allreduce missing)"
"$parity" verify "$bad"; rc_bad=$?
echo "exit code $rc_bad"
[ "$rc_good" -eq 0 ] && [ "$rc_bad" -eq 1 ]
