#!/usr/bin/env bash
# Input at the edges: each is read or refused with a short message, exit 2 on
# refusal. A misspelled subcommand, standard input as `-`, a UTF-8 byte order
# mark, an unwritable --cache, numbers out of range (no 300-digit bounds).
set -u
parity="$1"
case_file="$2"  # a text case that validates
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
expect() {  # expect RC SUBSTRING -- command...
  local want_rc=$1 want=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL: $*: exit $rc (want $want_rc), output lacks '$want':"; echo "$out" | head -5; fail=1
  fi
  if [ "$(wc -L <<<"$out")" -gt 400 ]; then echo "FAIL: $*: a line of $(wc -L <<<"$out") characters"; fail=1; fi
}
expect 2 "unknown subcommand 'frobnicate'" -- "$parity" frobnicate
expect 0 "well formed" -- bash -c "\"$parity\" validate - < \"$case_file\""
expect 2 "can be read once" -- "$parity" verify - -
{ printf '\xef\xbb\xbf'; cat "$case_file"; } >"$dir/bom.pbtxt"
expect 0 "well formed" -- "$parity" validate "$dir/bom.pbtxt"
touch "$dir/file"
expect 2 "cannot write there" -- "$parity" verify "$case_file" --cache "$dir/file/cache"
expect 2 "out of range" -- "$parity" verify "$case_file" --timeout-ms 1e400
expect 2 "at most 3e+09" -- "$parity" verify "$case_file" --time-limit 1e300
expect 2 "not in range 1 to 1048576" -- "$parity" gen llama3-8b --dp 99999999999999999999999 -o "$dir/x.pb"
expect 2 "not in range 0 to 3" -- "$parity" gen llama3-8b --zero 7 -o "$dir/x.pb"
[ $fail -eq 0 ] && echo ok
exit $fail
