#!/usr/bin/env python3
"""Run the multi-file fixtures of tests/fixtures/workspace under MindSpore in GRAPH_MODE and PYNATIVE_MODE and
record what happens into tests/fixtures/workspace/labels.json (modelled on scripts/run_probes.py: nothing in the
labels is hand-written; statuses, exception types, messages and the frames come from the runs).

Each fixture is a folder: the package(s), an entry script and ``probe.json`` (hand-written: how to run it, never
what happens):
    {"entry": "run.py", "path": ["."],                 # the script, and the folders put on sys.path (src layout)
     "states": {"after": {"pkg/base.py": "edits/base.py"}},   # further states: files replaced before the run
     "skip": ["edits"],                                 # folders that are no part of the package
     "entries": {"eval": "eval.py"}}                    # further states: another entry script run on the same files
The fixture is copied to a temporary folder per state, so a run never writes into the tree (no __pycache__).
The child sets the mode with ``mindspore.set_context(mode=...)`` and runs the entry unchanged (``runpy``): an entry
that calls ``set_context(mode=...)`` itself runs in its own mode in both runs (the fixtures of the mode set in the
entry script).

Usage:
    python3 scripts/run_workspace_probes.py --python /work/msvenv/bin/python            # all -> labels.json
    python3 scripts/run_workspace_probes.py --python ... package_base module_cycle      # only these (merged)
"""
import argparse
import concurrent.futures as cf
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "workspace")
LABELS = os.path.join(FIXTURES, "labels.json")
MODES = ("GRAPH", "PYNATIVE")

CHILD = r'''
import json, os, runpy, sys, traceback
mode, entry, here = sys.argv[1], sys.argv[2], os.getcwd()
import mindspore as ms
ms.set_context(mode=ms.GRAPH_MODE if mode == "GRAPH" else ms.PYNATIVE_MODE)
result = {"status": "ok"}
try:
    runpy.run_path(entry, run_name="__main__")
except BaseException as exc:
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(f.filename).startswith(here + os.sep)]
    lines = [l for l in str(exc).splitlines() if l.strip()]
    result = {"status": "error", "exc_type": type(exc).__name__,
              "message": (lines[0] if lines else "").replace(here + os.sep, ""),
              "frame": (f"{os.path.relpath(os.path.abspath(frames[-1].filename), here)}:{frames[-1].lineno}" if frames else None)}
sys.stdout.flush()
print("\n@@RESULT@@" + json.dumps(result))
'''


def fixtures() -> list[str]:
    return sorted(d for d in os.listdir(FIXTURES) if os.path.isfile(os.path.join(FIXTURES, d, "probe.json")))


def run_state(python: str, name: str, state: str, mode: str, timeout: int) -> dict:
    src = os.path.join(FIXTURES, name)
    with open(os.path.join(src, "probe.json"), encoding="utf-8") as f:
        meta = json.load(f)
    with tempfile.TemporaryDirectory(prefix=f"wsprobe_{name}_") as tmp:
        work = os.path.join(tmp, name)
        shutil.copytree(src, work)
        for target, replacement in meta.get("states", {}).get(state, {}).items():
            shutil.copyfile(os.path.join(src, replacement), os.path.join(work, target))
        entry = meta.get("entries", {}).get(state, meta["entry"])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(os.path.join(work, p) for p in meta.get("path", ["."]))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.setdefault("GLOG_v", "3")
        started = time.time()
        try:
            proc = subprocess.run([python, "-c", CHILD, mode, entry], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "timeout"}
        out = proc.stdout
        k = out.rfind("@@RESULT@@")
        if k < 0:
            return {"status": "crashed", "returncode": proc.returncode, "stderr_tail": proc.stderr[-400:]}
        result = json.loads(out[k + len("@@RESULT@@"):].strip().splitlines()[0])
        g = out.rfind("grads:", 0, k)
        if g >= 0:
            result["grads_printed"] = " ".join(out[g:k].split())[:400]
        result["seconds"] = round(time.time() - started, 1)
        return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--python", default=os.environ.get("ORACLE_PYTHON", sys.executable))
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    names = args.names or fixtures()
    runs = []
    for name in names:
        with open(os.path.join(FIXTURES, name, "probe.json"), encoding="utf-8") as f:
            meta = json.load(f)
        for state in ("initial", *meta.get("states", {}), *meta.get("entries", {})):
            for mode in MODES:
                runs.append((name, state, mode))
    results: dict = {}
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_state, args.python, *r, args.timeout): r for r in runs}
        for fut in cf.as_completed(futures):
            name, state, mode = futures[fut]
            results.setdefault(name, {}).setdefault(state, {})[mode] = fut.result()
            print(f"{name} [{state}] {mode}: {results[name][state][mode].get('status')}", file=sys.stderr)
    doc = {"cases": {}}
    if os.path.exists(LABELS):
        with open(LABELS, encoding="utf-8") as f:
            doc = json.load(f)
    versions = subprocess.run([args.python, "-c", "import mindspore, numpy, platform; "
                               "print(mindspore.__version__, numpy.__version__, platform.python_version())"],
                              capture_output=True, text=True).stdout.split()
    doc.update({"generated_by": "scripts/run_workspace_probes.py",
                "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "mindspore": versions[0] if versions else None, "numpy": versions[1] if len(versions) > 1 else None,
                "python": versions[2] if len(versions) > 2 else None, "host": platform.machine(),
                "modes": list(MODES)})
    for name, states in results.items():
        entry = {}
        for state, modes in states.items():
            broken = [m for m in MODES if modes.get(m, {}).get("status") == "error"]
            ok = [m for m in MODES if modes.get(m, {}).get("status") == "ok"]
            observed = "broken" if len(broken) == 2 else "valid" if len(ok) == 2 else \
                "modes_disagree" if broken and ok else "unknown"
            entry[state] = {"observed": observed, **{m: modes.get(m) for m in MODES}}
        doc["cases"][name] = entry
    doc["cases"] = dict(sorted(doc["cases"].items()))
    with open(LABELS, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
