#!/usr/bin/env python3
"""Cost of fix-all against the number of findings (issue 25, items 8 and 11), ratios side by side.

For each size N, a file of N bprops that each lack ``dout`` (every finding has a safe fix) is fixed:

* ``edits``: ``lsp.edits.minimal_edits`` between the file and its fixed text (what ``source.fixAll`` sends);
  ``old edits``: difflib's ``SequenceMatcher`` over the changed middle, as it was before (only up to
  ``--old-max`` findings: cubic);
* ``fix_all``: the engine's fix-all (what ``check --fix`` and the code action run first);
* ``check --fix``: the CLI on a temporary copy of the file (a subprocess, start-up included).

Each is shown with its ratio to N/100 times the cost at 100 findings (1.0: linear); ``fix-all action`` is
fix_all then the edits, what the ``source.fixAll`` action computes. The target of item 8: the fix-all action for
800 findings at most 2x (8 x the cost for 100).

    .venv/bin/python scripts/bench_fix_all.py --sizes 100 200 400 800 5000
"""
from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from bprop_lsp.checker import fix_all  # noqa: E402
from bprop_lsp.lsp.edits import minimal_edits  # noqa: E402

BAD = """class MulAdd{i}(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y
    def bprop(self, x, y, out):
        return 2 * out, out
"""


def program(n: int) -> str:
    return "from mindspore import nn\n" + "".join(BAD.format(i=i) for i in range(n))


def old_edit_count(old: str, new: str) -> int:
    """The matching the server did before (SequenceMatcher, autojunk off, over the changed middle)."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    matcher = difflib.SequenceMatcher(None, a[p:len(a) - s], b[p:len(b) - s], autojunk=False)
    return sum(1 for op in matcher.get_opcodes() if op[0] != "equal")


def timed(fn, *args):
    t0 = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - t0, value


def cli_fix(text: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bprop_lsp.cli.main", "check", "--fix", "--quiet", path],
                       cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "server")})
        return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400, 800, 5000])
    parser.add_argument("--old-max", type=int, default=400, help="largest size the old matcher is timed at")
    parser.add_argument("--no-cli", action="store_true", help="skip the check --fix subprocess")
    args = parser.parse_args()
    rows = []
    for n in args.sizes:
        text = program(n)
        t_fix, (fixed, count) = timed(fix_all, text)
        # (the edits take milliseconds: the best of a few runs, else timer noise decides the ratio)
        t_edits, edits = min((timed(minimal_edits, text, fixed) for _ in range(5)), key=lambda r: r[0])
        t_old = timed(old_edit_count, text, fixed)[0] if n <= args.old_max else None
        t_cli = None if args.no_cli else cli_fix(text)
        rows.append((n, count, len(edits), t_edits, t_old, t_fix, t_cli))
        print(f"  measured {n} findings", file=sys.stderr)
    base = rows[0]
    scale = base[0]

    def ratio(value, base_value, n):
        if value is None or base_value is None or base_value <= 0:
            return "-"
        return f"{value / (base_value * n / scale):.2f}x"

    def sec(value):
        return "-" if value is None else f"{value:.3f}s"

    print(f"{'findings':>8} {'fixed':>6} {'edits':>6} | {'edits':>8} {'ratio':>6} | {'old edits':>9} {'ratio':>6} | "
          f"{'fix_all':>8} {'ratio':>6} | {'fix-all action':>14} {'ratio':>6} | {'check --fix':>11} {'ratio':>6}")
    for n, count, n_edits, t_edits, t_old, t_fix, t_cli in rows:
        total, base_total = t_fix + t_edits, base[5] + base[3]  # what source.fixAll computes: fix_all, then edits
        print(f"{n:>8} {count:>6} {n_edits:>6} | {sec(t_edits):>8} {ratio(t_edits, base[3], n):>6} | "
              f"{sec(t_old):>9} {ratio(t_old, base[4], n):>6} | {sec(t_fix):>8} {ratio(t_fix, base[5], n):>6} | "
              f"{sec(total):>14} {ratio(total, base_total, n):>6} | {sec(t_cli):>11} {ratio(t_cli, base[6], n):>6}")
    print(f"(ratio: time / ({scale}-finding time x N/{scale}); 1.00x is linear)")


if __name__ == "__main__":
    main()
