#!/usr/bin/env bash
# Every malformed input under tests/malformed that is refused (exit 2) names
# its problems as compilers do, `FILE:LINE:COL: error: MESSAGE [check]`, so
# that editors and CI problem matchers can jump to them.
set -u
parity="$1"
dir="$2"
fail=0; n=0
for file in "$dir"/*; do
  case "$file" in *.expect) continue ;; esac
  hdr="$file"; [ -f "$file.expect" ] && hdr="$file.expect"
  want=$(sed -n 's/^\(#\|\/\/\) expect-exit: *//p' "$hdr" | head -1)
  [ "$want" = 2 ] || continue
  cmd=$(sed -n 's/^\(#\|\/\/\) expect-cmd: *//p' "$hdr" | head -1); cmd=${cmd:-validate}
  out=$(timeout 120 "$parity" $cmd "$file" 2>&1 >/dev/null); n=$((n + 1))
  first=$(head -1 <<<"$out")
  if ! grep -qE "^$(printf '%s' "$file" | sed 's/[.[\*^$/]/\\&/g'):[0-9]+:[0-9]+: error: .+ \[[a-z0-9-]+\]$" <<<"$first"; then
    echo "FAIL: parity $cmd $file: first line of stderr: $first"; fail=1
  fi
done
[ "$n" -gt 30 ] || { echo "FAIL: only $n refused inputs found in $dir"; fail=1; }
[ $fail -eq 0 ] && echo "ok: $n refused inputs"
exit $fail
