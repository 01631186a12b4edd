#!/usr/bin/env bash
# Anchor configurations and scaling curves of `parity verify` (full training
# step: forward, cross-entropy, backward, clipping, AdamW), on this machine.
# Prints a markdown table headed by the command that made it.
#   bench/reduce_bench.sh [build-dir]        (default: build)
#   QUICK=1 bench/reduce_bench.sh            (fewer curve points)
#   LIMIT=120 bench/reduce_bench.sh          (seconds allowed per verify; default 600)
#   REPEAT=3 bench/reduce_bench.sh           (each verify run 3 times: the fastest time, the largest RSS)
set -euo pipefail
BUILD=${1:-build}
P="$BUILD/tools/parity"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "command: ${QUICK:+QUICK=$QUICK }${REPEAT:+REPEAT=$REPEAT }bench/reduce_bench.sh $BUILD   ($(nproc) cores, $(date -u +%Y-%m-%d))"
echo

# run ID GEN-ARGS... -> "ranks|stages|distinct|seconds|rss_mb|verdict"
run() {
  local f="$T/case.pb" j="$T/v.json" tm="$T/time"
  "$P" gen "$@" -o "$f" >/dev/null
  rm -f "$j" "$tm"
  for _ in $(seq "${REPEAT:-1}"); do
    /usr/bin/time -a -f "%e %M" -o "$tm" timeout "${LIMIT:-600}" "$P" verify "$f" --json "$j" >/dev/null || true
  done
  python3 - "$j" "$tm" "$f" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except OSError:
    v = {"verdict": "no verdict (crashed or killed)"}
# The fastest of the repeated runs (the others met a busy machine); the largest peak RSS.
import re
runs = [l.split() for l in open(sys.argv[2]) if re.fullmatch(r"[0-9.]+ [0-9]+", l.strip())]
sec = min(float(r[0]) for r in runs)
kb = max(int(r[1]) for r in runs)
st = v.get("stages", {})
red = v.get("reduction", {})
print(f'{red.get("verified_ranks", "?")}|{st.get("total", 0)}|{st.get("distinct", 0)}|{float(sec):.2f}|{int(kb)//1024}|{v["verdict"]}')
PY
}

ranks() { "$P" gen "$@" -o "$T/r.pb" | sed -n 's/.*bytes, \([0-9]*\) ranks.*/\1/p'; }

bug() {
  local id=$1 b=$2; shift 2
  IFS='|' read -r vr st di sec mb verdict <<<"$(run "$@" --bug "$b")"
  echo "| $id | \`$b\` | $vr | $sec | $verdict |"
}
echo "| id | config | ranks | verified ranks | stages | distinct | time (s) | peak RSS (MB) | verdict |"
echo "|---|---|---|---|---|---|---|---|---|"
anchor() {
  local id=$1; shift
  local r
  r=$(ranks "$@")
  IFS='|' read -r vr st di sec mb verdict <<<"$(run "$@")"
  echo "| $id | \`$*\` | $r | $vr | $st | $di | $sec | $mb | $verdict |"
}
# Real layer counts; hidden sizes are the generator's reduced dims (verify
# reduces them further).
anchor L1 llama3-8b --dp 512 --layers 32
anchor L2 llama3-70b --dp 16 --tp 8 --pp 4 --mb 32 --layers 80
anchor L3 llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 --layers 126
anchor D1 deepseek-v3-16b --dp 16 --tp 4 --pp 2 --mb 16 --layers 27
anchor D2 deepseek-v3-236b --dp 16 --tp 8 --pp 4 --mb 16 --layers 60
anchor D3 deepseek-v3-671b --dp 32 --tp 8 --pp 8 --mb 16 --layers 61
anchor DSV3 deepseek-v3-671b --pp 16 --ep 64 --dp 2 --zero 1 --mb 16 --layers 61
anchor 405B-long llama3-405b --tp 8 --cp 16 --pp 16 --dp 8 --mb 16 --layers 126
echo

# The same plans at their real sizes: the published models' dims (Llama-3
# sequence 8192, DeepSeek 4096, the long-context run 131072), and the
# published system's artifact dims (hidden 4096 or 16384, sequence 128).
L8=(--dim H=4096 --dim NH=32 --dim D=128 --dim KV=8 --dim F=14336 --dim V=128256 --dim S=8192)
L70=(--dim H=8192 --dim NH=64 --dim D=128 --dim KV=8 --dim F=28672 --dim V=128256 --dim S=8192)
L405=(--dim H=16384 --dim NH=128 --dim D=128 --dim KV=8 --dim F=53248 --dim V=128256 --dim S=8192)
DS16=(--dim H=2048 --dim NH=16 --dim DN=128 --dim DR=64 --dim DV=128 --dim KVL=512 --dim E=64 --dim FE=1408
      --dim F=10944 --dim V=102400 --dim S=4096)
