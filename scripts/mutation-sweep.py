#!/usr/bin/env python3
"""Random single-line mutations of a text case; each is verified and run.

  scripts/mutation-sweep.py CASE.pbtxt [--n 100] [--seed 1] [--parity build/tools/parity] [--keep DIR]

A mutation changes one line: an operand to the same value of a neighbouring
layer (`l3.x` -> `l2.x`) or to a nearby value, a float attribute by 0.1% or
2x, a mesh axis name, or a rank expression (`$tp*(V/tp)` -> `...+1` or `0`).
Each mutant runs through `parity verify` (with a time limit) and
`parity run --compare --dtype f64` (the numeric oracle). Flagged:

  SOUNDNESS  verify says VERIFIED (0) but the numeric run differs (1)
  HANG       verify did not end within 150 s
  CRASH      verify exited with a code other than 0-3
  SLOW       verify took over 60 s

--reduced verifies `parity reduce`'s instance of each mutant with
`--no-reduce` instead of the mutant itself: the reduction alone, without the
run of the plan as given that guards small plans. --kinds limits the
mutation kinds (`index` renames one size symbol of an attribute to another
size of the case, `$tp*(V/tp)` -> `$tp*(H/tp)`; `symbol` does it in a shape
or a placement region).

Prints one line per mutant, then the table of (verify, run) exit-code pairs.
Flagged mutants are kept under --keep. Exits 1 when anything is flagged.
"""
import argparse
import collections
import os
import random
import re
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("case")
ap.add_argument("--n", type=int, default=100)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--parity", default="build/tools/parity")
ap.add_argument("--keep", default="mutants")
ap.add_argument("--reduced", action="store_true")
ap.add_argument("--kinds", default="")
a = ap.parse_args()

rng = random.Random(a.seed)
lines = open(a.case).read().split("\n")
names = {m.group(1) for l in lines for m in [re.search(r'(?:results|name|operands): "([^"]+)"', l)] if m}
operand_lines = [i for i, l in enumerate(lines) if re.match(r'\s*operands: "', l)]

# (line index, kind, new line or None for "a nearby operand", chosen later)
sites = []
for i, l in enumerate(lines):
    m = re.match(r'\s*operands: "([^"]+)"$', l)
    if m:
        x = m.group(1)
        lm = re.search(r'(^|\.)l(\d+)\.', x)
        if lm:
            k = int(lm.group(2))
            for k2 in (k - 1, k + 1):
                y = x[:lm.start(2)] + str(k2) + x[lm.end(2):]
                if k2 >= 0 and y in names:
                    sites.append((i, "layer", l.replace(f'"{x}"', f'"{y}"')))
        sites.append((i, "operand", None))
    m = re.match(r'\s*f: (\S+)$', l)
    if m:
        v = float(m.group(1))
        sites.append((i, "float", l.replace(m.group(1), repr(v * 1.001 if v else 1e-3))))
        sites.append((i, "float2x", l.replace(m.group(1), repr(v * 2 if v else 1.0))))
    m = re.match(r'\s*s: "(tp|dp|pp|cp|ep)"$', l)
    if m:
        for ax in ("tp", "dp", "pp", "cp", "ep"):
            if ax != m.group(1):
                sites.append((i, "axis", l.replace(f'"{m.group(1)}"', f'"{ax}"')))
    m = re.match(r'\s*v: "(.*\$.*)"$', l)
    if m:
        sites.append((i, "expr+1", l.replace(m.group(1), m.group(1) + "+1")))
        sites.append((i, "expr0", l.replace(m.group(1), "0")))
# Size symbols of the case: its dims and mesh axes.
symbols = sorted({m.group(1) for i, l in enumerate(lines) for m in [re.match(r'\s*name: "([A-Za-z_]\w*)"$', l)]
                  if m and i + 1 < len(lines) and re.match(r'\s*(value|size): \d+$', lines[i + 1])})
for i, l in enumerate(lines):
    m = re.match(r'\s*(i|v): "(.*[A-Za-z].*)"$', l)
    if not m:
        continue
    kind = "index" if m.group(1) == "i" else "symbol"  # an attribute, or a shape or region
    text = m.group(2)
    used = sorted(set(re.findall(r'(?<![$\w])([A-Za-z_]\w*)', text)) & set(symbols))
    for x in used:
        for y in symbols:
            if y != x:
                e = re.sub(r'(?<![$\w])%s(?!\w)' % re.escape(x), y, text)
                sites.append((i, kind, l.replace(f'"{text}"', f'"{e}"')))
if a.kinds:
    sites = [s for s in sites if s[1] in a.kinds.split(",")]
if not sites:
    sys.exit(f"{a.case}: nothing to mutate (a text case is needed)")

os.makedirs(a.keep, exist_ok=True)
pairs = collections.Counter()
flagged = 0
for t in range(a.n):
    i, kind, new = rng.choice(sites)
    if kind == "operand":
        at = operand_lines.index(i)
        j = rng.choice(operand_lines[max(0, at - 40):at + 1])
        new = re.sub(r'"[^"]+"', '"%s"' % re.search(r'"([^"]+)"', lines[j]).group(1), lines[i])
    if new == lines[i]:
        continue
    mutant = lines[:]
    mutant[i] = new
    path = os.path.join(a.keep, f"mutant_{a.seed}_{t}.pbtxt")
    with open(path, "w") as f:
        f.write("\n".join(mutant))
    t0 = time.time()
    try:
        target, extra = path, []
        if a.reduced:
            target, extra = path + ".reduced.pb", ["--no-reduce"]
            subprocess.run([a.parity, "reduce", path, "-o", target], capture_output=True, timeout=150)
            if not os.path.exists(target):
                target, extra = path, []
        v = subprocess.run([a.parity, "verify", target, "--time-limit", "60"] + extra, capture_output=True, text=True,
                           timeout=150)
        vrc, head = v.returncode, (v.stdout + v.stderr).split("\n")[0][:100]
        if target != path:
            os.remove(target)
    except subprocess.TimeoutExpired:
        vrc, head = "hang", ""
    dt = time.time() - t0
    try:
        rrc = subprocess.run([a.parity, "run", path, "--compare", "--dtype", "f64"], capture_output=True,
                             timeout=150).returncode
    except subprocess.TimeoutExpired:
        rrc = "hang"
    flag = []
    if vrc == 0 and rrc == 1:
        flag.append("SOUNDNESS")
    if vrc == "hang":
        flag.append("HANG")
    elif vrc not in (0, 1, 2, 3):
        flag.append("CRASH")
    if dt > 60:
        flag.append("SLOW")
    pairs[(vrc, rrc)] += 1
    flagged += bool(flag)
    print(f"{t:4d} line {i + 1:6d} {kind:8s} verify={vrc} run={rrc} {dt:6.1f}s {' '.join(flag):10s}| "
          f"{lines[i].strip()} -> {new.strip()} | {head}", flush=True)
    if not flag:
        os.remove(path)

print(f"\ncommand: scripts/mutation-sweep.py {a.case} --n {a.n} --seed {a.seed}"
      + (" --reduced" if a.reduced else "") + (f" --kinds {a.kinds}" if a.kinds else ""))
print("| verify exit | run exit | mutants |")
print("|---|---|---|")
for (vrc, rrc), k in sorted(pairs.items(), key=str):
    print(f"| {vrc} | {rrc} | {k} |")
print(f"flagged: {flagged}" + (f" (kept under {a.keep})" if flagged else ""))
sys.exit(1 if flagged else 0)
