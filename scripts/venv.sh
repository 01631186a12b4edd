#!/usr/bin/env bash
# Creates BUILD/venv with the pinned packages of requirements.txt (PyPI), for
# every Python-side test. Idempotent: reinstalls only when requirements.txt
# changed since the last install.
#   scripts/venv.sh BUILD      prints nothing on success; BUILD/venv/bin/python is the venv
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: scripts/venv.sh BUILD}
venv="$build/venv"
req="$root/requirements.txt"
stamp="$venv/.parity-requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && exit 0
echo "parity: creating $venv from requirements.txt"
rm -rf "$venv"
# Debian's own Python (python3-venv), not one earlier on PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
"$py" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$req"
echo "$want" >"$stamp"
