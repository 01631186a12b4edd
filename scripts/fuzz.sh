#!/usr/bin/env bash
# Runs the protobuf-reader fuzzer for a bounded time over the seed corpus.
# Usage: scripts/fuzz.sh FUZZER SECONDS
set -euo pipefail
fuzzer="$1"; secs="${2:-30}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$root"/tests/fuzz_seeds/* "$work"/ 2>/dev/null || true
cp "$root"/corpus/cases/examples/*.pbtxt "$work"/ 2>/dev/null || true
"$fuzzer" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 "$work" 2>&1 | tail -n 25
echo "fuzz: ${secs}s without a crash"
