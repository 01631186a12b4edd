#!/usr/bin/env python3
"""Chooses the sanitizer stage's corpus subset: tests/asan-subset.txt.

    scripts/asan-subset.py BUILD_DIR [--reuse]   (`make asan-subset`, BUILD_DIR = build-cov)

BUILD_DIR is a sanitizer build with coverage guards (`make asan-subset` makes build-cov: clang, ASan + UBSan,
-fsanitize-coverage=trace-pc-guard). Every corpus case, a source
corpus/cases/**/*.pbtxt or the expansion BUILD_DIR/corpus/cases/**/*.pbtxt of a
manifest corpus/cases/**/*.gen, is run as tests/run_expect.sh runs it
(`parity EXPECT-CMD FILE`, two at a time, 300 s each) with
ASAN_OPTIONS=coverage=1, which writes the covered edges (module offsets) into
*.sancov files; the runs are kept in BUILD_DIR/asan-subset.json (--reuse
chooses again from them without running). llvm-symbolizer maps each edge to
the lines of parity's own sources it stands for (its inlined frames
included). A greedy set cover then takes, again and again, the case that adds
the most lines not yet covered per second it runs, until the chosen cases
cover every line the whole corpus covers. The subset's ctest names
(corpus/REL) go to tests/asan-subset.txt, sorted, under '#' comment lines.
Cases that crash (exit >= 128 or a sanitizer report), time out or take longer
than run_expect.sh allows are printed, and never chosen.
"""
import concurrent.futures as cf
import datetime
import json
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "corpus" / "cases"
OUT = ROOT / "tests" / "asan-subset.txt"
TIMEOUT = 300
MAGIC64 = 0xC0BFFFFFFFFFFF64
SANITIZER = re.compile(r"ERROR: (Address|Leak|Undefined\w*)Sanitizer|runtime error:|SUMMARY: \w+Sanitizer")


def cases(build):
    """{ctest name: file to run}, source cases and expanded manifests alike."""
    found = {}
    for f in sorted(CASES.rglob("*.pbtxt")):
        found["corpus/" + f.relative_to(CASES).as_posix()] = f
    for g in sorted(CASES.rglob("*.gen")):
        rel = g.relative_to(CASES).with_suffix(".pbtxt").as_posix()
        f = build / "corpus" / "cases" / rel
        if "corpus/" + rel in found:  # tests/CMakeLists.txt: the source case wins over its manifest
            continue
        if not f.exists() or f.stat().st_mtime < g.stat().st_mtime:  # a manifest newer than the build
            subprocess.run(["bash", ROOT / "scripts" / "expand-case.sh", build / "tools" / "parity", g, f], check=True)
        found["corpus/" + rel] = f
    return found


def header(f, pattern):
    """The first match of pattern in f's header lines (FILE.expect for a binary FILE), as run_expect.sh reads them."""
    hdr = Path(str(f) + ".expect") if Path(str(f) + ".expect").exists() else f
    with open(hdr, errors="replace") as fh:
        return next((m for line in fh if (m := re.match(pattern, line.rstrip("\n")))), None)


def read_sancov(path):
    data = path.read_bytes()
    if len(data) < 8 or struct.unpack_from("<Q", data)[0] != MAGIC64:
        raise SystemExit(f"{path}: not a 64-bit .sancov file")
    module = path.name.rsplit(".", 2)[0]  # MODULE.PID.sancov
    return {(module, pc) for (pc,) in struct.iter_unpack("<Q", data[8:])}


def project_lines(build, pcs):
    """{(module, pc): frozenset of 'file:line' of parity's sources}, by llvm-symbolizer (inlined frames too)."""
    out = {}
    by_module = {}
    for module, pc in pcs:
        by_module.setdefault(module, []).append(pc)
    for module, offsets in by_module.items():
        binary = build / "tools" / module
        if not binary.exists():
            continue
        # sancov stores the address after the call; one byte back is inside the edge's block.
        text = "".join(f"0x{pc - 1:x}\n" for pc in offsets)
        res = subprocess.run(["llvm-symbolizer-14", f"--obj={binary}", "--inlines"],
                             input=text, capture_output=True, text=True, check=True).stdout
        # One block an address, blank-line separated: function and FILE:LINE:COLUMN, a pair a frame.
        for pc, block in zip(offsets, res.split("\n\n")):
            lines = set()
            for loc in block.splitlines()[1::2]:
                path, num, _ = (loc.rsplit(":", 2) + ["", ""])[:3]
                if not num.isdigit() or num == "0":
                    continue
                rel = os.path.relpath(os.path.normpath(path), ROOT)
                if not rel.startswith(("..", "build")):  # parity's sources, not headers or generated code
                    lines.add(f"{rel}:{num}")
            out[(module, pc)] = frozenset(lines)
    return out


