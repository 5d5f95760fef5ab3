#!/usr/bin/env python3
"""Keystroke -> diagnostics latency while the server checks quick fixes (lsp/scheduler.py), over real stdio.

Two files of the same size: one whose ``--findings`` bprops each lack ``dout`` (every finding has a fix to
check), one whose bprops are all correct. For each, keystrokes are sent at moments when the fix checks of the
previous version are running (``--settle`` seconds after its diagnostics arrived), and the time from the
``didChange`` to the ``publishDiagnostics`` of that version is measured; likewise for an edit of a second, small
document while the big one's fixes are checked. The target: the median with findings at most twice the median
without.

    .venv/bin/python scripts/bench_fix_checks.py --findings 400 --keystrokes 15
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))

from raw_client import RawServer  # noqa: E402

BAD = """class MulAdd{i}(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y
    def bprop(self, x, y, out):
        return 2 * out, out
"""
GOOD = BAD.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out, dout):").replace(
    "return 2 * out, out", "return 2 * dout, dout")
PUSH_CAPS = {"textDocument": {"publishDiagnostics": {"versionSupport": True, "relatedInformation": True}}}


def program(template: str, n: int) -> str:
    return "from mindspore import nn\n" + "".join(template.format(i=i) for i in range(n))


def wait_push(server: RawServer, uri: str, version: int, timeout: float = 120) -> list:
    msg = server.wait_notification(lambda m: m["method"] == "textDocument/publishDiagnostics"
                                   and m["params"]["uri"] == uri and m["params"].get("version") == version, timeout)
    return msg["params"]["diagnostics"]


def keystroke(server: RawServer, uri: str, version: int, line: int) -> None:
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
        {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": "#"}]})


def measure(template: str, n: int, keystrokes: int, settle: float) -> dict:
    server = RawServer()
    try:
        server.initialize(PUSH_CAPS)
        big, small = "file:///tmp/bprop-bench/big.py", "file:///tmp/bprop-bench/small.py"
        text = program(template, n)
        server.open(big, text)
        findings = len(wait_push(server, big, 1))
        server.open(small, program(BAD, 1))
        wait_push(server, small, 1)
        lines = text.count("\n")
        own, other = [], []
        version, small_version = 1, 1
        for k in range(keystrokes):
            time.sleep(settle)  # the fix checks of the current version are running now
            version += 1
            t0 = time.perf_counter()
            keystroke(server, big, version, lines)
            wait_push(server, big, version)
            own.append(time.perf_counter() - t0)
            time.sleep(settle)
            small_version += 1
            t0 = time.perf_counter()
            keystroke(server, small, small_version, 1)
            wait_push(server, small, small_version)
            other.append(time.perf_counter() - t0)
        return {"findings": findings, "own": own, "other": other}
    finally:
        server.close()


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1e3:7.1f} ms, max {max(values) * 1e3:7.1f} ms"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--findings", type=int, default=400)
    ap.add_argument("--keystrokes", type=int, default=15)
    ap.add_argument("--settle", type=float, default=0.6, help="seconds between a version's diagnostics and the next keystroke")
    args = ap.parse_args(argv)
    clean = measure(GOOD, args.findings, args.keystrokes, args.settle)
    dirty = measure(BAD, args.findings, args.keystrokes, args.settle)
    print(f"file of {args.findings} classes, {args.keystrokes} keystrokes each, {args.settle} s after the diagnostics:")
    for name, r in (("0 findings", clean), (f"{dirty['findings']} findings", dirty)):
        print(f"  {name:>13}: keystroke -> its diagnostics   {ms(r['own'])}")
        print(f"  {'':>13}  other document's keystroke   {ms(r['other'])}")
    ratio = statistics.median(dirty["own"]) / statistics.median(clean["own"])
    other_ratio = statistics.median(dirty["other"]) / statistics.median(clean["other"])
    print(f"  ratio with/without findings: {ratio:.2f}x (own document), {other_ratio:.2f}x (other document); target <= 2x")
    return 0 if ratio <= 2 and other_ratio <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
