#!/usr/bin/env bash
# The cause of a counterexample (verify/culprit.h): for bugs injected by
# `parity gen` (one op changed, dropped or misread, on one rank, microbatch or
# layer), the `cause:` line names the op the bug is in; where unplaced values
# leave candidates open it names the values to place. SARIF and JUnit carry it.
set -u
parity="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
# gen arguments | text the cause line must hold
cases=(
  "llama3-405b --dp 2 --tp 2 --pp 2 --mb 2 --layers 16 --bug missing-allreduce@layer=4|cause: \`identity -> l4.attn.out.bug\`"
  "llama3-8b --dp 2 --tp 2 --bug missing-grad-allreduce|cause: \`identity -> grad.reduced.l0.attn_norm.bug\`"
  "llama3-8b --dp 2 --tp 2 --bug missing-bwd-allreduce|cause: \`identity -> d_l0.mlp.norm.bug\`"
  "llama3-8b --dp 2 --tp 2 --bug wrong-axis|cause: \`allreduce -> grad.reduced.l0.attn_norm.bug\`"
  "llama3-8b --dp 2 --tp 2 --bug double-grad-allreduce|cause: \`allreduce -> grad.reduced.l0.attn_norm.again\`"
  "llama3-8b --dp 2 --bug grad-reduce-max|cause: \`allreduce -> grad.reduced.l0.attn_norm.bug\`"
  "llama3-8b --dp 2 --bug grad-avg-dp|cause: \`allreduce -> grad.reduced.l0.attn_norm.bug\`"
  "llama3-8b --tp 2 --bug tp-avg|cause: \`allreduce -> l0.attn.out.bug\`"
  "llama3-8b --tp 2 --sp --bug unsynced-sp-grad|cause: \`identity -> grad.reduced.l0.attn_norm.bug\`"
  "llama3-8b --tp 2 --sp --bug sp-bwd-split|cause: \`slice -> d_l0.mlp.norm.bug\`"
  "llama3-8b --dp 2 --zero 1 --bug zero-shard-offset|cause: \`slice -> shard.l0.attn_norm.bug\` on rank 1"
  "llama3-8b --tp 2 --bug constant-changed|its attributes differ from the spec's \`scale -> l0.attn.scaled\`"
  "llama3-8b --tp 2 --bug bwd-wrong-input|%l0.mlp.up = %l0.mlp.up[0:2,0:2,0:3] where the spec reads %l0.mlp.gate"
  "llama3-8b --tp 2 --bug wrong-vocab-offset|cause: \`embedding -> embed.out.part.bug\`"
  "llama3-8b --cp 2 --bug cp-rope-offset|place main.rope_cos.chunk.bug, main.rope_sin.chunk.bug"
  "llama3-8b --dp 2 --mb 2 --bug loss-scale-mb|cause: \`scale -> loss.inv_count.bug\`"
  "llama3-8b --cp 2 --dp 2 --bug loss-scale-cp|cause: \`scale -> loss.inv_count.bug\`"
  "llama3-8b --tp 2 --sp --dp 2 --bug sp-bwd-split|cause: \`slice -> d_l0.mlp.norm.bug\`"
)
for c in "${cases[@]}"; do
  args=${c%%|*}
  want=${c#*|}
  # shellcheck disable=SC2086
  "$parity" gen $args -o "$dir/b.pb" >/dev/null || { echo "FAIL: gen $args"; fail=1; continue; }
  out=$("$parity" verify "$dir/b.pb" --sarif "$dir/b.sarif" --junit "$dir/b.xml" 2>&1)
  if ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL: $args: no '$want' in:"; grep -E "cause:|place " <<<"$out"; fail=1
  fi
  op=$(grep -o 'cause: `[^`]*`' <<<"$out" | head -1 | sed 's/^cause: //')
  if [ -n "$op" ]; then
    grep -qF "Cause: $op" "$dir/b.sarif" || { echo "FAIL: $args: SARIF does not name $op"; fail=1; }
    xml_op=$(sed 's/>/\&gt;/g' <<<"$op")
    grep -qF "cause: $xml_op" "$dir/b.xml" || { echo "FAIL: $args: JUnit does not name $op"; fail=1; }
  fi
done
# A verified plan has no cause; the JSON result carries it.
"$parity" gen llama3-8b --tp 2 -o "$dir/ok.pb" >/dev/null || exit 1
if "$parity" verify "$dir/ok.pb" 2>&1 | grep -q "cause:"; then echo "FAIL: a cause on a VERIFIED plan"; fail=1; fi
"$parity" gen llama3-8b --tp 2 --bug tp-avg -o "$dir/b.pb" >/dev/null || exit 1
"$parity" verify "$dir/b.pb" --json "$dir/b.json" >/dev/null 2>&1
python3 - "$dir/b.json" <<'PY' || fail=1
import json, sys
c = json.load(open(sys.argv[1]))["counterexample"]["culprit"]
assert c["op"] == "allreduce -> l0.attn.out.bug", c
assert c["value"] == "l0.attn.out.bug" and c["rank"] == 0 and c["coords"] == {"dp": 0, "tp": 0}, c
assert "summed over tp" in c["why"] and c["place"] == [], c
PY
[ $fail -eq 0 ] && echo ok
exit $fail
