#!/usr/bin/env bash
# The README's entry point on a fresh Debian 12 machine: installs the build
# tools and parity's Debian packages, then runs a Makefile target.
#   ./run.sh demo   verify a bundled plan, then reject a bundled buggy one
#   ./run.sh test   build and run every test
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/install-deps.sh
exec make "${1:-demo}"
