#!/usr/bin/env python3
"""What the workspace model (engine/workspace.py) costs (not a test).

1. **Cross-file tree**: N subclass files (``cells/cell_K.py``) whose bases live in other modules of the project
   (``layers/base_M.py``, M = K mod 20, imported relatively), analysed in one process with the workspace (each
   base module parsed once), alone (the same files, no workspace: their bases unknown, no Cell checked, as
   before), and inlined (each file with its base pasted in: the same Cells checked one file at a time), and the
   same tree through ``bprop-lsp check --no-cache -j 1`` (wall time, a fresh interpreter). Ratios against
   ``ast.parse`` of the N files.
2. **Keystroke**: a character typed into (and deleted from) a bprop's body in a generated model file
   (``/work/shared/perf/gen_corpus.py``), ``DocumentSession.analyse`` timed with and without a workspace holding
   the file's folder (the model file's bases are all MindSpore's: the workspace is asked and answers "unknown").

Run: ``.venv/bin/python scripts/bench_workspace.py [--files 200] [--lines 10000] [--edits 20]``.
Medians; the machine is shared (absolute times move with its load: compare the columns of one run).
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

GENERATOR = "/work/shared/perf/gen_corpus.py"
BASE = '''from mindspore import nn, ops


class Base{m}(nn.Cell):
    """A layer of the project."""

    def __init__(self):
        super().__init__()
        self.scale = {m}.5

    def construct(self, x, y):
        return ops.mul(x, y) * self.scale
'''
CELL = '''from ..layers.base_{m} import Base{m}


class Cell{k}(Base{m}):
    """Subclass {k}: its construct is Base{m}'s."""

    def helper(self, value):
        return value * 2

    def bprop(self, x, y, out, dout):
        return dout * y, dout * x
'''


def make_tree(root: str, files: int) -> list[str]:
    os.makedirs(os.path.join(root, "proj", "layers"))
    os.makedirs(os.path.join(root, "proj", "cells"))
    open(os.path.join(root, "pyproject.toml"), "w").write("[project]\nname = 'bench'\n")
    for d in ("proj", "proj/layers", "proj/cells"):
        open(os.path.join(root, d, "__init__.py"), "w").write("")
    for m in range(20):
        open(os.path.join(root, "proj", "layers", f"base_{m}.py"), "w").write(BASE.format(m=m))
    paths = []
    for k in range(files):
        p = os.path.join(root, "proj", "cells", f"cell_{k}.py")
        open(p, "w").write(CELL.format(k=k, m=k % 20))
        paths.append(p)
    return paths


def tree_bench(files: int, reps: int) -> None:
    from bprop_lsp.checker import analyze, warm_up
    from bprop_lsp.engine import Workspace

    warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_tree(tmp, files)
        texts = [open(p).read() for p in paths]
        # the same Cells with their base in their own file (what the workspace saves the user from writing)
        inlined = [BASE.format(m=k % 20) + "\n\n" + CELL.format(k=k, m=k % 20).split("\n", 1)[1]
                   for k in range(files)]
        rows = {"ast.parse": [], "alone": [], "inlined": [], "workspace": [], "cli": []}
        for _ in range(reps):
            t0 = time.perf_counter()
            for t in texts:
                ast.parse(t)
            rows["ast.parse"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            alone = sum(len(analyze(t, compiles=True).findings) for t in texts)
            rows["alone"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            one_file = sum(len(analyze(t, compiles=True).findings) for t in inlined)
            rows["inlined"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ws = Workspace([tmp])
            found = sum(len(analyze(t, compiles=True, workspace=ws, path=p).findings) for p, t in zip(paths, texts))
            rows["workspace"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "bprop_lsp", "check", "--no-cache", "-q", "-j", "1", "."], cwd=tmp,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            rows["cli"].append(time.perf_counter() - t0)
        base = statistics.median(rows["ast.parse"])
        print(f"{files} subclass files, bases in 20 other modules (findings: alone {alone}, inlined {one_file}, "
              f"workspace {found}):")
        for name, values in rows.items():
            med = statistics.median(values)
            print(f"  {name:10s} {med * 1e3:8.1f} ms  {med / base:6.1f}x ast.parse")
        med = {name: statistics.median(values) for name, values in rows.items()}
        print(f"  workspace / alone {med['workspace'] / med['alone']:.2f}x, workspace / inlined "
              f"{med['workspace'] / med['inlined']:.2f}x")


def keystroke_bench(lines: int, edits: int) -> None:
    from bprop_lsp.checker import DocumentSession, warm_up
    from bprop_lsp.engine import Workspace

    warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, GENERATOR, tmp, str(lines)], check=True, stdout=subprocess.DEVNULL)
        path = os.path.join(tmp, f"synth_{lines}.py")
        text = open(path, encoding="utf-8").read()
        rows = text.split("\n")
        i = next(i for i in range(len(rows) // 2, len(rows)) if rows[i].lstrip().startswith("def bprop("))
        body = i + 1
        indent = len(rows[body]) - len(rows[body].lstrip())
        variants = []
        for k in range(edits):
            edited = list(rows)
            edited[body] = rows[body][:indent] + ("x" if k % 2 == 0 else "") + rows[body][indent:] if k % 2 == 0 \
                else rows[body]
            variants.append("\n".join(edited))
        ast_t = []
        for _ in range(5):
            t0 = time.perf_counter()
            ast.parse(text)
            ast_t.append(time.perf_counter() - t0)
        # (The two sessions take turns on each edit: paired, so the machine's load moves both alike.)
        ws = Workspace([tmp])
        runs = {"without workspace": (DocumentSession("model.py"), {}),
                "with workspace": (DocumentSession("model.py"), {"workspace": ws, "path": path})}
        for session, kw in runs.values():
            session.analyse(text, **kw)
        out = {label: [] for label in runs}
        for k, v in enumerate(variants):
            ws.set_overlay(path, v)
            order = list(runs.items()) if k % 2 == 0 else list(runs.items())[::-1]
            for label, (session, kw) in order:
                t0 = time.perf_counter()
                session.analyse(v, **kw)
                out[label].append(time.perf_counter() - t0)
        base = statistics.median(ast_t)
        print(f"keystroke in a {lines}-line model file ({len(text.splitlines())} lines), {edits} edits "
              f"(ast.parse {base * 1e3:.1f} ms):")
        for label, times in out.items():
            med = statistics.median(times)
            print(f"  {label:18s} median {med * 1e3:7.1f} ms ({med / base:.2f}x ast.parse), "
                  f"max {max(times) * 1e3:.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--lines", type=int, default=10000)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    tree_bench(args.files, args.reps)
    keystroke_bench(args.lines, args.edits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
