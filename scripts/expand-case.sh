#!/usr/bin/env bash
# Expands a corpus manifest (NAME.gen) into the case it stands for:
#   scripts/expand-case.sh PARITY MANIFEST OUT.pbtxt
# A manifest is the case's header comment lines, one of them either
#   # gen: ARGS                (the `parity gen` command line, without -o), or
#   # from: REL                (another case, corpus/cases/REL, a .pbtxt: its twin)
# followed, optionally, by a unified diff from that base to the case (the
# edits that make it a case: an injected bug, a renamed value).
# The case is the header lines, then the base (its own header lines dropped)
# with the diff applied; line numbers in the case's expected messages count
# from the top of that file.
set -euo pipefail
parity=$1 manifest=$2 out=$3
args=$(awk '!/^#/ { exit } sub(/^# gen: */, "") { print; exit }' "$manifest")
from=$(awk '!/^#/ { exit } sub(/^# from: */, "") { print; exit }' "$manifest")
if [ -z "$args" ] && [ -z "$from" ]; then
  echo "$manifest:1:1: error: a manifest needs a '# gen: ARGS' or '# from: CASE' header line" >&2
  exit 2
fi
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$args" ]; then
  # shellcheck disable=SC2086  # ARGS is a command line, split on purpose
  "$parity" gen $args -o "$tmp/base.pbtxt" >/dev/null
  what="parity gen $args"
else
  cases="$(cd "$(dirname "$0")/.." && pwd)/corpus/cases"
  if [ -f "$cases/$from" ]; then
    cp "$cases/$from" "$tmp/base.pbtxt"
  else  # the twin is a manifest itself
    bash "$0" "$parity" "$cases/${from%.pbtxt}.gen" "$tmp/base.pbtxt"
  fi
  what=$from
fi
awk 'f || !/^#/ { f = 1; print }' "$tmp/base.pbtxt" >"$tmp/body.pbtxt"
if grep -q '^@@ ' "$manifest"; then
  # patch skips the header comments before the diff.
  if ! patch --quiet --force --no-backup-if-mismatch -o "$tmp/patched.pbtxt" "$tmp/body.pbtxt" <"$manifest" >"$tmp/patch.log" 2>&1; then
    echo "$manifest:1:1: error: its diff does not apply to '$what' (it changed?):" >&2
    cat "$tmp/patch.log" >&2
    exit 2
  fi
  mv "$tmp/patched.pbtxt" "$tmp/body.pbtxt"
fi
{ awk '!/^#/ { exit } { print }' "$manifest"; cat "$tmp/body.pbtxt"; } >"$out.tmp"
mv "$out.tmp" "$out"
