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

--kinds reduction selects the mutations aimed at the reduction, each right at
small or reduced sizes but possibly wrong as given (names in REDUCTION_KINDS):
  region_mod   `$a*(E)` offset (region or attribute) -> `$a*((E)%K)`, K in 3..7
  region_lit   a size symbol inside `$a*(E)` -> a literal (its reduced value, 2, 3, 4, 6)
  offset_pm    `$a*(E)` -> `...+1`, `-1`, `+$a/3`, `+$a*(a-2)/a`, `+(a-2)`, `+(X-X_reduced)`
  size_sym     a region size -> another size symbol, or a literal (reduced value, 2, 3, 4, 6)
  attr_dim     a dim attribute (slice offset/size, shape entries) -> its reduced value as a
               literal, `(E)%K`, another size symbol, or one symbol renamed
  float_size   a `factor`/`value` float -> 1/q, q, 1/sqrt(q) (q a size as given, 2, 3, 4, 6)
  axes         one axis of a collective's axes -> another mesh axis
  groups       explicit groups permuted (at every site listing the same groups)
  loop_count   a loop count -> a literal (its reduced value, 2, 3, as given +-1)
A mutant is "aimed" when it equals the original on the reduced instance's sizes
(those of `parity reduce CASE`) and differs as given; --aimed-frac prefers those.
--aimed2 asks the same at the second look's sizes too (`parity reduce --second-look`).
--truth also verifies each mutant with --no-reduce (the plan as given); a
verify VERIFIED with a --no-reduce MISMATCH/INVALID or a numeric difference is
SOUNDNESS. --also-reduced records the verdict of `parity reduce`'s instance
alone (REDUCED_HID when it is VERIFIED and the truth differs: caught only by
the second look). Mutants invalid both with and without reduction are counted
and skipped. --log writes one JSON object per mutant.

Prints one line per mutant, then the table of (verify, run) exit-code pairs.
Flagged mutants are kept under --keep. Exits 1 when anything is flagged.
"""
import argparse
import collections
import itertools
import json
import math
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
ap.add_argument("--truth", action="store_true")
ap.add_argument("--also-reduced", action="store_true")
ap.add_argument("--truth-if-verified", action="store_true", help="--truth only for mutants verify calls VERIFIED")
ap.add_argument("--threads", type=int, default=0)
ap.add_argument("--timeout", type=float, default=150)
ap.add_argument("--per-kind", type=int, default=0)
ap.add_argument("--aimed-frac", type=float, default=0.7)
ap.add_argument("--aimed2", action="store_true",
                help="aimed also needs the mutant equal to the original at the second look's sizes")
ap.add_argument("--log", default="")
ap.add_argument("--tag", default="")
ap.add_argument("--dry", action="store_true", help="print the sites per kind (aimed/all) and exit")
a = ap.parse_args()
REDUCTION_KINDS = ["region_mod", "region_lit", "offset_pm", "size_sym", "attr_dim", "float_size", "axes", "groups",
                   "loop_count"]
if a.kinds:
    a.kinds = ",".join(",".join(REDUCTION_KINDS) if k == "reduction" else k for k in a.kinds.split(","))

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
aimed = set()  # indices into sites


def plan_context(lines):
    """Per line: (block stack, last attribute name) and the plan's sizes as given."""
    stack, attr, ctx = [], None, []
    for l in lines:
        t = l.strip()
        if t.endswith("{"):
            stack.append(t[:-1].strip())
        elif t == "}":
            if stack:
                stack.pop()
        else:
            m = re.match(r'name: "([^"]*)"$', t)
            if m and stack and stack[-1] == "attrs":
                attr = m.group(1)
        ctx.append((tuple(stack), attr))
    return ctx


def plan_sizes(lines, ctx):
    env, axes = {}, []
    for i, l in enumerate(lines[:-1]):
        st = ctx[i][0]
        m = re.match(r'\s*name: "([A-Za-z_]\w*)"$', l)
        n = re.match(r'\s*(value|size): (\d+)$', lines[i + 1])
        if m and n and len(st) == 2 and st[0] == "plan" and st[1] in ("dims", "mesh"):
            env[m.group(1)] = int(n.group(2))
            if st[1] == "mesh":
                axes.append(m.group(1))
    return env, axes


