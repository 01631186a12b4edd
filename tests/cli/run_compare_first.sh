#!/usr/bin/env bash
# `run --compare` names the first value that differs in program order (the
# layer of the injected bug, not the worst value downstream of it), and
# `--failing-only` lists only the values over their tolerance.
set -u
parity="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
"$parity" gen llama3-8b --tp 2 --layers 4 --bug missing-allreduce@layer=2 -o "$dir/b.pb" >/dev/null || exit 1
out=$("$parity" run "$dir/b.pb" --compare --failing-only 2>&1); rc=$?
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, want 1"; fail=1; }
grep -q "first in program order l2\." <<<"$out" || { echo "FAIL: the first divergence is not in layer 2:"; tail -1 <<<"$out"; fail=1; }
grep -q "values within their tolerance not shown: --failing-only" <<<"$out" || { echo "FAIL: no --failing-only note"; fail=1; }
if grep -qE "  ok$" <<<"$out"; then echo "FAIL: --failing-only lists values within tolerance"; fail=1; fi
all=$("$parity" run "$dir/b.pb" --compare 2>&1)
grep -qE "  ok$" <<<"$all" || { echo "FAIL: without --failing-only no value is listed ok"; fail=1; }
[ $fail -eq 0 ] && echo ok
exit $fail
