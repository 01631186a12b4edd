#!/usr/bin/env python3
"""Checks the sample outputs in the docs against real runs.

A sample is a fenced block whose lines start with `$ parity ...` (a command)
followed by the lines it printed. Each command is run from the repository
root with the parity given; every shown line must appear in the real output,
in order (lines may be left out). In a shown line, `...` stands for any text
and a time (`0.00 s`, `1.2 s`) for any time. Commands reading a file that is
not in the repository (made by an earlier step of a walk-through, like
`ok.pb`) are listed as skipped, not run.

  scripts/doc-samples.py PARITY [DOC.md...]      (default: docs/*.md README.md)
  scripts/doc-samples.py --update PARITY [...]   rewrite each shown line that no longer
      matches with the real line that starts the same way (up to its first ': ')
Exit 0 when every sample matches, 1 otherwise, naming the doc line.
"""
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME = re.compile(r"\b\d+(\.\d+)? s\b")


def samples(path):
    """(doc line, command, [shown lines]) of each `$ parity` command in fenced blocks."""
    out, block, cur = [], False, None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.startswith("```"):
            if cur:
                out.append(cur)
            cur, block = None, not block
            continue
        if not block:
            continue
        if line.startswith("$ "):
            if cur:
                out.append(cur)
            cmd = line[2:].split("  #")[0].strip()
            cur = (n, cmd, []) if cmd.startswith("parity ") else None
        elif cur is not None:
            cur[2].append(line)
    return out


def pattern(shown):
    parts = [re.escape(p) for p in shown.split("...")]
    text = ".*".join(parts)
    text = TIME.sub(lambda m: r"\d+(\.\d+)? s", text.replace(r"\ s", " s"))
    return re.compile(text)


def files_exist(args):
    for a in args:
        if a.startswith("-") or "/" not in a and "." not in a:
            continue
        if re.search(r"\.(pbtxt|pb|mlir|json|html|sarif|xml)$", a) and not a.startswith("-"):
            if not os.path.exists(os.path.join(ROOT, a)):
                return False
    return True


def key(line):
    return line.split(": ", 1)[0] if ": " in line else None


def main():
    argv = sys.argv[1:]
    update = argv[:1] == ["--update"]
    if update:
        argv = argv[1:]
    parity = os.path.abspath(argv[0])
    docs = argv[1:] or sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [os.path.join(ROOT, "README.md")]
    bad = ran = skipped = 0
    for doc in docs:
        rel = os.path.relpath(doc, ROOT)
        lines = open(doc, encoding="utf-8").read().split("\n")
        changed = False
        for n, cmd, shown in samples(doc):
            args = shlex.split(cmd)[1:]
            if any(x in ("-o", "--json", "--junit", "--sarif") for x in args) or not files_exist(args) or "|" in cmd:
                skipped += 1
                continue
            env = dict(os.environ, COLUMNS="200")
            try:
                p = subprocess.run([parity] + args, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
                real = (p.stdout + p.stderr).splitlines()
            except subprocess.TimeoutExpired:
                real = ["(timed out)"]
            ran += 1
            at = 0
            for i, s in enumerate(shown):
                if not s.strip():
                    continue
                pat = pattern(s)
                start = at
                while at < len(real) and not pat.fullmatch(real[at]):
                    at += 1
                if at == len(real) and update and key(s):
                    at = start
                    while at < len(real) and key(real[at]) != key(s):
                        at += 1
                    if at < len(real):
                        lines[n + i] = real[at]  # the doc's line n + 1 + i, 0-based
                        changed = True
                        at += 1
                        continue
                if at == len(real):
                    print(f"{rel}:{n}: `{cmd}`: the shown line is not in the output (in order):\n  shown: {s}")
                    print("  real output:\n" + "\n".join("    " + r for r in real[:40]))
                    bad += 1
                    break
                at += 1
        if changed:
            open(doc, "w", encoding="utf-8").write("\n".join(lines))
    print(f"doc samples: {ran} commands run, {bad} differ, {skipped} skipped (files made by earlier steps)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
