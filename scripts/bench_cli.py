#!/usr/bin/env python3
"""Benchmark ``bprop-lsp check`` against CPython ``ast.parse`` of the same files, side by side in one run.

    python3 scripts/bench_cli.py [--files 2000] [--lines 300] [--with-bprop 20] [--repeat 3]
    python3 scripts/bench_cli.py --corpus DIR [--repeat 3]     # an existing tree of *.py files instead

Generates a tree of ordinary Python files (a few of them with custom-bprop Cells, as in a real model
repository), then times, alternating and repeated, (a) reading + ``ast.parse`` of every file in one process
and (b) the ``check`` engine path in one process (read, pre-filter, parso on matches, rules), and the
same ``check`` as a subprocess (``bprop-lsp check --output-format json``, including interpreter start-up), once
with ``-j 1`` (serial) and once with a process pool of one worker per CPU.
Reports medians and the ratio to ``ast.parse``; absolute times vary 1.5-3x with machine load.
"""
from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

ORDINARY = '''
def helper_{i}(a, b=2, *args, **kwargs):
    """An ordinary function."""
    total = 0
    for k in range(a):
        if k % 3 == 0:
            total += k * b
        else:
            total -= len(args)
    return {{"total": total, "kw": sorted(kwargs)}}


class Plain{i}:
    def __init__(self, n):
        self.n = n

    def run(self, xs):
        return [x * self.n for x in xs if x]
'''

CELL = '''
from mindspore import nn, ops


class Scale{i}(nn.Cell):
    def construct(self, x, y):
        return x * y

    def bprop(self, x, y, out{extra}):
        return dout * y, dout * x
'''


def make_tree(root: Path, files: int, lines: int, with_bprop: int) -> list[Path]:
    paths = []
    chunk = ORDINARY.count("\n")
    for f in range(files):
        parts = [ORDINARY.format(i=f * 1000 + j) for j in range(max(1, lines // chunk))]
        if f < with_bprop:
            parts.append(CELL.format(i=f, extra="" if f % 2 else ", dout"))
        p = root / f"pkg{f // 100}" / f"mod_{f}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(parts), encoding="utf-8")
        paths.append(p)
    return paths


def time_ast(paths):
    t = time.perf_counter()
    for p in paths:
        ast.parse(p.read_bytes())
    return time.perf_counter() - t


def time_engine(paths):
    from bprop_lsp.engine import analyze

    t = time.perf_counter()
    n = 0
    for p in paths:
        n += len(analyze(p.read_bytes().decode("utf-8")).findings)
    return time.perf_counter() - t


def time_subprocess(root, *flags):
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bprop_lsp", "check", "--output-format", "json", *flags, str(root)],
                   capture_output=True, check=False)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--lines", type=int, default=300)
    ap.add_argument("--with-bprop", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--corpus", metavar="DIR", help="check this tree (e.g. from gen_corpus.py) instead of generating one")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if a.corpus:
            root = Path(a.corpus)
            paths = sorted(root.rglob("*.py"))
            with_bprop = sum(1 for p in paths if "def bprop" in p.read_text(encoding="utf-8"))
        else:
            root = Path(tmp)
            paths = make_tree(root, a.files, a.lines, a.with_bprop)
            with_bprop = a.with_bprop
        total_lines = sum(p.read_text(encoding="utf-8").count("\n") for p in paths)
        time_engine(paths[:20])  # warm imports
        cpus = os.cpu_count() or 1
        pool_row = f"bprop-lsp check -j {cpus} (subprocess)"
        rows = {"ast.parse (baseline, in-process)": [], "check engine (in-process)": [],
                "bprop-lsp check -j 1 (subprocess)": [], pool_row: []}
        for _ in range(a.repeat):
            rows["ast.parse (baseline, in-process)"].append(time_ast(paths))
            rows["check engine (in-process)"].append(time_engine(paths))
            rows["bprop-lsp check -j 1 (subprocess)"].append(time_subprocess(root, "-j", "1"))
            rows[pool_row].append(time_subprocess(root, "-j", str(cpus)))
        base = statistics.median(rows["ast.parse (baseline, in-process)"])
        best = min(rows["ast.parse (baseline, in-process)"])
        print(f"{len(paths)} files, {total_lines} lines, {with_bprop} with a custom bprop; {a.repeat} runs "
              f"(median, and the fastest: the better estimate on a machine others are loading)")
        for name, values in rows.items():
            m, fast = statistics.median(values), min(values)
            print(f"  {name:36} {m * 1000:9.1f} ms {m / base:5.2f}x ast.parse | fastest {fast * 1000:9.1f} ms "
                  f"{fast / best:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
