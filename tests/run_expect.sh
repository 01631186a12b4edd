#!/usr/bin/env bash
# Runs parity on one file and checks the expectations in its header lines:
#   # expect-cmd: validate            (default: validate; e.g. `verify`)
#   # expect-exit: 2
#   # expect-error: text that must appear in the output (may repeat)
# MLIR files write the same lines as `// expect-...:`; `{dir}` in expect-cmd
# is the file's directory (for `verify {dir}/spec.mlir` + this file).
#
# With --known-gap the file is a known gap (corpus/known-gaps/): its headers
# give the right verdict, which parity does not reach today. The test passes
# while parity still answers otherwise (any verdict, or its time limit), and
# fails once parity gets it right, saying to move the file into corpus/cases/.
set -u
gap=0
if [ "$1" = "--known-gap" ]; then gap=1; shift; fi
parity="$1"; file="$2"
# Binary inputs keep their header lines in FILE.expect.
hdr="$file"; [ -f "$file.expect" ] && hdr="$file.expect"
cmd=$(sed -n 's/^\(#\|\/\/\) expect-cmd: *//p' "$hdr" | head -1); cmd=${cmd:-validate}; cmd=${cmd//\{dir\}/$(dirname "$file")}
want=$(sed -n 's/^\(#\|\/\/\) expect-exit: *//p' "$hdr" | head -1)
if [ -z "$want" ]; then echo "missing '# expect-exit:' in $file"; exit 1; fi
# A `# slow:` case has ctest's 300 s; the others 120 s.
limit=120; grep -q "^# slow:" "$hdr" && limit=280
[ $gap -eq 1 ] && limit=60
out=$(timeout $limit "$parity" $cmd "$file" 2>&1); rc=$?
echo "$out"
right=1 lacks=""
[ "$rc" -ne "$want" ] && right=0
while IFS= read -r needle; do
  [ -z "$needle" ] && continue
  grep -qF -- "$needle" <<<"$out" || { right=0; lacks=$needle; }
done < <(sed -n 's/^\(#\|\/\/\) expect-error: *//p' "$hdr")
if [ $gap -eq 1 ]; then
  if [ $right -eq 1 ]; then
    echo "FAIL: known gap closed: parity now gives the right verdict (exit $rc) for $file;"
    echo "      move it into corpus/cases/<feature>/ and off corpus/known-gaps/README.md"
    exit 1
  fi
  # Still a gap: a verdict (0-3) or the time limit, never a crash.
  case $rc in 0|1|2|3|124) echo "ok (known gap: exit $rc, right is $want)"; exit 0 ;; esac
  echo "FAIL: exit $rc (a crash?) on a known gap"; exit 1
fi
if [ "$rc" -ne "$want" ]; then echo "FAIL: exit $rc, expected $want"; exit 1; fi
[ $right -eq 1 ] || { echo "FAIL: output lacks '$lacks'"; exit 1; }
echo "ok"