def loop_vars(lines, ctx):
    out = {}
    for i, l in enumerate(lines):
        if ctx[i][1] == "var" and re.match(r'\s*s: "', l):
            for j in range(i, max(0, i - 12), -1):
                m = re.match(r'\s*i: "([^"]+)"$', lines[j])
                if m and ctx[j][1] == "count":
                    out[re.search(r's: "([^"]+)"', l).group(1)] = m.group(1)
                    break
    return out


def ev(expr, env, coords=None):
    e = expr
    for c, v in (coords or {}).items():
        e = re.sub(r'\$%s(?!\w)' % re.escape(c), str(v), e)
    if "$" in e:
        return None
    e = re.sub(r'(?<![\w$])([A-Za-z_]\w*)', lambda m: str(env[m.group(1)]) if m.group(1) in env else m.group(1), e)
    if re.search(r'[A-Za-z_]', e):
        return None
    try:
        return eval(e.replace("/", "//"), {"__builtins__": {}})
    except Exception:
        return None


def ev_all(expr, env, lv):
    """The values of expr over every coordinate and loop index it reads (a tuple), or None."""
    cs = sorted(set(re.findall(r'\$(\w+)', expr)))
    ranges = []
    for c in cs:
        n = env.get(c)
        if n is None and c in lv:
            n = ev(lv[c], env)
        if n is None:
            return None
        ranges.append(range(min(n, 64)))
    out = []
    for vals in itertools.product(*ranges):
        out.append(ev(expr, env, dict(zip(cs, vals))))
    return tuple(out)


