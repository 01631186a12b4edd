#!/usr/bin/env bash
# The JSON report (schema 2) gives a counterexample's rank as an integer of
# the case as given, its coordinates as an object, and the text beside them:
# a bug injected on rank 13 of dp 8 x tp 2 is found on rank 13 (dp=6, tp=1),
# though the reduced instance checked has 4 ranks only.
set -u
parity="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$parity" gen llama3-8b --dp 8 --tp 2 --layers 4 --bug constant-changed@rank=13 -o "$dir/b.pb" >/dev/null || exit 1
"$parity" verify "$dir/b.pb" --json "$dir/r.json" >/dev/null
python3 - "$dir/r.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c = j["counterexample"]
ok = (j["version"] == 2 and c["rank"] == 13 and c["coords"] == {"dp": 6, "tp": 1} and c["rank_text"].startswith("13 (dp=6,tp=1)")
      and all(isinstance(s["rank"], int) and isinstance(s["coords"], dict) for s in c["lineage"])
      and all(isinstance(d["line"], int) for d in j["diagnostics"]))
print("ok" if ok else "FAIL: " + json.dumps({k: c[k] for k in ("rank", "coords", "rank_text")}))
sys.exit(0 if ok else 1)
PY
