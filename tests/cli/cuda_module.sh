#!/bin/bash
# The CUDA backend is a module loaded on first use: the parity executable must
# not link cuBLAS or NCCL (their start-up cost every command paid), and
# --backend cuda must say why it cannot run when the module is missing.
# Usage: tests/cli/cuda_module.sh PARITY HAVE_CUDA(ON|OFF)
set -u
parity=$1
have_cuda=${2:-OFF}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/../lib/expect.sh"
if ldd "$parity" | grep -E 'libcublas|libnccl|libcudart'; then
  echo "FAIL the parity executable links CUDA libraries (above); they belong in the module"
  fail=1
else
  echo "ok   no CUDA library linked into parity"
fi
"$parity" gen llama3-8b --tp 2 --layers 1 -o "$tmp/c.pb" > /dev/null || exit 1
PARITY_CUDA_MODULE="$tmp/none.so" expect "a missing module is UNSUPPORTED, with where it looked" 3 \
  "CUDA module was not found (looked for: $tmp/none.so)" "$parity" run "$tmp/c.pb" --backend cuda
echo "not an ELF file" > "$tmp/bad.so"
if [ "$have_cuda" = ON ]; then
  PARITY_CUDA_MODULE="$tmp/bad.so" expect "an unloadable module is UNSUPPORTED with the loader's error" 3 \
    "could not be loaded; $tmp/bad.so" "$parity" run "$tmp/c.pb" --backend cuda
  # The module of this build loads (its symbols resolve against the executable);
  # without a GPU it reports no device.
  if ! nvidia-smi -L > /dev/null 2>&1; then
    expect "the built module loads and finds no device" 3 "no CUDA device" \
      "$parity" run "$tmp/c.pb" --backend cuda
  fi
fi
exit $fail
