#!/bin/bash
# Calibration of `parity run --compare` (exec/compare.h): generated Megatron
# plans without and with injected bugs, run in f32, bf16 and f64. Each cell is
# EXIT/VERDICT:R where R is the largest |plan - spec| / tolerance over all
# values: correct plans need R < 1 (MATCH), bugs R > 1 (DIFFERS); exit 2 is a
# bug that validation already rejects. About 100 s on 2 cores.
# Usage: bench/exec_tolerance.sh [PARITY]   (default build/tools/parity)
set -u
parity=$(realpath "${1:-build/tools/parity}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "command: $0 $*"
cases=(
  "llama3-8b --dp 2 --tp 2|" "llama3-8b --pp 2 --mb 2 --dp 2|" "llama3-8b --tp 2 --sp|" "llama3-8b --cp 2|"
  "deepseek-v3-16b --ep 2 --dp 2|" "deepseek-v3-16b --tp 2|" "gpt-small --dp 2 --zero 3|" "gpt-small --tp 2 --pp 2 --mb 2|"
  "llama3-8b --dp 2 --tp 2|missing-allreduce" "llama3-8b --dp 2 --tp 2|missing-grad-allreduce"
  "llama3-8b --dp 2 --tp 2|missing-bwd-allreduce" "llama3-8b --dp 2 --tp 2|wrong-axis"
  "deepseek-v3-16b --ep 2 --dp 2|ep-grad-over-ep" "llama3-8b --dp 2 --tp 2|double-grad-allreduce"
  "llama3-8b --tp 2 --sp|unsynced-sp-grad" "llama3-8b --dp 2|unsynced-grad" "llama3-8b --dp 2 --tp 2|grad-avg-dp"
  "llama3-8b --dp 2 --tp 2|tp-avg" "llama3-8b --pp 2 --mb 2|loss-scale-mb" "llama3-8b --dp 2|scale-one-rank"
  "llama3-8b --dp 2 --mb 2|per-microbatch-mean" "llama3-8b --tp 2|norm-counts-replica"
  "gpt-small --pp 2 --mb 2|tied-updated-apart" "llama3-8b --dp 2 --mb 2|early-grad-reduction"
  "llama3-8b --mb 2|accumulator-reset" "llama3-8b --tp 2|wrong-vocab-offset" "llama3-8b --dp 2 --zero 1|zero-shard-offset"
  "llama3-8b --cp 2|cp-rope-offset" "llama3-8b --cp 2|cp-causal-offset" "deepseek-v3-16b --ep 2|wrong-expert"
  "llama3-8b --dp 2|constant-changed" "llama3-8b --dp 2|pow-exponent" "llama3-8b --tp 2|bwd-wrong-input"
  "llama3-8b --tp 2|rope-swap-bwd"
)
printf '%-32s %-24s %-18s %-18s %-18s\n' plan bug f32 bf16 f64
i=0
for c in "${cases[@]}"; do
  cfg=${c%%|*} bug=${c##*|} i=$((i + 1))
  f=$work/c$i.pbtxt
  # shellcheck disable=SC2086
  "$parity" gen $cfg ${bug:+--bug $bug} -o "$f" > /dev/null 2>&1 || { echo "gen failed: $cfg $bug"; continue; }
  row=$(printf '%-32s %-24s' "$cfg" "${bug:-(correct)}")
  for d in f32 bf16 f64; do
    "$parity" run "$f" --compare --dtype "$d" --json "$work/r.json" > /dev/null 2>&1
    rc=$?
    cell=$(python3 - "$work/r.json" << 'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = max([t["max_abs_error"] / t["tolerance"] for t in j.get("tensors") or []] or [0])
print("%s:%.3g" % (j["verdict"], r))
PY
)
    row="$row $(printf '%-18s' "$rc/$cell")"
  done
  echo "$row"
done
