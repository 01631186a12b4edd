#!/usr/bin/env bash
# On a terminal (a pty from script(1)) the explain prompt is GNU readline: Tab
# completes commands and value names (dotted ones too) and the history is kept
# in ~/.parity_history.
set -u
parity="$1"
case_file="$2"
source "$(dirname "$0")/../lib/expect.sh"
pty_setup
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
out=$(printf 'sum\t\nshow tp.o_p\t\nquit\n' | HOME="$home" TERM=xterm timeout 60 \
  script -qec "'$parity' explain '$case_file' --tui" /dev/null 2>&1 | tr -d '\r')
grep -qa "^MISMATCH .*failed" <<<"$(sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g' <<<"$out")" ||
  { echo "FAIL: 'sum<Tab>' did not complete to summary"; fail=1; }
grep -qa "plan  tp: %o_part = matmul" <<<"$out" || { echo "FAIL: 'show tp.o_p<Tab>' did not complete to tp.o_part"; fail=1; }
grep -qx "show tp.o_part" "$home/.parity_history" 2>/dev/null || { echo "FAIL: no history in ~/.parity_history"; fail=1; }
[ $fail -eq 0 ] && echo ok || echo "$out" | tail -12
exit $fail