def reduction_sites(lines):
    ctx = plan_context(lines)
    given, axes = plan_sizes(lines, ctx)
    red = dict(given)
    os.makedirs(a.keep, exist_ok=True)
    tmp = os.path.join(a.keep, f".reduced_base_{os.getpid()}.pbtxt")
    subprocess.run([a.parity, "reduce", a.case, "-o", tmp], capture_output=True, timeout=300)
    if os.path.exists(tmp):
        rl = open(tmp).read().split("\n")
        red.update(plan_sizes(rl, plan_context(rl))[0])
        os.remove(tmp)
    red2 = dict(given)  # the second look's instance: `parity reduce --second-look`
    subprocess.run([a.parity, "reduce", a.case, "--second-look", "-o", tmp], capture_output=True, timeout=300)
    if os.path.exists(tmp):
        rl = open(tmp).read().split("\n")
        red2.update(plan_sizes(rl, plan_context(rl))[0])
        os.remove(tmp)
    lv = loop_vars(lines, ctx)
    syms = sorted(given)
    out = []  # (line, kind, new line or {line: new line}, aimed)

    def add(i, kind, old, new, aim=None):
        if new == old:
            return
        if aim is None:
            aim = (ev_all(new, red, lv) == ev_all(old, red, lv) is not None
                   and ev_all(new, given, lv) != ev_all(old, given, lv))
            if a.aimed2:
                aim = aim and ev_all(new, red2, lv) == ev_all(old, red2, lv)
        out.append((i, kind, lines[i].replace(f'"{old}"', f'"{new}"'), bool(aim)))

    for i, l in enumerate(lines):
        st, attr = ctx[i]
        if not st or st[0] != "plan":
            continue
        m = re.match(r'\s*(offset|size|i|v|f): "?([^"]*)"?$', l)
        if not m:
            continue
        key, text = m.groups()
        region = st[-1] == "region"
        in_attr = st[-1] == "attrs" or (len(st) > 1 and st[-2] == "attrs")
        if key == "f":
            if in_attr and st[-1] == "attrs" and attr in ("factor", "value"):
                v = float(text)
                qs = sorted({x for x in given.values() if x > 1} | {2, 3, 4, 6})
                for q in qs:
                    for nv, lab in ((1.0 / q, "1/q"), (float(q), "q"), (1.0 / math.sqrt(q), "1/sqrt(q)")):
                        if abs(nv - v) > 1e-12 * max(1, abs(v)):
                            aim = q in red.values() and q not in given.values() or q in (2, 3, 4, 6)
                            out.append((i, "float_size", l.replace(text, repr(nv)), aim))
            continue
        if "$" in text and (region and key == "offset" or key == "i" and in_attr):
            terms = []  # (start, end, coordinate, inner expression) of each `$c*(E)`
            for mm in re.finditer(r'\$(\w+)\*\(', text):
                depth, j = 1, mm.end()
                while j < len(text) and depth:
                    depth += {"(": 1, ")": -1}.get(text[j], 0)
                    j += 1
                if depth == 0:
                    terms.append((mm.start(), j, mm.group(1), text[mm.end():j - 1]))
            for (b, en, c, e) in terms:
                ks = set(range(3, 8))
                for env_ in (red, red2):
                    v_ = ev(e, env_)
                    if v_:
                        ks.add(v_ + 1)
                v_ = ev(e, given)
                if v_ and v_ > 2:
                    ks.add(v_ - 1)
                for k in sorted(ks):
                    add(i, "region_mod", text, f"{text[:b]}${c}*(({e})%{k}){text[en:]}")
                for x in sorted(set(re.findall(r'(?<![\w$])([A-Za-z_]\w*)', e)) & set(syms)):
                    for k in sorted({red[x], 2, 3, 4, 6} - {given[x]}):
                        e2 = re.sub(r'(?<![$\w])%s(?!\w)' % x, str(k), e)
                        add(i, "region_lit", text, f"{text[:b]}${c}*({e2}){text[en:]}")
            if terms:
                for x in sorted(set(re.findall(r'(?<![\w$])([A-Za-z_]\w*)', text)) & set(syms)):
                    if red[x] != given[x]:
                        add(i, "offset_pm", text, f"{text}+({x}-{red[x]})")
            cs = sorted(set(re.findall(r'\$(\w+)', text)))
            for suf in ("+1", "-1"):
                add(i, "offset_pm", text, text + suf)
            for c in cs:
                if c in given:
                    add(i, "offset_pm", text, f"{text}+${c}/3")
                    add(i, "offset_pm", text, f"{text}+${c}*({c}-2)/{c}")
                    add(i, "offset_pm", text, f"{text}+({c}-2)")
            continue
        if "$" in text or not re.search(r'[A-Za-z]', text):
            continue
        if region and key == "size":
            for y in syms:
                add(i, "size_sym", text, y)
            for k in sorted({ev(text, red, {}) or 0, 2, 3, 4, 6} - {ev(text, given, {}), 0}):
                add(i, "size_sym", text, str(k))
            continue
        if key == "i" and st[-1] == "attrs" and attr == "count":
            for k in sorted({ev(text, red) or 0, 2, 3, (ev(text, given) or 0) - 1, (ev(text, given) or 0) + 1}
                            - {ev(text, given), 0, -1}):
                add(i, "loop_count", text, str(k))
            continue
        if key == "v" and st[-1] == "strings" and in_attr:
            if text in axes:
                for y in axes:
                    add(i, "axes", text, y, aim=True)
            continue
        if key == "i" and st[-1] == "attrs" or key == "v" and st[-1] == "ints" and in_attr:
            rv = ev(text, red)
            if rv is not None and rv > 0:
                add(i, "attr_dim", text, str(rv))
            for k in range(3, 7):
                add(i, "attr_dim", text, f"({text})%{k}")
            for y in syms:
                add(i, "attr_dim", text, y)
            for x in sorted(set(re.findall(r'(?<![\w$])([A-Za-z_]\w*)', text)) & set(syms)):
                for y in syms:
                    if y != x:
                        add(i, "attr_dim", text, re.sub(r'(?<![$\w])%s(?!\w)' % x, y, text))
    # explicit groups: permuted at every site that lists the same groups
    blocks = collections.defaultdict(list)
    i = 0
    while i < len(lines):
        if lines[i].strip() == "groups {":
            depth, j, groups, cur = 0, i, [], None
            while True:
                t = lines[j].strip()
                if t.endswith("{"):
                    depth += 1
                    if t == "group {":
                        cur = []
                elif t == "}":
                    depth -= 1
                    if depth == 1 and cur is not None:
                        groups.append(cur)
                        cur = None
                    if depth == 0:
                        break
                else:
                    m = re.match(r'ranks: (\d+)$', t)
                    if m and cur is not None:
                        cur.append((j, int(m.group(1))))
                j += 1
            blocks[tuple(tuple(r for _, r in g) for g in groups)].append(groups)
            i = j
        i += 1
    for key, sites_ in blocks.items():
        g = [list(x) for x in key]
        perms = []
        if len(g) >= 2 and len(g[0]) >= 2:
            p = [x[:] for x in g]; p[0][1], p[1][1] = p[1][1], p[0][1]; perms.append(p)
            p = [x[:] for x in g]; p[0][-1], p[-1][-1] = p[-1][-1], p[0][-1]; perms.append(p)
            p = [x[:] for x in g]; sec = [x[1] for x in g]; sec = sec[1:] + sec[:1]
            for x, r in zip(p, sec):
                x[1] = r
            perms.append(p)
        if len(g) >= 1 and len(g[0]) >= 2:
            p = [x[:] for x in g]; p[0] = p[0][::-1]; perms.append(p)
        for p in perms:
            for only_first in (False, True):
                edit = {}
                for groups in (sites_[:1] if only_first else sites_):
                    for grp, newgrp in zip(groups, p):
                        for (j, r), nr in zip(grp, newgrp):
                            if r != nr:
                                edit[j] = lines[j].replace(f"ranks: {r}", f"ranks: {nr}")
                if edit:
                    out.append((min(edit), "groups", edit, True))
    return out


