#!/usr/bin/env bash
# Installs the Debian 12 packages parity builds against. Idempotent: does nothing
# when every package is already installed, so repeated `make` calls stay fast.
set -euo pipefail
PKGS=(
  cmake ninja-build g++ make pkg-config ccache patch
  libz3-dev libcvc5-dev libgmp-dev
  protobuf-compiler libprotobuf-dev
  llvm-22-dev libmlir-22-dev mlir-22-tools
  libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libopenmpi-dev openmpi-bin
  libopenblas-dev libjemalloc-dev libreadline-dev
  clang-14 libclang-rt-14-dev
  libxml2-utils python3-venv chromium
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "parity: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
