#!/usr/bin/env python3
"""Benchmark ``bprop-lsp check`` against the targets of issue 10, with runs paired and repeated in one process.

    python3 scripts/bench_cli.py                       # T1 and T2 on generated trees (see --help for sizes)
    python3 scripts/bench_cli.py --only t2 --repeat 7
    python3 scripts/bench_cli.py --corpus DIR          # T1's measurements over an existing tree instead
    python3 scripts/bench_cli.py --before OLD/server     # and another checkout's code in the same paired runs

T1  ``bprop-lsp check`` over a tree where every file contains ``bprop`` (realistic model files from
    gen_corpus.py): wall time <= 1x reading + ``ast.parse`` of every file, serially, in one process.
T2  ``bprop-lsp check`` over a tree where 1 % of the files contain ``bprop`` (2,000 files):
    wall time <= 0.5x ``ruff check --select E9 --no-cache`` of the same tree.

Every ``bprop-lsp check`` run is a subprocess (interpreter start-up, imports, walk, pool and output included),
the command a user types: ``bprop-lsp check [-j N] --no-color --no-cache PATH`` (every run analyses: the result
cache is ``bench_cache.py``'s) with the default output (full), stdout to /dev/null. The pass/fail verdict is on
the default ``-j`` (one worker per idle CPU); ``-j 1`` and ``-j <cpus>`` are shown beside it. In each
repetition the baseline and every command run back to back, in a rotating order; the ratios are medians of the
per-repetition ratios (absolute times move 1.5-3x with machine load, ratios measured side by side much less).

ruff is a benchmark-only dependency (``pip install -e '.[bench]'`` or ``pip install ruff``); without it T2 is
reported as SKIPPED, loudly.

Corpus generator: /work/shared/perf/gen_corpus.py (or $BPROP_GEN_CORPUS, or --generator); without it a
built-in template (simpler files) is used and the report says so.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_GENERATOR = os.environ.get("BPROP_GEN_CORPUS", "/work/shared/perf/gen_corpus.py")

# ---------------------------------------------------------------------------------------------- corpora

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


def _template_file(lines: int, seed: int, with_bprop: bool) -> str:
    chunk = ORDINARY.count("\n")
    parts = [ORDINARY.format(i=seed * 1000 + j) for j in range(max(1, lines // chunk))]
    if with_bprop:
        parts.insert(len(parts) // 2, CELL.format(i=seed, extra="" if seed % 2 else ", dout"))
    return "".join(parts)


def _load_generator(path: str | None):
    if not path or not os.path.isfile(path):
        return None
    spec = importlib.util.spec_from_file_location("_gen_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate


def make_tree(root: Path, files: int, min_lines: int, max_lines: int, bprop_share: float, generate, seed: int) -> list[Path]:
    """``files`` files of ``min_lines``-``max_lines`` lines; ``bprop_share`` of them (at least one) contain bprop."""
    r = random.Random(seed)
    with_bprop = set(r.sample(range(files), max(1, round(files * bprop_share))))
    paths = []
    for f in range(files):
        lines = r.randint(min_lines, max_lines)
        if generate is not None:
            text = generate(lines, seed=seed * 100_000 + f)
            if f not in with_bprop:
                text = text.replace("bprop", "bwd")  # the same code, minus every custom bprop
        else:
            text = _template_file(lines, f, f in with_bprop)
        p = root / f"pkg{f // 50}" / f"mod_{f}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return paths


# ---------------------------------------------------------------------------------------------- timing

def time_ast(paths) -> float:
    t = time.perf_counter()
    for p in paths:
        ast.parse(p.read_bytes())
    return time.perf_counter() - t


def run_timed(cmd: list[str], env=None) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env)
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def bprop_cmd(root: Path, jobs: str | None, no_cache: bool = True) -> list[str]:
    # --no-cache: every run analyses (as ruff's --no-cache); a cached run is scripts/bench_cache.py's to measure.
    return [sys.executable, "-m", "bprop_lsp", "check", *(["-j", jobs] if jobs else []), "--no-color",
            *(["--no-cache"] if no_cache else []), str(root)]


def knows_no_cache(env) -> bool:
    """Whether the code run with ``env`` has ``--no-cache`` (code from before the result cache has none)."""
    proc = subprocess.run([sys.executable, "-m", "bprop_lsp", "check", "--help"], capture_output=True, text=True,
                          env=env, check=False)
    return "--no-cache" in proc.stdout


def check_commands(root: Path, cpus: int, env, before_env) -> dict[str, tuple[list[str], dict | None]]:
    commands = {}
    for prefix, e in (("", env), ("before: ", before_env)):
        if prefix and before_env is None:
            continue
        no_cache = knows_no_cache(e)
        commands[f"{prefix}bprop-lsp check (default -j)"] = (bprop_cmd(root, None, no_cache), e)
        commands[f"{prefix}bprop-lsp check -j 1"] = (bprop_cmd(root, "1", no_cache), e)
        commands[f"{prefix}bprop-lsp check -j {cpus}"] = (bprop_cmd(root, str(cpus), no_cache), e)
    return commands


def find_ruff() -> list[str] | None:
    here = Path(sys.executable).parent / "ruff"
    if here.is_file():
        return [str(here)]
    found = shutil.which("ruff")
    return [found] if found else None


def measure(name: str, root: Path, baseline_name: str, baseline, commands: dict[str, tuple[list[str], dict | None]],
            repeat: int) -> dict:
    """Per repetition: the baseline and each command back to back (rotating order); median times and ratios."""
    times: dict[str, list[float]] = {baseline_name: [], **{k: [] for k in commands}}
    ratios: dict[str, list[float]] = {k: [] for k in commands}
    order = [baseline_name, *commands]
    baseline()  # warm the page cache and the baseline's own imports
    for cmd, env in commands.values():
        run_timed(cmd, env)
    for rep in range(repeat):
        k = rep % len(order)
        this = {}
        for label in order[k:] + order[:k]:
            this[label] = baseline() if label == baseline_name else run_timed(*commands[label])
        for label, value in this.items():
            times[label].append(value)
        for label in commands:
            ratios[label].append(this[label] / this[baseline_name])
    return {"times": times, "ratios": ratios}


def report(title: str, result: dict, baseline_name: str, verdict_row: str, limit: float) -> bool:
    print(title)
    times, ratios = result["times"], result["ratios"]
    for label, values in times.items():
        m = statistics.median(values)
        if label == baseline_name:
            print(f"  {label:44} {m * 1000:9.0f} ms  (median; min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})")
        else:
            r = statistics.median(ratios[label])
            print(f"  {label:44} {m * 1000:9.0f} ms  {r:6.2f}x (median of paired ratios: "
                  f"{', '.join(f'{x:.2f}' for x in ratios[label])})")
    ok = statistics.median(ratios[verdict_row]) <= limit
    print(f"  => {verdict_row}: {statistics.median(ratios[verdict_row]):.2f}x, target <= {limit}x: "
          f"{'PASS' if ok else 'FAIL'}")
    return ok


def breakdown(paths: list[Path], repeat: int) -> None:
    """Where the engine's time goes for the files with a custom bprop, in this process, against ``ast.parse``.

    Each step runs over all files in its own loop (after a full collection), so that no step pays for garbage
    collections of another step's trees. Uses engine internals (ParsedDocument.parse, partial.masked_text,
    pipeline.analyze_module and parse_errors): a measurement, not an API.
    """
    import gc

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from bprop_lsp.checker import RULES, analyze
    from bprop_lsp.engine import Settings
    from bprop_lsp.engine import pipeline as engine_analysis
    from bprop_lsp.engine import partial
    from bprop_lsp.engine.parsing import ParsedDocument

    def parse(text):
        return ParsedDocument().parse(text)

    texts = [p.read_bytes().decode("utf-8") for p in paths]
    texts = [t for t in texts if "bprop" in t]
    masked = [partial.masked_text(t) for t in texts]
    settings = Settings()
    from bprop_lsp.cli.jobs import _compiles
    analyze("class C:\n    def bprop(self, x, out, dout):\n        return (dout,)\n", settings)

    def parsed():
        return [parse(t) for t in texts]

    steps = {
        "ast.parse": lambda: [ast.parse(t) for t in texts],
        "parso parse": parsed,
        "parso syntax errors": None,
        "rules (no syntax errors, no fix checks)": None,
        "analyze(verify_fixes=False)": lambda: [analyze(t, settings, verify_fixes=False) for t in texts],
        "analyze() (full parse)": lambda: [analyze(t, settings) for t in texts],
        "CPython compile check (check's _compiles)": lambda: [_compiles(t) for t in texts],
        "split + relevance (partial.masked_text)": lambda: [partial.masked_text(t) for t in texts],
        "parso parse of the masked texts": lambda: [ParsedDocument().parse_clean(m or t)
                                                    for t, m in zip(texts, masked)],
        "analyze(compiles=True) (what check runs)": lambda: [analyze(t, settings, with_syntax_errors=False,
                                                                     compiles=True) for t in texts],
    }
    totals: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(repeat):
        for name, step in steps.items():
            if step is None:
                modules = parsed()
                gc.collect()
                t = time.perf_counter()
                if name == "parso syntax errors":
                    for m in modules:
                        engine_analysis.parse_errors(m)
                else:
                    for m, text in zip(modules, texts):
                        engine_analysis.analyze_module(m, text, settings, with_syntax_errors=False, rules=RULES)
                totals[name].append(time.perf_counter() - t)
                del modules
                continue
            gc.collect()
            t = time.perf_counter()
            out = step()
            totals[name].append(time.perf_counter() - t)
            del out
    lines = sum(t.count("\n") for t in texts)
    base = statistics.median(totals["ast.parse"])
    commented = sum(a != b for t, m in zip(texts, masked) if m for a, b in zip(t.split("\n"), m.split("\n")))
    print(f"\nengine breakdown: {len(texts)} files with bprop, {lines} lines ({commented} code lines masked), "
          f"one process, median of {repeat}")
    for name in steps:
        m = statistics.median(totals[name])
        print(f"  {name:44} {m * 1000:8.0f} ms {m / base:6.2f}x ast.parse {m / len(texts) * 1000:8.1f} ms/file")
    full = statistics.median(totals["analyze() (full parse)"])
    nofix = statistics.median(totals["analyze(verify_fixes=False)"])
    print(f"  {'fix checks (the difference)':44} {(full - nofix) * 1000:8.0f} ms {(full - nofix) / base:6.2f}x ast.parse")


def byte_compile(folder: str) -> None:
    """Write the ``.pyc`` files of the code under test, as ``pip install`` does and as any run does once (unless
    PYTHONDONTWRITEBYTECODE is set, as on some CI machines): without them every run compiles the package afresh
    (~150 ms per process, more than ``ast.parse`` of T1's whole corpus), so the first-ever run would be measured
    instead of the runs a user makes."""
    import compileall

    compileall.compile_dir(folder, quiet=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("t1", "t2"), help="run one of the two targets")
    ap.add_argument("--repeat", type=int, default=5, help="paired repetitions (default 5)")
    ap.add_argument("--t1-files", type=int, default=24)
    ap.add_argument("--t1-lines", type=int, nargs=2, default=(300, 1500), metavar=("MIN", "MAX"))
    ap.add_argument("--t2-files", type=int, default=2000)
    ap.add_argument("--t2-lines", type=int, nargs=2, default=(100, 600), metavar=("MIN", "MAX"))
    ap.add_argument("--t2-bprop", type=float, default=1.0, help="percent of T2's files with a custom bprop (1)")
    ap.add_argument("--corpus", metavar="DIR", help="run T1's measurements over this tree instead of a generated one")
    ap.add_argument("--generator", default=DEFAULT_GENERATOR, help=f"gen_corpus.py (default {DEFAULT_GENERATOR})")
    ap.add_argument("--pythonpath", metavar="DIR", help="put DIR first on PYTHONPATH of the bprop-lsp runs "
                                                         "(another checkout's server/ folder: before/after)")
    ap.add_argument("--before", metavar="DIR", help="also time another checkout's server/ folder in the same paired "
                                                     "runs (rows marked 'before:')")
    ap.add_argument("--keep", metavar="DIR", help="write the generated trees here and keep them")
    ap.add_argument("--breakdown", action="store_true", help="also time the engine's steps in-process on T1's files "
                                                             "(parse, syntax errors, rules, fix checks)")
    a = ap.parse_args()

    env = None
    if a.pythonpath:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [a.pythonpath, os.environ.get("PYTHONPATH")])))
    before_env = None
    if a.before:
        before_env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [a.before, os.environ.get("PYTHONPATH")])))
    generate = _load_generator(a.generator)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    code_at = a.pythonpath or str(Path(__file__).resolve().parents[1] / "server")
    for folder in filter(None, [code_at, a.before]):
        byte_compile(folder)
    print(f"bprop-lsp from {code_at}; python {sys.version.split()[0]}; {cpus} CPUs, load average {load:.2f}; "
          f"{a.repeat} paired repetitions")
    if generate is None:
        print(f"NOTE: {a.generator} not found: built-in template files (less realistic than gen_corpus.py)")
    results = []
    tmp = tempfile.TemporaryDirectory()
    base = Path(a.keep) if a.keep else Path(tmp.name)
    try:
        if a.only in (None, "t1"):
            if a.corpus:
                root = Path(a.corpus)
                paths = sorted(root.rglob("*.py"))
            else:
                root = base / "t1"
                paths = make_tree(root, a.t1_files, *a.t1_lines, 1.0, generate, seed=1)
            with_bprop = sum(1 for p in paths if b"bprop" in p.read_bytes())
            lines = sum(p.read_bytes().count(b"\n") for p in paths)
            commands = check_commands(root, cpus, env, before_env)
            res = measure("T1", root, "read + ast.parse, serial, in-process", lambda: time_ast(paths), commands,
                          a.repeat)
            results.append(report(f"\nT1: {len(paths)} files, {lines} lines, {with_bprop} containing 'bprop'", res,
                                  "read + ast.parse, serial, in-process", "bprop-lsp check (default -j)", 1.0))
            if a.breakdown:
                breakdown(paths, max(1, min(a.repeat, 3)))
        if a.only in (None, "t2"):
            root = base / "t2"
            paths = make_tree(root, a.t2_files, *a.t2_lines, a.t2_bprop / 100, generate, seed=2)
            with_bprop = sum(1 for p in paths if b"bprop" in p.read_bytes())
            lines = sum(p.read_bytes().count(b"\n") for p in paths)
            title = f"\nT2: {len(paths)} files, {lines} lines, {with_bprop} containing 'bprop'"
            ruff = find_ruff()
            if ruff is None:
                print(f"{title}\n  SKIPPED: ruff is not installed (pip install ruff, or pip install -e '.[bench]'); "
                      "T2 is measured against ruff and cannot be judged without it")
                results.append(None)
            else:
                ruff_cmd = [*ruff, "check", "--select", "E9", "--no-cache", "--quiet", str(root)]
                version = subprocess.run([*ruff, "--version"], capture_output=True, text=True).stdout.strip()
                commands = check_commands(root, cpus, env, before_env)
                res = measure("T2", root, f"{version} check --select E9 --no-cache", lambda: run_timed(ruff_cmd),
                              commands, a.repeat)
                results.append(report(title, res, f"{version} check --select E9 --no-cache",
                                      "bprop-lsp check (default -j)", 0.5))
    finally:
        tmp.cleanup()
    names = [n for n in ("T1", "T2") if a.only in (None, n.lower())]
    print("\nsummary: " + ", ".join(f"{n} {'SKIPPED' if r is None else 'PASS' if r else 'FAIL'}"
                                    for n, r in zip(names, results)))
    return 0 if all(r is not False for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
