#!/usr/bin/env python3
"""Apply every fix bprop-lsp offers to the oracle cases and run the fixed programs under real MindSpore.

    python3 scripts/verify_fixes_mindspore.py --python /path/to/venv-with-mindspore/bin/python \
        [--oracle tests/fixtures/oracle] [--out /tmp/fixed-oracle]

Needs a Python with ``mindspore==2.10.0`` and ``numpy<2`` (a separate venv, ~800 MB:
``python3 -m venv /tmp/ms && /tmp/ms/bin/pip install mindspore==2.10.0 "numpy<2"``) and the oracle's
``run_oracle.py`` (the repository's copy is tests/fixtures/oracle/run_oracle.py). It is a release check, not part of the test suite (MindSpore is not a test
dependency). Prints one line per fixed case: the rule, and the status in GRAPH_MODE and PYNATIVE_MODE.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from bprop_lsp.checker import analyze, fix_all  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True, help="a Python with mindspore 2.10 installed")
    ap.add_argument("--oracle", default=str(Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "oracle"))
    ap.add_argument("--out", default="/tmp/bprop-lsp-fixed-oracle")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    oracle = Path(a.oracle).resolve()
    labels = {c["file"]: c for c in json.loads((oracle / "labels.json").read_text(encoding="utf-8"))["cases"]}
    out = Path(a.out)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    fixed_cases = []
    for rel, case in sorted(labels.items()):
        text = (oracle / rel).read_bytes().decode("utf-8")
        if not any(f.fix for f in analyze(text).findings):
            continue
        new, count = fix_all(text, include_unsafe=True)
        target = out / rel
        target.write_bytes(new.encode("utf-8"))
        remaining = [f.code for f in analyze(new).findings if f.code == case["rule"]]
        fixed_cases.append((rel, case["rule"], count, remaining))
    # run_oracle.py writes its labels next to --out and executes each case under both modes.
    # (A probe folder has no runner of its own: the oracle's, which the probes' labels come from, runs them.)
    runner = oracle / "run_oracle.py"
    if not runner.exists():
        runner = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "oracle" / "run_oracle.py"
    cmd = [sys.executable, str(runner), "--python", a.python, "--jobs", str(a.jobs),
           "--out", str(out / "labels.json")] + [str(out / rel) for rel, *_ in fixed_cases]
    subprocess.run(cmd, check=False, cwd=out)
    results = {c["file"]: c for c in json.loads((out / "labels.json").read_text(encoding="utf-8"))["cases"]}
    ok = 0
    for rel, rule, count, remaining in fixed_cases:
        r = results.get(rel) or next((v for k, v in results.items() if k.endswith(Path(rel).name)), None)
        g = r["GRAPH"]["status"] if r else "?"
        p = r["PYNATIVE"]["status"] if r else "?"
        good = g == "ok" and p == "ok" and not remaining
        ok += good
        print(f"{Path(rel).name:55} {rule}  fixes={count}  GRAPH={g:6} PYNATIVE={p:6} "
              f"{'recheck-clean' if not remaining else 'STILL ' + ','.join(remaining)}")
    print(f"{ok}/{len(fixed_cases)} fixed cases run clean in both modes")
    return 0 if ok == len(fixed_cases) else 1


if __name__ == "__main__":
    sys.exit(main())
