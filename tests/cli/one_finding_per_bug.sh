#!/usr/bin/env bash
# One injected bug is one finding: one SARIF error and one JUnit failure, the
# other failing placements (its consequences) listed inside it, for bugs of
# several kinds in a 16-layer plan.
set -u
parity="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
for b in missing-allreduce@layer=4 missing-grad-allreduce tp-avg loss-scale-mb; do
  "$parity" gen llama3-405b --dp 2 --tp 2 --pp 2 --mb 2 --layers 16 --bug "$b" -o "$dir/b.pb" >/dev/null || exit 1
  "$parity" verify "$dir/b.pb" --sarif "$dir/b.sarif" --junit "$dir/b.xml" >/dev/null 2>&1; rc=$?
  errors=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]['results']; print(sum(x.get('level')=='error' for x in r))" "$dir/b.sarif")
  related=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]['results']; print(max(len(x.get('relatedLocations',[])) for x in r))" "$dir/b.sarif")
  failures=$(grep -c "<failure " "$dir/b.xml")
  if [ "$rc" -ne 1 ] || [ "$errors" -ne 1 ] || [ "$failures" -ne 1 ] || [ "$related" -lt 2 ]; then
    echo "FAIL: $b: exit $rc, $errors SARIF errors, $failures JUnit failures, $related related locations"; fail=1
  fi
done
[ $fail -eq 0 ] && echo ok
exit $fail