DS236=(--dim H=5120 --dim NH=128 --dim DN=128 --dim DR=64 --dim DV=128 --dim QL=1536 --dim KVL=512 --dim E=160
       --dim FE=1536 --dim F=12288 --dim V=102400 --dim S=4096)
DS671=(--dim H=7168 --dim NH=128 --dim DN=128 --dim DR=64 --dim DV=128 --dim QL=1536 --dim KVL=512 --dim E=256
       --dim FE=2048 --dim F=18432 --dim V=129280 --dim S=4096)
echo "| id | config (published dims) | ranks | verified ranks | stages | distinct | time (s) | peak RSS (MB) | verdict |"
echo "|---|---|---|---|---|---|---|---|---|"
anchor L1 llama3-8b --dp 512 --layers 32 "${L8[@]}"
anchor L2 llama3-70b --dp 16 --tp 8 --pp 4 --mb 32 --layers 80 "${L70[@]}"
anchor L3 llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 --layers 126 "${L405[@]}"
anchor D1 deepseek-v3-16b --dp 16 --tp 4 --pp 2 --mb 16 --layers 27 "${DS16[@]}"
anchor D2 deepseek-v3-236b --dp 16 --tp 8 --pp 4 --mb 16 --layers 60 "${DS236[@]}"
anchor D3 deepseek-v3-671b --dp 32 --tp 8 --pp 8 --mb 16 --layers 61 "${DS671[@]}"
anchor DSV3 deepseek-v3-671b --pp 16 --ep 64 --dp 2 --zero 1 --mb 16 --layers 61 "${DS671[@]}"
anchor 405B-long llama3-405b --tp 8 --cp 16 --pp 16 --dp 8 --mb 16 --layers 126 "${L405[@]}" --dim S=131072
echo
echo "| id | config (artifact dims) | ranks | verified ranks | stages | distinct | time (s) | peak RSS (MB) | verdict |"
echo "|---|---|---|---|---|---|---|---|---|"
anchor L1 llama3-8b --dp 512 --layers 32 --dim H=4096 --dim NH=32 --dim D=128 --dim S=128
anchor L2 llama3-70b --dp 16 --tp 8 --pp 4 --mb 32 --layers 80 --dim H=4096 --dim NH=64 --dim D=64 --dim S=128
anchor L3 llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 --layers 126 --dim H=16384 --dim NH=128 --dim D=128 --dim S=128
echo

# MLIR modules at real sizes (static shapes, read as size symbols): a
# Megatron MLP partitioned by MLIR at Llama-3 8B sizes, and a hand-partitioned
# fwd+bwd MLP at hidden 4096 with its bug twin.
echo "| id | MLIR module | time (s) | peak RSS (MB) | verdict |"
echo "|---|---|---|---|---|"
mlir() {
  local id=$1; shift
  /usr/bin/time -f "%e %M" -o "$T/mt" timeout "${LIMIT:-600}" "$P" "$@" >"$T/mo" 2>&1 || true
  read -r sec kb < <(tail -n 1 "$T/mt")
  echo "| $id | \`parity $*\` | $sec | $((kb / 1024)) | $(head -c 9 "$T/mo" | tr -d ' ') |"
}
mlir M1 verify-mlir tests/mlir/mlp_llama3_8b_sizes.mlir
mlir M2 verify tests/mlir/specs/mlir_ok_mlp_fwd_bwd_tp_h4096.spec.mlir tests/mlir/mlir_ok_mlp_fwd_bwd_tp_h4096.mlir
mlir M3 verify tests/mlir/specs/mlir_bug_mlp_bwd_dx_noar_h4096.spec.mlir tests/mlir/mlir_bug_mlp_bwd_dx_noar_h4096.mlir
echo

# Bugs at one rank, one microbatch, one layer of L3 and D3 at published dims: each must be rejected.
echo "| base | bug (published dims) | ranks | time (s) | verdict |"
echo "|---|---|---|---|---|"
L3P=(llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 --layers 126 "${L405[@]}")
D3P=(deepseek-v3-671b --dp 32 --tp 8 --pp 8 --mb 16 --layers 61 "${DS671[@]}")
bug L3 constant-changed@rank=1234 "${L3P[@]}"
bug L3 accumulator-reset@mb=11 "${L3P[@]}"
bug L3 missing-allreduce@layer=77 "${L3P[@]}"
bug D3 accumulator-reset@mb=9 "${D3P[@]}"
bug D3 missing-allreduce@layer=40 "${D3P[@]}"
echo