def run(parity, name, f, tmp):
    cmd = header(f, r"(#|//) expect-cmd: *(.*)")
    cmd = (cmd.group(2) if cmd else "validate").replace("{dir}", str(f.parent))
    limit = 280 if header(f, r"# slow:") else 120  # run_expect.sh's limit
    covdir = Path(tempfile.mkdtemp(dir=tmp))
    env = dict(os.environ, ASAN_OPTIONS=f"coverage=1:coverage_dir={covdir}")
    env.setdefault("LSAN_OPTIONS", f"suppressions={ROOT}/tests/lsan.supp:print_suppressions=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    start = time.monotonic()
    try:
        p = subprocess.run([parity, *shlex.split(cmd), str(f)], env=env, capture_output=True, text=True,
                           errors="replace", timeout=TIMEOUT)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, out = "timeout", ""
    secs = time.monotonic() - start
    pcs = set()
    for s in covdir.glob("*.sancov"):
        pcs |= read_sancov(s)
    signal = rc != "timeout" and (rc < 0 or rc >= 128)
    report = SANITIZER.search(out)
    if report:
        report = out[report.start():][:400]
    elif signal:
        report = f"exit {rc}" + (" (SIGKILL: the out-of-memory killer?)" if rc in (-9, 137) else "") + "\n" + out[-400:]
    want = header(f, r"(#|//) expect-exit: *(.*)")
    return dict(name=name, secs=secs, pcs=pcs, rc=rc, crash=bool(report), limit=limit, report=report,
                wrong=want is not None and str(rc) != want.group(2).strip())


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        raise SystemExit(__doc__)
    build = Path(args[0]).resolve()
    parity = build / "tools" / "parity"
    cache = build / "asan-subset.json"
    todo = cases(build)
    if "--reuse" in sys.argv and cache.exists():
        res = json.loads(cache.read_text())
        print(f"{len(res)} cases from {cache}")
    else:
        print(f"{len(todo)} cases, {parity}", flush=True)
        res = {}
        with tempfile.TemporaryDirectory(prefix="asan-subset.") as tmp, cf.ThreadPoolExecutor(2) as pool:
            futs = [pool.submit(run, parity, n, f, tmp) for n, f in todo.items()]
            for i, fu in enumerate(cf.as_completed(futs), 1):
                r = fu.result()
                r["pcs"] = sorted([m, pc] for m, pc in r["pcs"])
                res[r["name"]] = r
                flag = " CRASH" if r["crash"] else " TIMEOUT" if r["rc"] == "timeout" else ""
                print(f"[{i}/{len(todo)}] {r['secs']:7.1f} s {len(r['pcs']):6} edges rc {r['rc']}{flag}  {r['name']}",
                      flush=True)
        cache.write_text(json.dumps(res))

    # Edges -> parity's source lines; each case as a bitmap (an int) of the lines it covers.
    lines_of = project_lines(build, {(m, pc) for r in res.values() for m, pc in r["pcs"]})
    index = {}
    for r in res.values():
        mine = set().union(*(lines_of.get((m, pc), ()) for m, pc in r["pcs"]))
        r["n"] = len(mine)
        for k in mine:
            index.setdefault(k, len(index))
        bits = bytearray(len(index) // 8 + 1)
        for k in mine:
            bits[index[k] >> 3] |= 1 << (index[k] & 7)
        r["bits"] = int.from_bytes(bits, "little")
    usable = [r for r in res.values() if not r["crash"] and r["rc"] != "timeout" and r["secs"] <= r["limit"]]
    whole = 0
    for r in usable:
        whole |= r["bits"]
    left, chosen = whole, []
    while left:
        best = max(usable, key=lambda r: (r["bits"] & left).bit_count() / (r["secs"] + 0.5))
        chosen.append((best, (best["bits"] & left).bit_count()))
        left &= ~best["bits"]
    total = sum(r["secs"] for r in res.values())
    sub = sum(r["secs"] for r, _ in chosen)
    missed = len(index) - whole.bit_count()

    print(f"\n{'adds':>7} {'lines':>7} {'secs':>7}  case (in the order chosen)")
    for r, adds in chosen:
        print(f"{adds:7} {r['n']:7} {r['secs']:7.1f}  {r['name']}")
    print(f"\n{len(chosen)} of {len(res)} cases cover all {whole.bit_count()} lines; {sub:.0f} s of {total:.0f} s")
    if missed:
        print(f"{missed} lines only a crashing, timed-out or too slow case covers")
    for label, key in (("crashed", lambda r: r["crash"]), ("timed out", lambda r: r["rc"] == "timeout"),
                       ("exit differs from expect-exit", lambda r: r["wrong"] and r["rc"] != "timeout"),
                       ("slower than run_expect.sh's limit", lambda r: r["secs"] > r["limit"])):
        bad = sorted(n for n, r in res.items() if key(r))
        print(f"{label}: {len(bad)}" + "".join(f"\n  {n} (exit {res[n]['rc']}, {res[n]['secs']:.0f} s)" for n in bad))
        if label == "crashed":
            for n in bad:
                print(f"--- {n}\n{res[n]['report']}")

    if cases(build).keys() != set(res):
        print("the corpus changed since the runs: run it again without --reuse")
    names = sorted(r["name"] for r, _ in chosen)
    OUT.write_text(
        "# The sanitizer stage's corpus subset: the cases that cover every line of parity's\n"
        "# sources the whole corpus covers, chosen by lines added per second (greedy set\n"
        "# cover over sanitizer edge coverage), by scripts/asan-subset.py.\n"
        f"# Made by `make asan-subset` on {datetime.date.today().isoformat()}: {len(chosen)} of {len(res)} cases,\n"
        f"# {whole.bit_count()} lines; {sub:.0f} s under the sanitizers against {total:.0f} s for the whole corpus.\n"
        + "".join(n + "\n" for n in names))
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
