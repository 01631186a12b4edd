#!/usr/bin/env bash
# Input at the edges: each is read or refused with a short message, exit 2 on
# refusal. A misspelled subcommand, standard input as `-`, a UTF-8 byte order
# mark, an unwritable --cache, numbers out of range (no 300-digit bounds).
set -u
parity="$1"
case_file="$2"  # a text case that validates
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/../lib/expect.sh"
# and no line of 400 characters or more (CLI11's own range error printed a bound of 300 digits)
short() {
  local out
  out=$("$@" 2>&1)
  if [ "$(wc -L <<<"$out")" -gt 400 ]; then echo "FAIL: $*: a line of $(wc -L <<<"$out") characters"; fail=1; fi
}
expect "misspelled subcommand" 2 "unknown subcommand 'frobnicate'" "$parity" frobnicate
expect "stdin as -" 0 "well formed" bash -c "\"$parity\" validate - < \"$case_file\""
expect "stdin twice" 2 "can be read once" "$parity" verify - -
{ printf '\xef\xbb\xbf'; cat "$case_file"; } >"$dir/bom.pbtxt"
expect "byte order mark" 0 "well formed" "$parity" validate "$dir/bom.pbtxt"
touch "$dir/file"
expect "unwritable --cache" 2 "cannot write there" "$parity" verify "$case_file" --cache "$dir/file/cache"
expect "--timeout-ms 1e400" 2 "out of range" "$parity" verify "$case_file" --timeout-ms 1e400
short "$parity" verify "$case_file" --timeout-ms 1e400
expect "--time-limit 1e300" 2 "at most 3e+09" "$parity" verify "$case_file" --time-limit 1e300
short "$parity" verify "$case_file" --time-limit 1e300
expect "--dp overflow" 2 "not in range 1 to 1048576" "$parity" gen llama3-8b --dp 99999999999999999999999 -o "$dir/x.pb"
short "$parity" gen llama3-8b --dp 99999999999999999999999 -o "$dir/x.pb"
expect "--zero 7" 2 "not in range 0 to 3" "$parity" gen llama3-8b --zero 7 -o "$dir/x.pb"
short "$parity" gen llama3-8b --zero 7 -o "$dir/x.pb"
exit $fail
