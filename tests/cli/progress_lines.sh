#!/usr/bin/env bash
# validate, gen, run and explain -o draw verify's progress line on a terminal
# (a pty from script(1)): the phase, erased before the result; none under CI.
set -u
parity="$1"
case_file="$2"
source "$(dirname "$0")/../lib/expect.sh"
pty_setup
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
check() {  # check PHASES RESULT -- command...   (PHASES: an extended regex; a fast run shows its first ones only)
  local phase=$1 result=$2; shift 3
  local out
  out=$(env -u CI TERM=xterm PARITY_PROGRESS_AFTER=0 script -qec "$*" /dev/null 2>&1)
  if ! grep -qE ": ($phase)" <<<"$out"; then echo "FAIL: $*: no '$phase' phase on the terminal"; fail=1; fi
  local erase result_at
  erase=$(grep -bo $'\r\033\[K' <<<"$out" | tail -1 | cut -d: -f1)
  result_at=$(grep -bo -- "$result" <<<"$out" | head -1 | cut -d: -f1)
  if [ -z "$erase" ] || [ -z "$result_at" ] || [ "$erase" -gt "$result_at" ]; then
    echo "FAIL: $*: the line is not erased before '$result'"; fail=1
  fi
  out=$(env CI=1 TERM=xterm PARITY_PROGRESS_AFTER=0 script -qec "$*" /dev/null 2>&1)
  if grep -q $'\033\[K' <<<"$out"; then echo "FAIL: $*: a progress line under CI"; fail=1; fi
}
check "reading|validating" "OK:" -- "$parity" validate "$case_file"
check "validating|generating|writing" "wrote" -- "$parity" gen llama3-8b --tp 2 --layers 2 -o "$dir/g.pb"
check "validating|reading|running the plan" "RAN:" -- "$parity" run "$dir/g.pb"
check "validating|reducing|writing the HTML report" "report written" -- "$parity" explain "$case_file" -o "$dir/r.html"
[ $fail -eq 0 ] && echo ok
exit $fail
