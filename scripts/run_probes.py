#!/usr/bin/env python3
"""Run the labelled probe programs of tests/fixtures/probes/cases under MindSpore in GRAPH_MODE and
PYNATIVE_MODE and record what actually happens into tests/fixtures/probes/labels.json.

The oracle's own runner (tests/fixtures/oracle/run_oracle.py: same child bootstrap, same label schema) pointed at
the probe folder; nothing in labels.json is hand-written. Needs a Python with mindspore==2.10.0 and numpy<2
(--python or ORACLE_PYTHON).

Usage:
    python3 scripts/run_probes.py --python /path/to/msvenv/bin/python            # all probes -> labels.json
    python3 scripts/run_probes.py --python ... tests/fixtures/probes/cases/p01_x.py  # only these (merged in)
    python3 scripts/run_probes.py --python ... --timeout 120 --jobs 2
"""
import importlib.util
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBES = os.path.join(ROOT, "tests", "fixtures", "probes")
RUNNER = os.path.join(ROOT, "tests", "fixtures", "oracle", "run_oracle.py")


def main() -> None:
    spec = importlib.util.spec_from_file_location("run_oracle", RUNNER)
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    # Label paths are relative to the runner's HERE; its children run the runner file itself (--child).
    runner.HERE = PROBES
    runner.CASES_DIR = os.path.join(PROBES, "cases")
    runner.LABELS = os.path.join(PROBES, "labels.json")
    argv = sys.argv[1:]
    if not any(a == "--logdir" or a.startswith("--logdir=") for a in argv):
        argv = ["--logdir", os.path.join(tempfile.gettempdir(), "probe_logs")] + argv
    sys.argv = [RUNNER] + argv
    runner.main()
    out = runner.LABELS
    for i, a in enumerate(argv):
        if a == "--out" and i + 1 < len(argv):
            out = argv[i + 1]
        elif a.startswith("--out="):
            out = a.split("=", 1)[1]
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        doc["generated_by"] = "scripts/run_probes.py"
        with open(out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
