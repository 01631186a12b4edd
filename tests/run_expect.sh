#!/usr/bin/env bash
# Runs parity on one file and checks the expectations in its header lines:
#   # expect-cmd: validate            (default: validate; e.g. `verify`)
#   # expect-exit: 2
#   # expect-error: text that must appear in the output (may repeat)
# MLIR files write the same lines as `// expect-...:`; `{dir}` in expect-cmd
# is the file's directory (for `verify {dir}/spec.mlir` + this file).
set -u
parity="$1"; file="$2"
# Binary inputs keep their header lines in FILE.expect.
hdr="$file"; [ -f "$file.expect" ] && hdr="$file.expect"
cmd=$(sed -n 's/^\(#\|\/\/\) expect-cmd: *//p' "$hdr" | head -1); cmd=${cmd:-validate}; cmd=${cmd//\{dir\}/$(dirname "$file")}
want=$(sed -n 's/^\(#\|\/\/\) expect-exit: *//p' "$hdr" | head -1)
if [ -z "$want" ]; then echo "missing '# expect-exit:' in $file"; exit 1; fi
# A `# slow:` case has ctest's 300 s; the others 120 s.
limit=120; grep -q "^# slow:" "$hdr" && limit=280
out=$(timeout $limit "$parity" $cmd "$file" 2>&1); rc=$?
echo "$out"
if [ "$rc" -ne "$want" ]; then echo "FAIL: exit $rc, expected $want"; exit 1; fi
while IFS= read -r needle; do
  [ -z "$needle" ] && continue
  if ! grep -qF -- "$needle" <<<"$out"; then echo "FAIL: output lacks '$needle'"; exit 1; fi
done < <(sed -n 's/^\(#\|\/\/\) expect-error: *//p' "$hdr")
echo "ok"
