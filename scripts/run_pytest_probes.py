#!/usr/bin/env python3
"""Run the pytest-style probe modules of tests/fixtures/pytest_probes/cases under MindSpore with pytest and record
what happened to each test into tests/fixtures/pytest_probes/labels.json.

These probes are about what pytest runs around the tests (``setup_module`` and the like), which a plain
``python file.py`` run (scripts/run_probes.py) never executes. Nothing in labels.json is hand-written.

    python3 scripts/run_pytest_probes.py --python /path/to/msvenv/bin/python   # needs mindspore 2.10 and pytest
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBES = ROOT / "tests" / "fixtures" / "pytest_probes"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True, help="a Python with mindspore==2.10.0 and pytest")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    version = subprocess.run([a.python, "-c", "import mindspore; print(mindspore.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    cases = []
    for path in sorted((PROBES / "cases").glob("test_*.py")):
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "report.xml"
            run = subprocess.run([a.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                                  str(path)], capture_output=True, text=True, timeout=a.timeout, cwd=tmp)
            xml = report.read_text(encoding="utf-8") if report.exists() else ""
        tests = []
        for name, body in re.findall(r'<testcase [^>]*name="([^"]+)"[^>]*?(?:/>|>(.*?)</testcase>)', xml, re.S):
            failure = re.search(r'<(failure|error) message="([^"]*)"', body or "")
            tests.append({"test": name, "status": "error" if failure else "ok",
                          "message": failure.group(2)[:300] if failure else None})
        cases.append({"file": f"cases/{path.name}", "exit_code": run.returncode, "tests": tests})
        print(path.name, [(t["test"], t["status"]) for t in tests])
    labels = {"generated_by": "scripts/run_pytest_probes.py", "mindspore": version,
              "python": subprocess.run([a.python, "-c", "import platform; print(platform.python_version())"],
                                       capture_output=True, text=True).stdout.strip(), "cases": cases}
    (PROBES / "labels.json").write_text(json.dumps(labels, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