if a.kinds and set(a.kinds.split(",")) & set(REDUCTION_KINDS):
    for (i, kind, new, aim) in reduction_sites(lines):
        if aim:
            aimed.add(len(sites))
        sites.append((i, kind, new))
if a.kinds:
    keep = [k for k, s_ in enumerate(sites) if s_[1] in a.kinds.split(",")]
    aimed = {keep.index(k) for k in aimed if k in keep}
    sites = [sites[k] for k in keep]
if not sites:
    sys.exit(f"{a.case}: nothing to mutate (a text case is needed)")

if a.dry:
    for kind in sorted({s_[1] for s_ in sites}):
        idx = [k for k, s_ in enumerate(sites) if s_[1] == kind]
        print(f"{kind:10s} {sum(k in aimed for k in idx):5d} aimed / {len(idx):5d}")
        for k in [k for k in idx if k in aimed][:3]:
            i, _, new = sites[k]
            print("    ", lines[i].strip() if not isinstance(new, dict) else "", "->",
                  new.strip() if not isinstance(new, dict) else new)
    sys.exit(0)
os.makedirs(a.keep, exist_ok=True)
pairs = collections.Counter()
flagged = 0
order = None
if a.per_kind:
    order = []
    for kind in sorted({s_[1] for s_ in sites}):
        idx = [k for k, s_ in enumerate(sites) if s_[1] == kind]
        ai = [k for k in idx if k in aimed]
        ni = [k for k in idx if k not in aimed]
        na = min(len(ai), max(round(a.per_kind * a.aimed_frac), a.per_kind - len(ni)))
        pick = rng.sample(ai, na) + rng.sample(ni, min(len(ni), a.per_kind - na))
        order += pick
    rng.shuffle(order)
    a.n = len(order)
