#!/usr/bin/env bash
# The explain prompt shows any value by its name, dotted names included
# (`show l1.attn.res`, `show main.l1.attn.res`), not only `PROGRAM.VALUE`.
set -u
parity="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
"$parity" gen llama3-8b --tp 2 --layers 2 --bug missing-allreduce@layer=1 -o "$dir/b.pb" >/dev/null || exit 1
out=$(printf 'show l1.attn.res\nshow main.l1.attn.res\nquit\n' | "$parity" explain "$dir/b.pb" --tui 2>&1)
n=$(grep -c "^plan  main: %l1.attn.res = " <<<"$out")
[ "$n" -eq 2 ] || { echo "FAIL: the plan's definition of l1.attn.res was shown $n times, want 2:"; echo "$out" | tail -20; fail=1; }
grep -q "^spec  %l1.attn.res = " <<<"$out" || { echo "FAIL: no spec definition of l1.attn.res"; fail=1; }
if grep -q "no value named" <<<"$out"; then echo "FAIL: a dotted name was not found"; fail=1; fi
[ $fail -eq 0 ] && echo ok
exit $fail
