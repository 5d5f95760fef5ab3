#!/usr/bin/env python3
"""Keystroke -> diagnostics latency while the server checks quick fixes or scans the workspace (lsp/scheduler.py,
lsp/workspace_scan.py, engine/preempt.py), over real stdio.

Fix checks: two files of the same size, one whose ``--findings`` bprops each lack ``dout`` (every finding has a fix
to check), one whose bprops are all correct. For each, keystrokes are sent at moments when the fix checks of the
previous version are running (``--settle`` seconds after its diagnostics arrived), and the time from the
``didChange`` to the ``publishDiagnostics`` of that version is measured; likewise for an edit of a second, small
document while the big one's fixes are checked ("other document": what a keystroke waits behind the checks, its
own analysis being ~3 ms). Targets: the median with findings at most twice the median without; the other
document's keystroke never more than ~50 ms.

Workspace scan: a workspace folder holding a large model file (``--scan-cells`` correct Cells: seconds of parse and
rules); ``workspace/diagnostic`` is asked again as soon as it answers, and keystrokes of a small open document are
timed while it runs, beside the same keystrokes with no scan.

``--before DIR`` (another checkout's ``server/`` folder, e.g. ``git archive main server | tar -x -C /tmp/base``)
runs every measurement with that code too, in turn with this one (``--repeat`` rounds), and prints them side by
side. Times move 1.5-3x with the machine's load: compare the columns of one run.

    .venv/bin/python scripts/bench_fix_checks.py --findings 400 --keystrokes 15 [--before /tmp/base/server]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))

from mul_add import BAD, GOOD, program  # noqa: E402
from raw_client import RawServer  # noqa: E402

PUSH_CAPS = {"textDocument": {"publishDiagnostics": {"versionSupport": True, "relatedInformation": True}}}


def wait_push(server: RawServer, uri: str, version: int, timeout: float = 120) -> list:
    msg = server.wait_notification(lambda m: m["method"] == "textDocument/publishDiagnostics"
                                   and m["params"]["uri"] == uri and m["params"].get("version") == version, timeout)
    return msg["params"]["diagnostics"]


def keystroke(server: RawServer, uri: str, version: int, line: int) -> None:
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
        {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": "#"}]})


def _server(code: str | None) -> RawServer:
    env = None
    if code is not None:
        env = {"PYTHONPATH": os.pathsep.join(filter(None, [code, os.environ.get("PYTHONPATH")]))}
    return RawServer(env=env)


def measure(template: str, n: int, keystrokes: int, settle: float, code: str | None = None) -> dict:
    server = _server(code)
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


SCANS_ANSWERED: dict = {}  # code -> scans that answered while keystrokes were timed (each: the big file analysed)


def measure_scan(folder: Path, keystrokes: int, scanning: bool, code: str | None = None) -> list[float]:
    """Keystrokes of a small open document, each at a random moment of a running workspace scan (``scanning``) or
    with none."""
    import random

    rng = random.Random(7)
    server = _server(code)
    small = (folder / "small.py").as_uri()
    try:
        server.initialize(PUSH_CAPS, rootUri=folder.as_uri(), workspaceFolders=[{"uri": folder.as_uri(), "name": "ws"}])
        server.open(small, program(BAD, 1))
        wait_push(server, small, 1)
        scan = server.request_async("workspace/diagnostic", {"previousResultIds": []}) if scanning else None
        times, version = [], 1
        time.sleep(1.0)  # the scan is past listing the files
        for _ in range(keystrokes):
            if scan is not None:
                with server.cond:
                    done = scan in server.responses
                if done:  # ask again: the scan analyses every file afresh (no previous result ids)
                    SCANS_ANSWERED[code] = SCANS_ANSWERED.get(code, 0) + 1
                    scan = server.request_async("workspace/diagnostic", {"previousResultIds": []})
                    time.sleep(0.3)
            time.sleep(rng.uniform(0.05, 0.3))
            version += 1
            t0 = time.perf_counter()
            keystroke(server, small, version, 1)
            wait_push(server, small, version)
            times.append(time.perf_counter() - t0)
        return times
    finally:
        server.close()


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1e3:7.1f} ms, max {max(values) * 1e3:7.1f} ms"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--findings", type=int, default=400)
    ap.add_argument("--keystrokes", type=int, default=15)
    ap.add_argument("--settle", type=float, default=0.6, help="seconds between a version's diagnostics and the next keystroke")
    ap.add_argument("--scan-cells", type=int, default=3000, help="correct Cells in the workspace file (0: no scan runs)")
    ap.add_argument("--before", metavar="DIR", help="also measure another checkout's server/ folder, in turn")
    ap.add_argument("--repeat", type=int, default=1, help="rounds (each: every measurement of every code once)")
    ap.add_argument("--scan-only", action="store_true", help="only the workspace-scan measurements")
    args = ap.parse_args(argv)
    codes = {"now": None}
    if args.before:
        codes = {"before": args.before, "now": str(Path(__file__).resolve().parents[1] / "server")}
    rows: dict = {}

    def add(label: str, code: str, values: list[float]) -> None:
        rows.setdefault(label, {}).setdefault(code, []).extend(values)

    tmp = tempfile.TemporaryDirectory()
    folder = Path(tmp.name)
    if args.scan_cells:
        (folder / "big_model.py").write_text(program(GOOD, args.scan_cells))
    findings = args.findings
    for r in range(args.repeat):
        for name, code in (codes.items() if r % 2 == 0 else reversed(list(codes.items()))):
            if not args.scan_only:
                clean = measure(GOOD, args.findings, args.keystrokes, args.settle, code)
                dirty = measure(BAD, args.findings, args.keystrokes, args.settle, code)
                findings = dirty["findings"]
                add("0 findings: keystroke -> its diagnostics", name, clean["own"])
                add("0 findings: other document's keystroke", name, clean["other"])
                add(f"{findings} findings: keystroke -> its diagnostics", name, dirty["own"])
                add(f"{findings} findings: other document's keystroke", name, dirty["other"])
            if args.scan_cells:
                add("no scan: keystroke of an open document", name, measure_scan(folder, args.keystrokes, False, code))
                add(f"scan of {args.scan_cells} Cells running: keystroke", name,
                    measure_scan(folder, args.keystrokes, True, code))
    tmp.cleanup()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"file of {args.findings} classes, {args.keystrokes} keystrokes each x {args.repeat} round(s), "
          f"{args.settle} s after the diagnostics; load average {load:.2f}")
    print(f"  {'':52}" + "".join(f"{name:>36}" for name in codes))
    for label, by_code in rows.items():
        print(f"  {label:52}" + "".join(f"{ms(by_code[name]):>36}" for name in codes))
    if args.scan_cells:
        print("  scans that answered while keystrokes were timed: " +
              ", ".join(f"{name} {SCANS_ANSWERED.get(code, 0)}" for name, code in codes.items()))
    if args.scan_only:
        return 0
    now = {label: by_code["now"] for label, by_code in rows.items()}
    ratio = statistics.median(now[f"{findings} findings: keystroke -> its diagnostics"]) / \
        statistics.median(now["0 findings: keystroke -> its diagnostics"])
    other_ratio = statistics.median(now[f"{findings} findings: other document's keystroke"]) / \
        statistics.median(now["0 findings: other document's keystroke"])
    print(f"  now, ratio with/without findings: {ratio:.2f}x (own document), {other_ratio:.2f}x (other document); "
          f"target <= 2x")
    return 0 if ratio <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
