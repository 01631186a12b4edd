#!/usr/bin/env bash
# Browser test of the `parity explain` HTML report: Playwright (npm package
# playwright-core) drives Debian's headless Chromium over the reports of a
# buggy and a correct bundled case, and saves screenshots. With the npm
# packages in place it also runs the report schema tests (JUnit XSD, SARIF
# 2.1.0 schema) with the schemas required.
#
#   scripts/browser-test.sh PARITY_BINARY [OUT_DIR]   OUT_DIR: default BUILD/browser-test
#   scripts/browser-test.sh --install-only            only Chromium and the npm packages
#
# Installs what is missing: Debian's chromium (and Node.js if absent), and
# tests/browser/node_modules from package-lock.json (npm ci, skipped when the
# lock file has not changed since the last install).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
web="$root/tests/browser"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_install() {
  echo "browser-test: installing $*"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "$@"
}

[ -x /usr/bin/chromium ] || apt_install chromium
command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  # Debian 12's Node.js is 18; playwright-core needs 20. The npm registry's
  # `node` package brings a Node 20 binary into a private prefix.
  prefix="$root/build-node"
  if [ ! -x "$prefix/node_modules/.bin/node" ]; then
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error node@20
  fi
  export PATH="$prefix/node_modules/.bin:$PATH"
  major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -lt 20 ]; then
    echo "browser-test: Node.js $(node --version) is too old for playwright-core (needs 20 or newer)" >&2
    exit 1
  fi
fi

stamp="$web/node_modules/.parity-lock.sha256"
want=$(sha256sum "$web/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi
[ "${1:-}" = "--install-only" ] && exit 0

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: scripts/browser-test.sh PARITY_BINARY [OUT_DIR] | --install-only" >&2
  exit 2
fi
parity=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=${2:-$(dirname "$(dirname "$parity")")/browser-test}
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

PARITY_REPORT_DIR="$out" node --test "$web/explain.test.mjs"
echo "browser-test: screenshots in $out"

# The schema checks of tests/report_test.cpp, now that the SARIF schema package is installed.
tests="$(dirname "$(dirname "$parity")")/tests/parity_tests"
if [ -x "$tests" ]; then
  PARITY_BIN="$parity" PARITY_REQUIRE_SCHEMAS=1 "$tests" --gtest_filter='Report*' --gtest_brief=1
fi
