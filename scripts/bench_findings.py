#!/usr/bin/env python3
"""How `bprop-lsp check` scales with the number of fixable findings in one file (not a test).

Generates files with 100 / 400 / 1,600 Cells whose bprop lacks `dout` (each a fixable BP001) and times
`bprop-lsp check` on each, beside `ast.parse` of the same text in the same run. Every fix is re-parsed and
re-checked before it is offered; the target is linear growth (100 -> 1,600 findings: <= 20x).

Run: .venv/bin/python scripts/bench_findings.py [--sizes 100,400,1600]
"""
from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CELL = '''
class C{i}(nn.Cell):
    def construct(self, x, y):
        return x * y
    def bprop(self, x, y, out):
        return dout * y, dout * x
'''


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,400,1600")
    sizes = [int(s) for s in ap.parse_args().sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            text = "from mindspore import nn\n" + "".join(CELL.format(i=i) for i in range(n))
            path = Path(tmp) / f"cells_{n}.py"
            path.write_text(text, encoding="utf-8")
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "bprop_lsp", "check", "--output-format", "concise", str(path)],
                                  capture_output=True, text=True)
            check = time.perf_counter() - t
            t = time.perf_counter()
            ast.parse(text)
            parse = time.perf_counter() - t
            fixable = proc.stdout.count("[*]")
            rows.append((n, fixable, check, parse))
            print(f"{n:6} cells  {fixable:6} fixable findings  check {check:7.2f} s  ast.parse {parse:6.3f} s", flush=True)
    first = rows[0]
    for n, _, check, _ in rows[1:]:
        print(f"{first[0]} -> {n} findings: check grows {check / first[2]:.1f}x (findings {n / first[0]:.0f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
