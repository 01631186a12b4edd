#!/usr/bin/env bash
# `explain --from RESULT.json` presents a saved `verify --json` result without
# proving the plan again (a saved time it could not have measured comes
# back), refuses a result whose files changed, and reports a malformed one at
# its position.
set -u
parity="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
"$parity" gen llama3-8b --tp 2 --bug tp-avg -o "$dir/b.pb" >/dev/null || exit 1
"$parity" verify "$dir/b.pb" --json "$dir/r.json" > "$dir/verify.txt" 2>&1
[ $? -eq 1 ] || { echo "FAIL: verify did not report MISMATCH"; fail=1; }
# A time no run takes: only the saved result can show it.
python3 - "$dir/r.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["seconds"] = 4321.5
json.dump(j, open(sys.argv[1], "w"), indent=2)
PY
out=$(printf 'summary\ncex\nquit\n' | "$parity" explain --from "$dir/r.json" --tui 2>&1); rc=$?
[ $rc -eq 1 ] || { echo "FAIL: explain --from exit $rc, want 1"; fail=1; }
grep -q "4321.50 s" <<<"$out" || { echo "FAIL: explain --from did not present the saved result:"; head -3 <<<"$out"; fail=1; }
grep -q 'cause: `allreduce -> l0.attn.out.bug`' <<<"$out" || { echo "FAIL: no cause in the saved counterexample"; fail=1; }
"$parity" explain --from "$dir/r.json" -o "$dir/r.html" >/dev/null 2>&1
grep -q 'id="culprit"' "$dir/r.html" || { echo "FAIL: the HTML report has no cause"; fail=1; }
# The text summary is the saved one, line for line but the time (the
# witness inputs come back in name order: JSON objects keep none).
norm() { sed 's/; [0-9.]* s$//' "$1" | sort; }
"$parity" explain --from "$dir/r.json" > "$dir/explain.txt" 2>/dev/null
if ! diff <(norm "$dir/verify.txt") <(norm "$dir/explain.txt") >/dev/null; then
  echo "FAIL: explain --from differs from verify:"; diff <(norm "$dir/verify.txt") <(norm "$dir/explain.txt") | head; fail=1
fi
# Changed files: refused.
echo "" >> "$dir/b.pb"
err=$("$parity" explain --from "$dir/r.json" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "changed since" <<<"$err" || { echo "FAIL: a changed input was not refused (exit $rc): $err"; fail=1; }
# Malformed results: FILE:LINE:COL: error.
printf '{\n  "schema": "parity-verdict",\n  "version": 2,\n  "verdict": MISMATCH\n}\n' > "$dir/bad.json"
err=$("$parity" explain --from "$dir/bad.json" "$dir/b.pb" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qE "bad.json:4:[0-9]+: error: not a saved result" <<<"$err" || { echo "FAIL: malformed JSON (exit $rc): $err"; fail=1; }
printf '{"schema": "parity-verdict", "version": 1}\n' > "$dir/old.json"
err=$("$parity" explain --from "$dir/old.json" "$dir/b.pb" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "old.json:1:1: error: .*schema version 1" <<<"$err" || { echo "FAIL: old schema (exit $rc): $err"; fail=1; }
err=$("$parity" explain --from "$dir/missing.json" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "missing.json: error: cannot read" <<<"$err" || { echo "FAIL: missing result (exit $rc): $err"; fail=1; }
[ $fail -eq 0 ] && echo ok
exit $fail
