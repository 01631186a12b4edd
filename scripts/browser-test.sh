#!/usr/bin/env bash
# Browser test of the `parity explain` HTML report: Playwright (from PyPI, in
# BUILD/venv) drives Debian's headless Chromium by its executable path over the
# reports of a buggy and a correct bundled case, and saves screenshots. Then
# the report schema tests (JUnit XSD, SARIF 2.1.0 schema) run with the schemas
# required.
#
#   scripts/browser-test.sh PARITY_BINARY [OUT_DIR]   OUT_DIR: default BUILD/browser-test
#
# The venv comes from scripts/venv.sh (pinned requirements.txt); Chromium from
# scripts/install-deps.sh. Nothing is downloaded here but PyPI packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: scripts/browser-test.sh PARITY_BINARY [OUT_DIR]" >&2
  exit 2
fi
parity=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
build=$(dirname "$(dirname "$parity")")
bash "$root/scripts/venv.sh" "$build"
out=${2:-$build/browser-test}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Runs parity and checks its exit code (1 for the mismatch, 0 for the verified case).
expect() {
  local want=$1 rc=0
  shift
  "$parity" "$@" >/dev/null || rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "browser-test: 'parity $*' exited $rc, expected $want" >&2
    exit 1
  fi
}
cd "$root"
bug=corpus/cases/demo/mlp_tp2_missing_allreduce.pbtxt
good=corpus/cases/examples/mlp_tp2.pbtxt
expect 1 explain "$bug" -o "$out/mismatch.html"
expect 1 verify "$bug" --json "$out/mismatch.json"
expect 0 explain "$good" -o "$out/verified.html"
expect 0 verify "$good" --json "$out/verified.json"

PARITY_REPORT_DIR="$out" "$build/venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/browser"
echo "browser-test: screenshots in $out"

# The schema checks of tests/report_test.cpp, with the schemas required.
tests="$build/tests/parity_tests"
if [ -x "$tests" ]; then
  PARITY_BIN="$parity" PARITY_REQUIRE_SCHEMAS=1 "$tests" --gtest_filter='Report*' --gtest_brief=1
fi
