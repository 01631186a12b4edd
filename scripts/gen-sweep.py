#!/usr/bin/env python3
"""Random combinations of `parity gen` options; every correct plan must verify
and its numbers must match the spec.

  scripts/gen-sweep.py [--n 60] [--seed 1] [--parity build/tools/parity] [--keep DIR]

Each combination draws a model, mesh sizes (dp, tp, pp, cp, ep), microbatches,
sequence parallelism, a ZeRO stage, balanced CP, a pipeline schedule, which
intermediates are placed (and whether inside the microbatch loop), the
training step (gradients, clipping or the full AdamW step) and a layer count. The generated plan (no bug
injected) goes through `parity verify` and `parity run --compare --dtype f64`.
Flagged: anything but VERIFIED (0) and MATCH (0), kept under --keep. With
--bugs each plan gets a random bug from `parity gen --list`; then a VERIFIED
(a missed bug), a timeout or a crash is flagged. A combination the generator
refuses (a bug it cannot inject there, say) is listed with its reason.
Exits 1 when anything is flagged.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=60)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--parity", default="build/tools/parity")
ap.add_argument("--keep", default="gen-sweep")
ap.add_argument("--bugs", action="store_true",
                help="inject a random bug the combination admits: it must not verify")
a = ap.parse_args()

bug_names = []
if a.bugs:
    listing = subprocess.run([a.parity, "gen", "--list"], capture_output=True, text=True).stdout
    in_bugs = False
    for line in listing.splitlines():
        if line.startswith("bugs"):
            in_bugs = True
        elif in_bugs and line.startswith("  ") and not line.startswith("   "):
            bug_names.append(line.split()[0])

rng = random.Random(a.seed)
models = ["llama3-8b", "deepseek-v3-16b", "deepseek-v3-671b", "gpt-small"]
case = os.path.join(a.keep, "case.pb")
os.makedirs(a.keep, exist_ok=True)
seen, flagged, refused = set(), 0, 0
for _ in range(a.n):
    model = rng.choice(models)
    sizes = {"--dp": rng.choice([1, 1, 2, 4]), "--tp": rng.choice([1, 2, 2, 4]),
             "--pp": rng.choice([1, 1, 2, 3]), "--cp": rng.choice([1, 1, 2]),
             "--mb": rng.choice([1, 2, 3, 4])}
    if model.startswith("deepseek"):
        sizes["--ep"] = rng.choice([1, 2])
    flags = []
    if sizes["--tp"] > 1 and rng.random() < 0.3:
        flags.append("--sp")
    if rng.random() < 0.3:
        flags += ["--zero", str(rng.choice([1, 2, 3]))]
    if sizes["--cp"] > 1 and rng.random() < 0.5:
        flags.append("--cp-balanced")
    vpp = 1
    if sizes["--pp"] > 1 and sizes["--mb"] > 1 and rng.random() < 0.5:
        schedule = rng.choice(["1f1b", "interleaved"])
        flags += ["--schedule", schedule]
        if schedule == "interleaved":
            vpp = 2
            flags += ["--vpp", "2"]
    if rng.random() < 0.3:
        flags += ["--marks", rng.choice(["forward", "io"])]
    if rng.random() < 0.2:
        flags.append("--no-loop-marks")
    if rng.random() < 0.3:
        flags += ["--step", rng.choice(["grads", "clip"])]
    layers = max(rng.choice([2, 4, 6]), sizes["--pp"] * vpp)
    args = [model] + [x for k, v in sizes.items() if v > 1 for x in (k, str(v))] + flags + ["--layers", str(layers)]
    key = " ".join(args)
    if key in seen:
        continue
    seen.add(key)
    if a.bugs:
        args += ["--bug", rng.choice(bug_names)]
        key = " ".join(args)
    g = subprocess.run([a.parity, "gen"] + args + ["-o", case], capture_output=True, text=True)
    if g.returncode != 0:
        refused += 1
        why = g.stderr.strip().splitlines()[-1] if g.stderr.strip() else "?"
        print(f"refused  {key}: {why}", flush=True)
        continue
    try:
        v = subprocess.run([a.parity, "verify", case], capture_output=True, text=True, timeout=300)
        r = subprocess.run([a.parity, "run", case, "--compare", "--dtype", "f64"], capture_output=True,
                           text=True, timeout=300)
        codes = (v.returncode, r.returncode)
        first = (v.stdout.splitlines() or [""])[0][:80]
    except subprocess.TimeoutExpired:
        codes, first = ("timeout", "timeout"), "timed out"
    # With a bug: VERIFIED is a missed bug, and anything but a verdict a crash;
    # the numeric run may match (a bug can vanish at the points it samples).
    bad = codes[0] in (0, "timeout") or codes[0] not in (1, 2, 3) if a.bugs else codes != (0, 0)
    if bad:
        flagged += 1
        shutil.copy(case, os.path.join(a.keep, f"flagged_{a.seed}_{flagged}.pb"))
    print(f"verify={codes[0]} run={codes[1]}  {key} | {first}{'  FLAGGED' if bad else ''}", flush=True)

print(f"\ncommand: scripts/gen-sweep.py --n {a.n} --seed {a.seed}")
print(f"combinations: {len(seen)}, refused by the generator: {refused}, flagged: {flagged}")
sys.exit(1 if flagged else 0)