logf = open(a.log, "a") if a.log else None
threads = ["--threads", str(a.threads)] if a.threads else []
for t in range(a.n):
    si = order[t] if order is not None else rng.randrange(len(sites))
    i, kind, new = sites[si]
    if kind == "operand":
        at = operand_lines.index(i)
        j = rng.choice(operand_lines[max(0, at - 40):at + 1])
        new = re.sub(r'"[^"]+"', '"%s"' % re.search(r'"([^"]+)"', lines[j]).group(1), lines[i])
    edit = new if isinstance(new, dict) else {i: new}
    if all(lines[j] == v for j, v in edit.items()):
        continue
    mutant = lines[:]
    for j, v in edit.items():
        mutant[j] = v
    path = os.path.join(a.keep, f"mutant_{a.tag}{a.seed}_{t}.pbtxt")
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
        v = subprocess.run([a.parity, "verify", target, "--time-limit", "60"] + threads + extra, capture_output=True,
                           text=True, timeout=a.timeout)
        vrc, head = v.returncode, (v.stdout + v.stderr).split("\n")[0][:100]
        if target != path:
            os.remove(target)
    except subprocess.TimeoutExpired:
        vrc, head = "hang", ""
    dt = time.time() - t0

    def verdict(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            return r.returncode, (r.stdout + r.stderr).split("\n")[0][:100]
        except subprocess.TimeoutExpired:
            return "hang", ""
    nrc = nhead = None
    if a.truth or a.truth_if_verified and vrc == 0:
        nrc, nhead = verdict([a.parity, "verify", path, "--no-reduce", "--time-limit", "60"] + threads)
    # invalid as given both ways: skipped (with --truth-if-verified, verify's own validation of the plan as given)
    invalid = vrc == 2 and (nrc == 2 or nrc is None and a.truth_if_verified)
    rrc = red = None
    if not invalid:
        try:
            rrc = subprocess.run([a.parity, "run", path, "--compare", "--dtype", "f64"], capture_output=True,
                                 timeout=a.timeout).returncode
        except subprocess.TimeoutExpired:
            rrc = "hang"
        if a.also_reduced:
            rp = path + ".reduced.pb"
            subprocess.run([a.parity, "reduce", path, "-o", rp], capture_output=True, timeout=a.timeout)
            if os.path.exists(rp):
                red = verdict([a.parity, "verify", rp, "--no-reduce", "--time-limit", "60"] + threads)[0]
                os.remove(rp)
            else:
                red = "noreduce"
    differs = rrc == 1 or nrc in (1, 2)
    flag = []
    if vrc == 0 and differs:
        flag.append("SOUNDNESS")
    for x in (vrc, nrc, red):
        if x == "hang":
            flag.append("HANG")
        elif x is not None and x not in (0, 1, 2, 3, "noreduce"):
            flag.append("CRASH")
    if rrc not in (None, 0, 1, 2, 3):
        flag.append("RUNCRASH" if rrc != "hang" else "RUNHANG")
    if dt > 60:
        flag.append("SLOW")
    info = []
    if red == 0 and differs:
        info.append("REDUCED_HID")
    pairs[(vrc, rrc) if not a.truth else ("invalid",) if invalid else (vrc, nrc, rrc)] += 1
    flagged += bool(flag)
    old_s = " / ".join(lines[j].strip() for j in sorted(edit))
    new_s = " / ".join(edit[j].strip() for j in sorted(edit))
    print(f"{t:4d} line {i + 1:6d} {kind:10s}{'*' if si in aimed else ' '} verify={vrc} "
          + (f"noreduce={nrc} " if a.truth else "") + f"run={rrc} " + (f"reduced={red} " if a.also_reduced else "")
          + f"{dt:6.1f}s {' '.join(flag + info):10s}| {old_s} -> {new_s} | {head}", flush=True)
    if logf:
        logf.write(json.dumps(dict(case=a.case, seed=a.seed, t=t, line=i + 1, kind=kind, aimed=si in aimed,
                                   old=old_s, new=new_s, verify=vrc, noreduce=nrc, run=rrc, reduced=red,
                                   invalid=invalid, flags=flag + info, head=head, nohead=nhead, path=path,
                                   secs=round(dt, 2))) + "\n")
        logf.flush()
    if not flag and not info:
        os.remove(path)

print(f"\ncommand: scripts/mutation-sweep.py {' '.join(sys.argv[1:])}")
if a.truth:
    print("| verify exit | --no-reduce exit | run exit | mutants |")
    print("|---|---|---|---|")
    for key, k in sorted(pairs.items(), key=str):
        print("| " + " | ".join(map(str, key if len(key) == 3 else ("invalid both", "", ""))) + f" | {k} |")
else:
    print("| verify exit | run exit | mutants |")
    print("|---|---|---|")
    for (vrc, rrc), k in sorted(pairs.items(), key=str):
        print(f"| {vrc} | {rrc} | {k} |")
print(f"flagged: {flagged}" + (f" (kept under {a.keep})" if flagged else ""))
sys.exit(1 if flagged else 0)