# Bugs at one rank, one microbatch, one layer of L3 and D3: each must be rejected.
echo "| base | bug | ranks | time (s) | verdict |"
echo "|---|---|---|---|---|"
L3=(llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 --layers 126)
D3=(deepseek-v3-671b --dp 32 --tp 8 --pp 8 --mb 16 --layers 61)
bug L3 constant-changed@rank=1234 "${L3[@]}"
bug L3 accumulator-reset@mb=11 "${L3[@]}"
bug L3 missing-allreduce@layer=77 "${L3[@]}"
bug L3 missing-grad-allreduce "${L3[@]}"
bug D3 accumulator-reset@mb=9 "${D3[@]}"
bug D3 missing-allreduce@layer=40 "${D3[@]}"
bug D3 missing-grad-allreduce "${D3[@]}"
# Bugs that defeat the usual reduction: a literal 1/16 beside 16 microbatches
# (every size coincides with it), a slice hard-coded for 4 experts.
bug L3 loss-scale-mb "${L3[@]}"
bug L3 early-grad-reduction@mb=7 "${L3[@]}"
bug D3 wrong-expert "${D3[@]}"
# Literals equal to sizes as given (1/64 beside ep = E = 64, 1/16 beside
# cp = M = S = 16): found past the literals, under each reading of them.
bug DSV3 ep-grad-scale@layer=30 deepseek-v3-671b --pp 16 --ep 64 --dp 2 --zero 1 --mb 16 --layers 61
bug 405B-long loss-scale-mb llama3-405b --tp 8 --cp 16 --pp 16 --dp 8 --mb 16 --layers 126
echo

# curve NAME FLAG VALUES... -- BASE-ARGS: time at each point, last/first ratio.
curve() {
  local name=$1 flag=$2; shift 2
  local vals=()
  while [ "$1" != "--" ]; do vals+=("$1"); shift; done
  shift
  local first="" last="" row=""
  for v in "${vals[@]}"; do
    IFS='|' read -r vr st di sec mb verdict <<<"$(run "$@" "$flag" "$v")"
    row+=" $v: ${sec}s ($verdict);"
    [ -z "$first" ] && first=$sec
    last=$sec
  done
  echo "| $name | \`$* $flag ...\` |$row | $(python3 -c "print(f'{$last/$first:.2f}')") |"
}
# Where the layers curve's time goes: the phases of `parity verify` (its
# --json timings, fastest run) at the curve's two ends, and the process as a
# whole (start-up included: loading the solver and MLIR libraries).
# phases GEN-ARGS... [-- VERIFY-ARGS...]
phases() {
  local f="$T/ph.pb" best="" bt="" gen=() ver=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do gen+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  ver=("$@")
  "$P" gen "${gen[@]}" -o "$f" >/dev/null
  for _ in $(seq "${REPEAT:-1}"); do
    local s0 s1
    s0=$(date +%s.%N)
    timeout "${LIMIT:-600}" "$P" verify "$f" --json "$T/ph.json" "${ver[@]}" >/dev/null || true
    s1=$(date +%s.%N)
    local t
    t=$(python3 -c "print(f'{$s1-$s0:.3f}')")
    if [ -z "$bt" ] || python3 -c "import sys; sys.exit(0 if $t < $bt else 1)"; then
      bt=$t
      best=$(python3 - "$T/ph.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["timings"]
v = t.get("validate", 0)
print(f'{t["read"]:.3f} | {v:.3f} | {t["validate_and_reduce"] - v:.3f} | {t.get("fold", 0):.3f} | {t["stage_build"]:.3f} | {t["stage_prove"]:.3f} | {t.get("second_look", 0):.3f}')
PY
)
    fi
  done
  echo "| \`${gen[*]}${ver[*]:+ (verify ${ver[*]})}\` | $best | $bt |"
}
echo "| layers curve end | read | validate | reduce (and validate the reduced instance) | fold | stage graph | prove | second look | process (s) |"
echo "|---|---|---|---|---|---|---|---|---|"
phases llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 --layers 16
phases llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 --layers 126
phases llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 --layers 126 -- --no-fold
echo

echo "| curve (published dims) | base | points | largest/smallest |"
echo "|---|---|---|---|"
if [ "${QUICK:-}" = 1 ]; then
  curve layers --layers 16 126 -- llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 "${L405[@]}"
  curve DP --dp 2 64 -- llama3-405b --tp 8 --pp 16 --mb 16 "${L405[@]}"
else
  curve layers --layers 16 32 64 126 -- llama3-405b --dp 64 --tp 8 --pp 16 --mb 16 "${L405[@]}"
  curve DP --dp 2 8 32 64 -- llama3-405b --tp 8 --pp 16 --mb 16 "${L405[@]}"
  curve microbatches --mb 2 8 16 32 -- llama3-405b --dp 64 --tp 8 --pp 16 "${L405[@]}"
  curve TP --tp 1 2 4 8 -- llama3-405b --dp 64 --pp 16 --mb 16 "${L405[@]}"
fi
